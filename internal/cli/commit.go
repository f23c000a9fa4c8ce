package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/renameio/v2"

	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/stage"
	"github.com/databrew/databrew-stage/verdict"
)

const commitUsage = `Usage: databrew-stage commit CONFIG --run-id ID --shards N [flags]

Publishes the logical run ID made of N shards ('databrew-stage run CONFIG
--shard I/N --run-id ID'), the fan-in task after them. It reads every
shard's manifest and combines their verdicts: when every shard passed, it
completes every part the shards staged, then writes the run folder's
_manifest.json and _SUCCESS, each only when absent: the run is published
exactly once, and a second commit does nothing and says so. When a shard
failed or is missing, nothing is published: the combined verdict says why
in the output's _verdict.json; run that shard again, then commit.

The combined verdict is printed as a summary line on stderr (and with
--json, as one object on stdout), with each shard's verdict inside.

The commit reports the logical run as 'run' reports a whole run, so what
watches whole runs watches sharded ones too: --metrics-file writes the
same metrics, labelled with the config and no shard (each shard's own run
labels its metrics with its shard); --lineage-file (and OPENLINEAGE_URL)
sends the one OpenLineage COMPLETE, or FAIL when the combined verdict
fails, under the run id the shards' START and RUNNING events carry; under
Dagster Pipes it reports the materialization when the run was published
and the verdict check, as a whole run does. A commit run again (a retried
task) reports the committed run once more; a usage error (exit 2) reports
nothing.

Exit codes: 0 the run is published, was published already, or had
nothing to publish (a partial run under publish_when = "success" too);
1 a shard failed or is missing, or the commit could not be made; 2 usage
or config error, nothing was done.`

