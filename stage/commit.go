package stage

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/verdict"
)

// CommitOptions are what a caller adds to a config for one commit.
type CommitOptions struct {
	// Clock defaults to the system clock.
	Clock interface{ Now() time.Time }
	// Logger receives the commit's log lines; nil discards them.
	Logger *slog.Logger
	// StoreTimeout bounds each request to an output in object storage,
	// as Options.StoreTimeout does a run's; 0 means
	// objstore.DefaultCallTimeout.
	StoreTimeout time.Duration
	// AfterCommitStep, when set, is called as the commit completes each
	// of publish.CommitSteps; an error it returns abandons the commit
	// right there, as a crash would.
	AfterCommitStep func(PublishStep) error
	// Getenv reads the environment for the secrets of an Iceberg output's
	// catalog (PGPASSWORD); nil means os.Getenv.
	Getenv func(string) string
}

// Commit is the job commit of a logical run of count shards of cfg, the
// fan-in task after the shards (see publish.Commit): it combines the
// shards' verdicts and, when the run publishes, decides commit and makes
// every shard's staged parts visible at once or one by one, as the
// output can, then writes the run folder's _verdict.json, _manifest.json
// and _SUCCESS. A run committed already is not committed again: the
// error wraps ErrCommitted and the report is the run's. The returned
// report is the logical run's verdict; the error is non-nil when the
// commit could not be made or recorded.
func Commit(ctx context.Context, cfg config.Config, runID string, count int, opts CommitOptions) (verdict.RunReport, error) {
	now := time.Now
	if opts.Clock != nil {
		now = opts.Clock.Now
	}
	log := opts.Logger
	if log == nil {
		log = discard
	}
	at := now().UTC()
	if err := (Shard{Count: count, RunID: runID}).Valid(); err != nil {
		return verdict.OutputUnusable(cfg.Name, at, err.Error()), err
	}
	out, err := openRunOutput(ctx, cfg, Options{StoreTimeout: opts.StoreTimeout, Getenv: opts.Getenv})
	if err != nil {
		logStoreAnswer(log, err)
		err = fmt.Errorf("%s: %w: %w", cfg.Name, ErrOutput, err)
		return verdict.OutputUnusable(cfg.Name, at, err.Error()), err
	}
	defer out.Close()
	if !out.Storage.Caps().HidesParts {
		err := fmt.Errorf("output %s: shards need an output that keeps staged parts invisible until the commit (s3://) or a local folder", cfg.Output)
		return verdict.OutputUnusable(cfg.Name, at, err.Error()), err
	}
	return publish.Commit(ctx, out, publish.CommitRequest{Config: cfg.Name, RunID: runID, Count: count, At: at, Log: log,
		WithholdPartial: cfg.Export.PublishWhen == config.PublishWhenSuccess, AfterStep: opts.AfterCommitStep})
}
