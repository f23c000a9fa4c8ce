package crawl

import (
	"context"
	"net/http"
	"sync"
)

// Middleware inspects every response the run receives. It may end the run
// as blocked by calling rc.Stop with a reason, for example when a page says
// the crawler was banned. It must not keep resp or its Body.
type Middleware func(rc *RunContext, resp *Response)

// RefreshFunc is called after a 401; it returns headers to send from then
// on (a fresh token, a cookie). An error ends the run as blocked.
type RefreshFunc func(ctx context.Context) (http.Header, error)

// RunContext is the run as middleware sees it.
type RunContext struct {
	ctx   context.Context
	runID string

	mu     sync.Mutex
	reason string
}

// Context returns the run's context.
func (rc *RunContext) Context() context.Context { return rc.ctx }

// RunID returns the run's id.
func (rc *RunContext) RunID() string { return rc.runID }

// Stop sets the run's stop reason: the run ends as blocked with reason as
// its detail. The first reason set wins.
func (rc *RunContext) Stop(reason string) {
	if reason == "" {
		reason = "stopped by middleware"
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.reason == "" {
		rc.reason = reason
	}
}

// StopReason returns the reason set by Stop, or "".
func (rc *RunContext) StopReason() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.reason
}
