package stage

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/fetch"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// ErrLocked matches the error Run returns when another process holds the
// config's storage path.
var ErrLocked = state.ErrLocked

// ErrNotStarted matches the error Run returns for a config that its
// context ended before it started.
var ErrNotStarted = errors.New("not started")

// Run runs one config once and returns its verdict. The report is always
// filled in; the error is non-nil when the run did not start (ErrNotStarted,
// ErrLocked) or when its state could not be read or written.
func Run(ctx context.Context, cfg config.Config, opts Options) (verdict.RunReport, error) {
	clock := opts.Clock
	if clock == nil {
		clock = crawl.SystemClock{}
	}
	startedAt := clock.Now().UTC()
	if err := ctx.Err(); err != nil {
		return verdict.NotStarted(cfg.Name, startedAt), fmt.Errorf("%s: %w: %w", cfg.Name, ErrNotStarted, context.Cause(ctx))
	}
	db, err := state.Open(cfg.Storage, state.Options{LockTimeout: opts.LockTimeout})
	if errors.Is(err, state.ErrLocked) {
		return verdict.Locked(cfg.Name, startedAt, fmt.Sprintf("storage %s is in use by another process", cfg.Storage)), err
	}
	if err != nil {
		r := verdict.Locked(cfg.Name, startedAt, err.Error())
		r.Export.Reason = "storage could not be opened"
		return r, err
	}
	defer db.Close()

	report := verdict.RunReport{
		Config: cfg.Name, RunID: newRunID(startedAt), SchemaVersion: verdict.SchemaVersion,
		StartedAt: startedAt, Started: true,
	}
	res, runErr := crawlOnce(ctx, cfg, opts, db, report.RunID, clock)
	report.FinishedAt = clock.Now().UTC()
	fill(&report, res)
	report.Export = verdict.Export{Published: false, Reason: "export is not configured for this run", Files: []string{}}
	if err := writeLastRun(cfg.Storage, report); err != nil {
		return report, errors.Join(runErr, err)
	}
	return report, runErr
}

// crawlOnce builds the engine for cfg and runs it.
func crawlOnce(ctx context.Context, cfg config.Config, opts Options, db *state.DB, runID string, clock crawl.Clock) (crawl.Result, error) {
	x, err := extract.Compile(cfg.Extract)
	if err != nil {
		return crawl.Result{Stop: verdict.StopError, Detail: err.Error()}, err
	}
	p := cfg.Policy
	scope := crawl.NewScope(cfg.AllowedDomains)
	client := fetch.New(fetch.Config{
		UserAgent: p.UserAgent, Timeout: p.Timeout, MaxBodyBytes: p.MaxBodyBytes,
		MaxRedirects: p.MaxRedirects, InScope: func(u *url.URL) bool { return scope.Allows(u) },
		MaxConnsPerHost: p.Concurrency, Transport: opts.Transport,
	})
	defer client.Close()
	deps := crawl.Deps{
		Fetcher: httpFetcher{client: client}, Store: db, Extractor: x,
		Middleware: opts.Middleware, Refresh: opts.Refresh, Clock: clock, Logger: opts.Logger, Progress: opts.Progress,
	}
	if p.RespectRobots {
		deps.Robots = fetch.NewRobots(client, p.UserAgent, p.Timeout)
	}
	if p.Delay > 0 {
		deps.Pacer = fetch.NewPoliteness(p.Delay)
	}
	maxRequests := p.MaxRequests
	if opts.MaxRequests > 0 {
		maxRequests = opts.MaxRequests
	}
	eng, err := crawl.New(crawl.Settings{
		RunID: runID, StartURLs: cfg.StartURLs, AllowedDomains: cfg.AllowedDomains,
		Concurrency: p.Concurrency, MaxRequests: maxRequests, Retries: p.Retries,
		Backoff: p.Backoff, MaxBackoff: p.MaxBackoff, RetryPassDelay: p.RetryPassDelay,
		MinBodyBytes: p.MinBodyBytes, Thresholds: p.Thresholds(),
		Block: crawl.BlockRules{Selectors: cfg.Block.Selectors, Texts: cfg.Block.Texts, Statuses: cfg.Block.Statuses},
	}, deps)
	if err != nil {
		return crawl.Result{Stop: verdict.StopError, Detail: err.Error()}, err
	}
	return eng.Run(ctx)
}

// fill copies the engine's result into the report and decides the outcome.
func fill(r *verdict.RunReport, res crawl.Result) {
	r.Stop, r.Detail = res.Stop, res.Detail
	if !r.Stop.Valid() {
		r.Stop = verdict.StopError
	}
	res.Facts.Stop = r.Stop
	r.Outcome, r.Rule = verdict.Decide(res.Facts)
	r.Productive = res.Facts.Productive
	r.Requests, r.Items = res.Requests, res.Items
	r.Traversal = res.Traversal
	r.CoverageGaps, r.Gaps = res.CoverageGaps, res.Gaps
	if r.Gaps == nil {
		r.Gaps = []verdict.Gap{}
	}
	r.EmptyRunStreak = res.EmptyRunStreak
	r.Breaker = res.Breaker
	if r.Breaker.Events == nil {
		r.Breaker.Events = []verdict.BreakerEvent{}
	}
}
