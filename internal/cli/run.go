package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/renameio/v2"

	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/stage"
	"github.com/databrew/databrew-stage/verdict"
)

const runUsage = `Usage: databrew-stage run [flags] CONFIG...

Runs each config once, in order, under one deadline. Every run ends with a
verdict: a stop (why it ended) and an outcome (success, partial, failed).
A human summary line per config goes to stderr; with --json, one verdict
object per config goes to stdout as JSON Lines (the last line is the last
config's). Each run that started writes .last_run.json in its storage path.

A damaged state file fails the run (stop error, the detail names the file);
so does a missing or empty one when the output already holds published
runs. 'databrew-stage state repair CONFIG' salvages a damaged file;
--reset-state starts over instead: the file is kept aside as
state.db.broken-<time>, the traversal starts over, and every item is
exported again as new.

--deadline bounds the crawl: at that time the config being crawled stops
(stop interrupted, "Deadline reached", its queue saved) and the export of
what it stored follows, with --export-timeout more to finish; configs not
started by then fail with "Not started". SIGINT or SIGTERM stops the crawl
and an export not yet recorded alike (its items stay pending); a second
signal exits at once.

Shards: --shard I/N (or --shards N with JOB_COMPLETION_INDEX) --run-id ID
runs one of N shards of a logical run, which 'databrew-stage commit'
publishes once every shard passed (see docs/shards.md). A shard reports
as a shard: its metrics carry a shard label, its OpenLineage events (START,
then RUNNING) the logical run's id and its shard, and under Dagster Pipes
it reports its verdict in a custom message, not on the asset; the commit
reports the logical run (see 'databrew-stage commit --help').

Exit codes: 0 every run succeeded or was partial; 1 a run failed, or its
export failed with an error (export.failed in the verdict; see
--fail-when); 2 usage or config error, nothing ran; N with
--exit-unproductive N when every run succeeded and none stored anything new.`

// storeTimeoutUsage explains --store-timeout, of run and commit.
const storeTimeoutUsage = "each request to an object-storage output must end within this time, or the export fails naming the endpoint (the next run reconciles)"

type runFlags struct {
	maxRequests      int
	deadline         string
	exportTimeout    time.Duration
	storeTimeout     time.Duration
	failWhen         string
	json             bool
	verdictFile      string
	metricsFile      string
	exitUnproductive int
	logFormat        string
	logLevel         string
	progress         string
	resetState       bool
	partitionDate    string
	xcomFile         string
	lineage          lineageSetup
	shard            shardFlags
}

