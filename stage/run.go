package stage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// ErrLocked matches the error Run returns when another process holds the
// config's storage path.
var ErrLocked = state.ErrLocked

// ErrOutput matches the error Run returns when the config's output cannot
// be used (see objstore.Target.Preflight): the run does not start.
var ErrOutput = errors.New("output unusable")

// ErrNotStarted matches the error Run returns for a config that its
// context ended before it started.
var ErrNotStarted = errors.New("not started")

// Run runs one config once and returns its verdict. The report is always
// filled in; the error is non-nil when the run did not start (ErrNotStarted,
// ErrLocked, ErrCorrupt, ErrNoState) or when its state could not be read or
// written.
//
// ctx is the run's whole life, a signal's context: when it ends, the
// crawl stops (stop interrupted, detail its cause) and an export not yet
// recorded is abandoned (nothing is published; the items stay pending).
// To stop only the crawl at a time and still publish what it stored, give
// Options.Deadline instead: the export then follows with a time limit of
// its own (Options.ExportTimeout), and ctx still stops it.
func Run(ctx context.Context, cfg config.Config, opts Options) (verdict.RunReport, error) {
	clock := clockOf(opts)
	log := opts.Logger
	if log == nil {
		log = discard
	}
	startedAt := clock.Now().UTC()
	// The setup and the crawl end with the deadline; the export has its own.
	crawlCtx, stopCrawl := crawlContext(ctx, opts)
	defer stopCrawl()
	if err := crawlCtx.Err(); err != nil {
		return notStarted(cfg, verdict.NotStarted(cfg.Name, startedAt), fmt.Errorf("%s: %w: %w", cfg.Name, ErrNotStarted, context.Cause(crawlCtx)), log)
	}
	if opts.Shard != nil {
		if err := opts.Shard.Valid(); err != nil {
			return notStarted(cfg, verdict.Locked(cfg.Name, startedAt, err.Error()), err, log)
		}
	}
	storage, err := shardStorage(cfg, opts.Shard)
	if err != nil {
		return notStarted(cfg, verdict.Locked(cfg.Name, startedAt, err.Error()), err, log)
	}
	cfg.Storage = storage
	// The export root first: a bad one fails the run before the state is
	// touched (a state started here while the output could not be listed
	// would not know the runs it holds) and before any request is sent.
	var x *exporter
	var runs int
	if cfg.Iceberg != nil && opts.Shard == nil {
		if x, runs, err = openTableExporter(crawlCtx, cfg, opts, log); err != nil {
			return outputUnusable(cfg, startedAt, err, log)
		}
		defer x.table.Close()
	} else {
		out, err := openRunOutput(crawlCtx, cfg, opts)
		if err != nil {
			return outputUnusable(cfg, startedAt, err, log)
		}
		defer out.Close()
		x = newExporter(cfg, out, opts, log)
		if opts.Shard != nil {
			day, given := startedAt, !opts.PartitionDate.IsZero()
			if given {
				day = opts.PartitionDate
			}
			x.attempt, err = publish.OpenShard(crawlCtx, x.pub, opts.Shard.ref(), day, given, func(ctx context.Context, name string) (publish.Output, error) {
				if name == cfg.Output {
					return openRunOutput(ctx, cfg, opts)
				}
				return openOutput(ctx, name, opts.StoreTimeout, true)
			})
			if err != nil {
				return shardNotStarted(cfg, opts.Shard, startedAt, err, log)
			}
		}
		if runs, err = out.Runs(crawlCtx); err != nil {
			return outputUnusable(cfg, startedAt, fmt.Errorf("list the runs it holds: %w", err), log)
		}
	}
	db, err := openState(cfg, opts, runs, log)
	if errors.Is(err, state.ErrLocked) {
		return notStarted(cfg, verdict.Locked(cfg.Name, startedAt, fmt.Sprintf("storage %s is in use by another process", cfg.Storage)), err, log)
	}
	if err != nil {
		r := verdict.Locked(cfg.Name, startedAt, err.Error())
		r.Export.Reason = "storage could not be opened"
		return notStarted(cfg, r, err, log)
	}
	defer db.Close()

	runTime, err := db.ClaimRunTime(startedAt)
	if err != nil {
		r := verdict.Locked(cfg.Name, startedAt, err.Error())
		r.Export.Reason = "storage could not be written"
		return notStarted(cfg, r, err, log)
	}
	report := verdict.RunReport{
		Config: cfg.Name, RunID: newRunID(runTime), SchemaVersion: verdict.SchemaVersion,
		StartedAt: startedAt, Started: true,
	}
	if opts.Shard != nil {
		report.RunID, report.Shard = opts.Shard.RunID, opts.Shard.Name()
	}
	var res crawl.Result
	var runErr error
	x.useState(db)
	if runErr = x.reconcile(crawlCtx); runErr != nil {
		res = errorResult(fmt.Sprintf("reconcile the export: %v", runErr))
	} else {
		res, runErr = crawlOnce(crawlCtx, cfg, opts, db, report.RunID, clock)
	}
	report.FinishedAt = clock.Now().UTC()
	if errors.Is(runErr, state.ErrCorrupt) {
		// Damage found in the middle of the run: say the way out too.
		res.Detail += "; " + repairHint(cfg)
	}
	fill(&report, res)
	if runErr == nil {
		runErr = tombstone(db, cfg, &report, res)
	}
	// Once the run knows whether it was productive (a removal counts), it
	// records so, and learns its empty-run streak, before the verdict is
	// written anywhere.
	if streak, err := db.RecordRun(report.Productive); err == nil {
		report.EmptyRunStreak = streak
	} else {
		log.Error("record the run", "err", err)
	}
	// The deadline bounds the crawl, not the export of what it stored.
	exportCtx, stopExport := exportContext(ctx, opts, time.Now())
	defer stopExport()
	switch {
	case runErr == nil:
		runErr = finishExport(exportCtx, x, &report, res, log)
	case !report.Export.Failed: // failExport has not said why already
		report.Export = errorExport(runErr)
	}
	if x.tablePub != nil && report.Export.Table == nil {
		// A table output is named whatever the run came to; a publish
		// adds the snapshot it committed.
		report.Export.Table = x.tablePub.Describe()
	}
	b, err := encodeReport(report)
	if err == nil {
		err = writeVerdicts(exportCtx, cfg, x, b)
	}
	if err != nil && opts.Shard != nil && !report.Export.Failed {
		// Without its manifest the commit cannot see the attempt: it
		// must fail, so the orchestrator runs the shard again.
		report.Export = verdict.Export{Failed: true, Files: []string{},
			Reason: fmt.Sprintf("the shard's manifest could not be written, so the commit cannot see this attempt: run the shard again (%v)", err)}
		if b2, encErr := encodeReport(report); encErr == nil {
			b = b2
			_ = writeLastRun(cfg, b)
		}
	}
	notify(cfg, report, b, log)
	return report, errors.Join(runErr, err)
}

