package stage

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/databrew/databrew-stage/crawl"
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
	// LockTimeout is how long to wait for another process to release the
	// storage path; 0 means 100ms.
	LockTimeout time.Duration
	// ResetState starts over, instead of failing, when the state file is
	// damaged, or missing or empty while the output holds published runs:
	// a damaged or empty file is moved aside to state.db.broken-<UTC time>,
	// the traversal starts over, and every item is exported again as new.
	// Every page of the state file is checked first; a sound file is kept.
	ResetState bool
}