func runCmd(args []string, env Env) int {
	f := runFlags{lineage: lineageSetup{cmd: "run"}}
	fs := newFlags("run", runUsage, env)
	fs.IntVarP(&f.maxRequests, "max-requests", "n", 0, "request budget per config, overriding [policy].max_requests (0: the config's)")
	fs.StringVar(&f.deadline, "deadline", "", "stop the crawl of all configs at this time: a duration (45m) or an RFC 3339 time; configs not started by then fail with \"Not started\"; the export of what a crawl stored follows (see --export-timeout)")
	fs.DurationVar(&f.exportTimeout, "export-timeout", stage.DefaultExportTimeout, "with --deadline, the time the export of what a config's crawl stored may take after the deadline (or after the crawl, if it ended later); an export not recorded by then is abandoned, its items stay pending")
	fs.DurationVar(&f.storeTimeout, "store-timeout", objstore.DefaultCallTimeout, storeTimeoutUsage)
	fs.StringVar(&f.failWhen, "fail-when", FailWhenAny, "exit 1 when any run failed, when all failed, or never")
	fs.BoolVar(&f.json, "json", false, "print one verdict object per config on stdout (JSON Lines)")
	fs.StringVar(&f.verdictFile, "verdict-file", "", "also write the verdicts (JSON Lines) to this file, atomically")
	fs.StringVar(&f.metricsFile, "metrics-file", "", "also write the verdicts as Prometheus metrics to this node-exporter textfile (*.prom), atomically")
	fs.IntVar(&f.exitUnproductive, "exit-unproductive", 0, "exit with this code when every run succeeded and none was productive (e.g. 99 for Airflow's skip)")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	fs.StringVar(&f.progress, "progress", "auto", "progress display on stderr: auto (when stderr is a terminal), always or never")
	fs.StringVar(&f.lineage.file, "lineage-file", "", "append OpenLineage events (START, then COMPLETE or FAIL; a shard's START, then RUNNING) to this file as JSON Lines; OPENLINEAGE_URL also posts them to a server")
	fs.BoolVar(&f.resetState, "reset-state", false, "when the state file is damaged, or missing or empty next to published runs, start over: every item is exported again as new")
	fs.StringVar(&f.partitionDate, "partition-date", "", "publish into the dt=YYYY-MM-DD partition of this date instead of the run's start day (an orchestrator's logical date, e.g. Airflow's {{ ds }})")
	fs.StringVar(&f.xcomFile, "xcom-file", "", "also write the verdict as one JSON value to this file, atomically, whatever the runs came to (not on a usage error: nothing ran) (e.g. /airflow/xcom/return.json): the object with one config, an array with several")
	fs.StringVar(&f.shard.shard, "shard", "", "run shard I of N (I from 0) of a logical run: it fetches only its share of the item pages, keeps its state in <storage>/shard-I-of-N, waits N times the configured delay, and stages its export for 'databrew-stage commit'")
	fs.IntVar(&f.shard.shards, "shards", 0, "run one of N shards, its index taken from "+JobCompletionIndexEnv+" (as a Kubernetes Indexed Job sets it)")
	fs.StringVar(&f.shard.runID, "run-id", "", "the logical run's id, the same for every shard and the commit (e.g. Airflow's {{ ts_nodash }}); letters, digits, '.', '_', '-'")
	if code, done := parseFlags(fs, args, env); done {
		return code
	}
	if fs.NArg() == 0 {
		return usageError(env, "run", "at least one CONFIG is required")
	}
	shard, err := f.shard.parse(env.Getenv)
	if err != nil {
		return usageError(env, "run", "%v", err)
	}
	if shard != nil && fs.NArg() > 1 {
		return usageError(env, "run", "a shard runs one CONFIG, not %d", fs.NArg())
	}
	if err := checkFailWhen(f.failWhen); err != nil {
		return usageError(env, "run", "%v", err)
	}
	if f.maxRequests < 0 {
		return usageError(env, "run", "--max-requests must not be negative")
	}
	if f.exitUnproductive < 0 || f.exitUnproductive > 255 || f.exitUnproductive == ExitFailed || f.exitUnproductive == ExitUsage {
		return usageError(env, "run", "--exit-unproductive must be 3-255 (1 and 2 mean a failed run and a usage error)")
	}
	partitionDate, err := parsePartitionDate(f.partitionDate)
	if err != nil {
		return usageError(env, "run", "%v", err)
	}
	logger, err := newLogger(env.Stderr, f.logFormat, f.logLevel)
	if err != nil {
		return usageError(env, "run", "%v", err)
	}
	progress, err := newProgress(f.progress, env.Stderr)
	if err != nil {
		return usageError(env, "run", "%v", err)
	}
	var deadline time.Time
	if f.deadline != "" {
		if deadline, err = parseDeadline(f.deadline, time.Now()); err != nil {
			return usageError(env, "run", "%v", err)
		}
	}
	if f.exportTimeout <= 0 {
		return usageError(env, "run", "--export-timeout must be positive")
	}
	if f.storeTimeout <= 0 {
		return usageError(env, "run", "--store-timeout must be positive")
	}
	cfgs, ok := loadConfigs(fs.Args(), env, true)
	if !ok {
		return ExitUsage
	}
	if !f.resetState {
		stage.AdviseHeap(cfgs...)
	}
	pipes, err := openPipes(env)
	if err != nil {
		return usageError(env, "run", "%v", err)
	}
	if pipes != nil {
		logger = slog.New(&pipesHandler{next: logger.Handler(), s: pipes})
		if partitionDate.IsZero() {
			partitionDate = pipesPartitionDate(pipes)
		}
		defer func() {
			if err := pipes.Close(); err != nil {
				fmt.Fprintf(env.Stderr, "databrew-stage run: %v\n", err)
			}
		}()
	}
	// The signals stop everything; the deadline, each config's crawl.
	ctx, stopSignals := withSignals(context.Background(), env.Stderr)
	defer stopSignals()

	var reports []verdict.RunReport
	var lines bytes.Buffer
	for _, cfg := range cfgs {
		opts := stage.Options{MaxRequests: f.maxRequests, Logger: logger.With("config", cfg.Name), ResetState: f.resetState,
			PartitionDate: partitionDate, Shard: shard, Deadline: deadline, ExportTimeout: f.exportTimeout,
			StoreTimeout: f.storeTimeout}
		if env.RunOptions != nil {
			env.RunOptions(&opts)
		}
		lin := f.lineage.start(ctx, env, logger, *cfg, shard)
		opts.Progress = progress.start(cfg.Name)
		rep, err := stage.Run(ctx, *cfg, opts)
		progress.stop()
		if shard != nil && rep.Shard == "" {
			// A shard that did not start (its storage locked) is that
			// shard all the same, in its verdict and in what reports it.
			rep.RunID, rep.Shard = shard.RunID, shard.Name()
		}
		// A run that did not start says why in its summary line.
		if err != nil && rep.Started {
			logger.Error("run error", "config", cfg.Name, "err", err)
		}
		reports = append(reports, rep)
		fmt.Fprintln(env.Stderr, rep.Summary())
		if pipes != nil {
			reportToPipes(pipes, rep, len(cfgs), logger)
		}
		lin.finish(ctx, rep)
		line, err := json.Marshal(rep)
		if err != nil {
			logger.Error("encode verdict", "config", cfg.Name, "err", err)
			continue
		}
		line = append(line, '\n')
		lines.Write(line)
		if f.json {
			_, _ = env.Stdout.Write(line)
		}
	}
	// Every output file is written, whatever became of the others: each
	// one that cannot be written is named, and the run exits 1.
	if !writeOutputs(env, "run", []outputFile{
		{"--verdict-file", f.verdictFile, func(p string) error { return renameio.WriteFile(p, lines.Bytes(), 0o644) }},
		{"--xcom-file", f.xcomFile, func(p string) error { return writeXCom(p, reports) }},
		{"--metrics-file", f.metricsFile, func(p string) error { return writeMetricsFile(p, reports) }},
	}) {
		return ExitFailed
	}
	return exitCode(reports, f.failWhen, f.exitUnproductive)
}

// outputFile is a file a command writes its verdicts to when its flag
// names a path.
type outputFile struct {
	flag, path string
	write      func(path string) error
}

// writeOutputs writes every output file whose flag was given, whatever
// became of the others, names each that cannot be written, and reports
// whether all were written.
func writeOutputs(env Env, cmd string, outputs []outputFile) bool {
	written := true
	for _, o := range outputs {
		if o.path == "" {
			continue
		}
		if err := o.write(o.path); err != nil {
			fmt.Fprintf(env.Stderr, "databrew-stage %s: write %s: %v\n", cmd, o.flag, err)
			written = false
		}
	}
	return written
}