// tombstone marks the items a clean traversal did not see as removed,
// when the config asks for it. A removal is a change: the run is
// productive. A state that cannot be written turns the stop into error.
func tombstone(db *state.DB, cfg config.Config, r *verdict.RunReport, res crawl.Result) error {
	if !cfg.Export.Tombstones || !cleanTraversal(r) {
		return nil
	}
	n, err := db.MarkRemoved(res.Traversal.ID, r.RunID, r.FinishedAt)
	if err != nil {
		return failExport(r, res, err)
	}
	r.Items.Removed = n
	r.Productive = r.Productive || n > 0
	return nil
}

// finishExport publishes. A publish that fails turns the stop into error;
// one a signal or the export's time limit abandons, into interrupted.
func finishExport(ctx context.Context, x *exporter, r *verdict.RunReport, res crawl.Result, log *slog.Logger) error {
	if err := x.publish(ctx, r); err != nil {
		if ctx.Err() != nil && (errors.Is(err, context.Cause(ctx)) || errors.Is(err, ctx.Err())) {
			interruptExport(r, res, context.Cause(ctx))
			return nil
		}
		log.Error("publish failed", "err", err)
		return failExport(r, res, err)
	}
	return nil
}

// interruptExport records a publish that a signal or the export's time
// limit abandoned before it was recorded: the run ends interrupted,
// nothing is published, its items stay pending for the next run, and the
// export counts as failed, so a scheduler does not go on as if it
// happened.
func interruptExport(r *verdict.RunReport, res crawl.Result, cause error) {
	detail := exportInterruptedDetail(r.Detail, cause)
	res.Facts.Stop = verdict.StopInterrupted
	r.Stop, r.Detail = verdict.StopInterrupted, detail
	r.Outcome, r.Rule = verdict.Decide(res.Facts)
	r.Export = verdict.Export{Failed: true, Reason: detail, Files: []string{}}
}

// cleanTraversal reports whether the run completed a traversal that left
// no coverage gap in any of its runs: only then is an unseen item removed.
func cleanTraversal(r *verdict.RunReport) bool {
	return r.Outcome == verdict.OutcomeSuccess && r.Stop == verdict.StopQueueEmpty &&
		r.CoverageGaps == 0 && r.Traversal.Gaps == 0
}

