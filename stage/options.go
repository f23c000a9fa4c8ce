package stage

import (
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/publish"
)

// Options are what a caller adds to a config for one run.
type Options struct {
	// MaxRequests overrides [policy].max_requests when positive (-n).
	MaxRequests int
	// Middleware inspects every response and may stop the run as blocked.
	Middleware []crawl.Middleware
	// Refresh is called after a 401; when it fails the run stops blocked.
	Refresh crawl.RefreshFunc
	// Clock defaults to the system clock; tests make waits short with it.
	Clock crawl.Clock
	// Logger receives the run's log lines; nil discards them.
	Logger *slog.Logger
	// Progress, when set, receives snapshots of the running crawl.
	Progress func(crawl.Progress)
	// Transport replaces the HTTP transport (tests).
	Transport http.RoundTripper
	// Deadline, when set, stops the crawl at that time: the run ends
	// interrupted, detail "Deadline reached", its queue saved; a run
	// whose deadline passed before it started does not start (detail
	// "Not started", ErrNotStarted). The export of what the run stored
	// still follows, within ExportTimeout; the context given to Run still
	// stops everything.
	Deadline time.Time
	// ExportTimeout is the time the export of a run with a Deadline may
	// take after it (after the crawl's end, when the crawl ended later):
	// an export not recorded by then is abandoned as a signal abandons
	// it — nothing is published, the items stay pending, the stop is
	// interrupted and the export failed (the cause an
	// *ExportTimeoutError). A publish once recorded goes to its end. 0
	// means DefaultExportTimeout; without a Deadline the export has no
	// time limit of its own.
	ExportTimeout time.Duration
	// StoreTimeout bounds each request to an output in object storage,
	// from its start to the end of its answer (objstore.Options
	// .CallTimeout): a store that accepts connections and stops answering
	// fails the run's export (stop error, export.failed, the detail
	// naming the endpoint) instead of hanging it, also after the publish
	// was recorded, when a signal no longer stops it; the next run
	// reconciles. 0 means objstore.DefaultCallTimeout.
	StoreTimeout time.Duration
	// LockTimeout is how long to wait for another process to release the
	// storage path; 0 means 100ms.
	LockTimeout time.Duration
	// ResetState starts over, instead of failing, when the state file is
	// damaged, or missing or empty while the output holds published runs:
	// a damaged or empty file is moved aside to state.db.broken-<UTC time>,
	// the traversal starts over, and every item is exported again as new.
	// Every page of the state file is checked first; a sound file is kept.
	ResetState bool
	// PartitionDate, when set, is the day whose dt= partition the run
	// publishes into, instead of the run's UTC start day: an
	// orchestrator's logical date, so a backfill or a rerun of a day lands
	// in that day's partition. Only its date (in UTC) counts.
	PartitionDate time.Time
	// Shard, when set, runs the config as one shard of a logical run
	// (see Shard): its state in the storage path's shard folder, its
	// export staged for Commit.
	Shard *Shard
	// WriteBudget bounds what one state transaction holds of changed
	// pages in memory, in bytes (state.Options.WriteBudget); 0 means
	// state.DefaultWriteBudget. Benchmarks set it to compare budgets.
	WriteBudget int64
	// AfterPublishStep, when set, is called as a publish completes each of
	// its steps, in the order of PublishSteps (a shard's attempt takes the
	// first two: publish.AttemptSteps). An error it returns abandons
	// the publish right there, leaving files and state as a crash would:
	// tests use it to prove each step survivable; a program can also time
	// or log the steps.
	AfterPublishStep func(PublishStep) error
	// Getenv reads the environment for what the config does not say (the
	// browser of [render], CHROMIUM); nil means os.Getenv.
	Getenv func(string) string
	// RenderIdle is how long a rendered page without wait_for must have no
	// request in flight after its load event; 0 means 500ms.
	RenderIdle time.Duration
}

// getenv is the options' Getenv, the process environment's by default.
func (o Options) getenv() func(string) string {
	if o.Getenv == nil {
		return os.Getenv
	}
	return o.Getenv
}

// clockOf is the options' clock, the system's by default.
func clockOf(opts Options) crawl.Clock {
	if opts.Clock == nil {
		return crawl.SystemClock{}
	}
	return opts.Clock
}

// PublishStep names a step of the publish protocol (see publish.Step).
type PublishStep = publish.Step

// The steps of a publish, in order (see publish.Steps): a run of the
// whole config takes them all, whatever its output; a shard's attempt
// takes the first two, its logical run's commit the last three.
const (
	StepIntent    = publish.StepIntent
	StepStaged    = publish.StepStaged
	StepDecided   = publish.StepDecided
	StepVisible   = publish.StepVisible
	StepCompleted = publish.StepCompleted
)

// PublishSteps lists the steps of a publish in order.
var PublishSteps = publish.Steps