func commitCmd(args []string, env Env) int {
	var runID, verdictFile, xcomFile, metricsFile, logFormat, logLevel string
	var shards int
	var asJSON bool
	var storeTimeout time.Duration
	lin := lineageSetup{cmd: "commit"}
	fs := newFlags("commit", commitUsage, env)
	fs.StringVar(&runID, "run-id", "", "the logical run's id, as its shards were given it")
	fs.IntVar(&shards, "shards", 0, "how many shards the logical run has")
	fs.BoolVar(&asJSON, "json", false, "print the combined verdict on stdout as one JSON line")
	fs.StringVar(&verdictFile, "verdict-file", "", "also write the combined verdict (one JSON line) to this file, atomically")
	fs.StringVar(&xcomFile, "xcom-file", "", "also write the combined verdict as one JSON value to this file, atomically (e.g. /airflow/xcom/return.json)")
	fs.StringVar(&metricsFile, "metrics-file", "", "also write the combined verdict as Prometheus metrics to this node-exporter textfile (*.prom), atomically: the metrics of a whole run, without a shard label")
	fs.StringVar(&lin.file, "lineage-file", "", "append the logical run's OpenLineage COMPLETE (or FAIL) event to this file as a JSON line; OPENLINEAGE_URL also posts it to a server")
	fs.StringVar(&logFormat, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	fs.DurationVar(&storeTimeout, "store-timeout", objstore.DefaultCallTimeout, storeTimeoutUsage)
	if code, done := parseFlags(fs, args, env); done {
		return code
	}
	switch {
	case fs.NArg() != 1:
		return usageError(env, "commit", "want one CONFIG, got %d", fs.NArg())
	case storeTimeout <= 0:
		return usageError(env, "commit", "--store-timeout must be positive")
	case shards < 1:
		return usageError(env, "commit", "--shards N is required: the shard count the run's shards were given")
	}
	if err := stage.ValidRunID(runID); err != nil {
		return usageError(env, "commit", "--run-id: %v", err)
	}
	logger, err := newLogger(env.Stderr, logFormat, logLevel)
	if err != nil {
		return usageError(env, "commit", "%v", err)
	}
	cfgs, ok := loadConfigs(fs.Args(), env, false)
	if !ok {
		return ExitUsage
	}
	pipes, err := openPipes(env)
	if err != nil {
		return usageError(env, "commit", "%v", err)
	}
	if pipes != nil {
		logger = slog.New(&pipesHandler{next: logger.Handler(), s: pipes})
		defer func() {
			if err := pipes.Close(); err != nil {
				fmt.Fprintf(env.Stderr, "databrew-stage commit: %v\n", err)
			}
		}()
	}
	ctx, stopSignals := withSignals(context.Background(), env.Stderr)
	defer stopSignals()
	cfg := *cfgs[0]
	opts := stage.CommitOptions{Logger: logger.With("config", cfg.Name), StoreTimeout: storeTimeout}
	if env.CommitOptions != nil {
		env.CommitOptions(&opts)
	}
	r, err := stage.Commit(ctx, cfg, runID, shards, opts)
	code := ExitOK
	switch {
	case errors.Is(err, stage.ErrCommitted):
		fmt.Fprintf(env.Stderr, "databrew-stage commit: %v\n", err)
	case errors.Is(err, stage.ErrShardCount):
		fmt.Fprintf(env.Stderr, "databrew-stage commit: %v\n", err)
		return ExitUsage
	case err != nil:
		fmt.Fprintf(env.Stderr, "databrew-stage commit: %v\n", err)
		code = ExitFailed
	case r.FailsDownstream():
		code = ExitFailed
	}
	fmt.Fprintln(env.Stderr, commitSummary(r, shards, errors.Is(err, stage.ErrCommitted)))
	reported := commitReported(r, runID, err)
	if pipes != nil {
		reportToPipes(pipes, reported, 1, logger)
	}
	lin.commit(ctx, env, logger, cfg, runID, reported)
	line, jerr := json.Marshal(r)
	if jerr != nil {
		fmt.Fprintf(env.Stderr, "databrew-stage commit: encode verdict: %v\n", jerr)
		return ExitFailed
	}
	line = append(line, '\n')
	if asJSON {
		_, _ = env.Stdout.Write(line)
	}
	if !writeOutputs(env, "commit", []outputFile{
		{"--verdict-file", verdictFile, func(p string) error { return renameio.WriteFile(p, line, 0o644) }},
		{"--xcom-file", xcomFile, func(p string) error { return writeXCom(p, []verdict.RunReport{r}) }},
		{"--metrics-file", metricsFile, func(p string) error { return writeMetricsFile(p, []verdict.RunReport{reported}) }},
	}) {
		return ExitFailed
	}
	return code
}

// commitReported is the logical run runID as the commit reports it to
// Pipes, OpenLineage and the metrics: its combined verdict, named by the
// run id also when the output could not be used; but a verdict the commit
// could not make or record (err, not ErrCommitted; the exit code is 1)
// says its export failed, with err as the reason, though every shard
// passed: nothing downstream may build on it, as the exit code says.
func commitReported(r verdict.RunReport, runID string, err error) verdict.RunReport {
	if r.RunID == "" {
		r.RunID = runID
	}
	if err == nil || errors.Is(err, stage.ErrCommitted) || r.FailsDownstream() {
		return r
	}
	r.Export.Failed, r.Export.Reason = true, err.Error()
	return r
}

// commitSummary is the commit's human line: the combined verdict's, and
// what was published; again says the run was committed already, by an
// earlier commit, and this one changed nothing.
func commitSummary(r verdict.RunReport, shards int, again bool) string {
	s := fmt.Sprintf("%s run %s (%d shards): %s (%s) · %d new · %d changed · %d coverage gaps",
		r.Config, r.RunID, shards, r.Outcome, r.Stop, r.Items.New, r.Items.Changed, r.CoverageGaps)
	switch {
	case again && r.Export.Published:
		s += fmt.Sprintf(" · committed already: this commit changed nothing; the run published %d rows in %d files at %s", r.Export.Rows, len(r.Export.Files), r.Export.Path)
	case again:
		s += " · committed already: this commit changed nothing"
	case r.Export.Published:
		s += fmt.Sprintf(" · published %d rows in %d files at %s", r.Export.Rows, len(r.Export.Files), r.Export.Path)
	case r.Export.Reason != "":
		s += " · " + r.Export.Reason
	}
	if r.Detail != "" && r.Outcome != verdict.OutcomeSuccess {
		s += " · " + r.Detail
	}
	return s
}