// failExport turns the stop into error after a publish failed; the
// outcome follows the run's facts, and the export section says the export
// failed and why.
func failExport(r *verdict.RunReport, res crawl.Result, err error) error {
	detail := fmt.Sprintf("publish failed: %v", err)
	if r.Stop != verdict.StopQueueEmpty {
		detail += fmt.Sprintf(" (the crawl had stopped on %s", r.Stop)
		if r.Detail != "" {
			detail += ": " + r.Detail
		}
		detail += ")"
	}
	res.Facts.Stop = verdict.StopError
	r.Stop, r.Detail = verdict.StopError, detail
	r.Outcome, r.Rule = verdict.Decide(res.Facts)
	r.Export = verdict.Export{Failed: true, Reason: r.Detail, Files: []string{}}
	return err
}

// errorExport is the export section of a run that raised an error before
// it could publish, such as a state it could not write: nothing is
// published, the items it stored stay pending, and the export failed.
func errorExport(err error) verdict.Export {
	return verdict.Export{Failed: true, Files: []string{},
		Reason: fmt.Sprintf("the run raised an error, so nothing is published (its items stay pending): %v", err)}
}

// crawlOnce builds the engine for cfg and runs it.
func crawlOnce(ctx context.Context, cfg config.Config, opts Options, db *state.DB, runID string, clock crawl.Clock) (crawl.Result, error) {
	eng, w, err := newEngine(cfg, opts, db, runID, clock)
	if err != nil {
		return errorResult(err.Error()), err
	}
	defer w.close()
	res, err := eng.Run(ctx)
	w.renderFacts(&res)
	return res, err
}

// errorResult is the result of a run that raised an error before or
// instead of crawling.
func errorResult(detail string) crawl.Result {
	return crawl.Result{Crawl: verdict.Crawl{Stop: verdict.StopError, Detail: detail}}
}

// fill takes the engine's result into the report and decides the outcome.
func fill(r *verdict.RunReport, res crawl.Result) {
	r.Crawl = res.Crawl
	if !r.Stop.Valid() {
		r.Stop = verdict.StopError
	}
	res.Facts.Stop = r.Stop
	r.Outcome, r.Rule = verdict.Decide(res.Facts)
	r.Productive = res.Facts.Productive
	if r.Gaps == nil {
		r.Gaps = []verdict.Gap{}
	}
	if r.Fields == nil {
		r.Fields = map[string]verdict.FieldCounts{}
	}
	r.Breaker = res.Breaker
	if r.Breaker.Events == nil {
		r.Breaker.Events = []verdict.BreakerEvent{}
	}
}

// notStarted returns the report of a run that never started — nothing is
// written to its storage path — after notifying, since it failed.
// outputUnusable is the verdict of a run whose export root cannot be
// used: nothing was crawled or written but the storage path's
// .last_run.json, so a sensor sees the failure.
func outputUnusable(cfg config.Config, at time.Time, err error, log *slog.Logger) (verdict.RunReport, error) {
	logStoreAnswer(log, err)
	err = fmt.Errorf("%s: %w: %w", cfg.Name, ErrOutput, err)
	r := verdict.OutputUnusable(cfg.Name, at, err.Error())
	if b, encErr := encodeReport(r); encErr == nil {
		if werr := writeLastRun(cfg, b); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	return notStarted(cfg, r, err, log)
}

// logStoreAnswer logs at debug level the store's whole answer to a
// request that made the output unusable, which err gives in one line
// (see objstore.UnusableError.Detail).
func logStoreAnswer(log *slog.Logger, err error) {
	var ue *objstore.UnusableError
	if errors.As(err, &ue) && ue.Detail() != "" {
		log.Debug("the output's store answered", "output", ue.URL, "answer", ue.Detail())
	}
}

// shardNotStarted is the verdict, failed, of a shard that did not start
// because of its logical run: committed already (the error wraps
// ErrCommitted: a run id names one run, and a shard of a committed run
// would crawl nothing while passing for a run), abandoned, of another
// shard count, or an output where its claim could not be read or
// written.
func shardNotStarted(cfg config.Config, s *Shard, at time.Time, err error, log *slog.Logger) (verdict.RunReport, error) {
	r := verdict.Locked(cfg.Name, at, err.Error())
	r.RunID, r.Shard = s.RunID, s.Name()
	r.Export.Reason = "the shard did not start"
	if errors.Is(err, ErrCommitted) {
		r.Export.Reason = "the logical run is committed already: this shard did nothing"
	}
	return notStarted(cfg, r, fmt.Errorf("%s: %w", cfg.Name, err), log)
}

func notStarted(cfg config.Config, r verdict.RunReport, err error, log *slog.Logger) (verdict.RunReport, error) {
	if b, encErr := encodeReport(r); encErr == nil {
		notify(cfg, r, b, log)
	}
	return r, err
}
