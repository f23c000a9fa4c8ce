package fetch

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temoto/robotstxt"
)

// Robots answers robots.txt questions, fetching each scheme+host's
// robots.txt once and sharing the result among concurrent callers. It is
// safe for concurrent use.
type Robots struct {
	client     *Client
	userAgent  string
	errorRetry time.Duration
	fetches    atomic.Int64

	mu    sync.Mutex
	hosts map[robotsKey]*robotsEntry
}

type robotsKey struct{ scheme, host string }

// robotsEntry is one host's rules; the fields are written before done is
// closed and only read after.
type robotsEntry struct {
	done     chan struct{}
	group    *robotstxt.Group // nil = allow all
	denyAll  bool
	deadline time.Time // zero = cached for the life of the Robots
}

// NewRobots returns a Robots that fetches through c and matches groups for
// userAgent. A robots.txt that could not be fetched (network error, timeout,
// oversized body, unexpected status) allows everything and is fetched again
// after retryAfterError; 5xx answers are retried after it too.
func NewRobots(c *Client, userAgent string, retryAfterError time.Duration) *Robots {
	return &Robots{
		client:     c,
		userAgent:  userAgent,
		errorRetry: retryAfterError,
		hosts:      make(map[robotsKey]*robotsEntry),
	}
}

// Fetches returns the number of robots.txt fetches made so far.
func (r *Robots) Fetches() int64 { return r.fetches.Load() }

// Allowed reports whether u may be fetched and the Crawl-delay of the group
// matching the user agent. err is non-nil only when u is not an absolute
// http(s) URL or ctx ends while waiting for robots.txt.
func (r *Robots) Allowed(ctx context.Context, u *url.URL) (allowed bool, crawlDelay time.Duration, err error) {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false, 0, fmt.Errorf("robots: %v: not an absolute http(s) URL", u)
	}
	e := r.entry(ctx, robotsKey{u.Scheme, strings.ToLower(u.Host)})
	select {
	case <-e.done:
	case <-ctx.Done():
		return false, 0, fmt.Errorf("robots %s://%s: %w", u.Scheme, u.Host, context.Cause(ctx))
	}
	switch {
	case e.denyAll:
		return false, 0, nil
	case e.group == nil:
		return true, 0, nil
	}
	delay := e.group.CrawlDelay
	if delay < 0 {
		delay = math.MaxInt64 // a delay too long to represent
	}
	return e.group.Test(u.RequestURI()), delay, nil
}

// entry returns the cached entry for k, starting a fetch when there is none
// or the cached one has expired.
func (r *Robots) entry(ctx context.Context, k robotsKey) *robotsEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.hosts[k]; e != nil && !e.expired(time.Now()) {
		return e
	}
	e := &robotsEntry{done: make(chan struct{})}
	r.hosts[k] = e
	// The fetch outlives any one caller's cancellation: others may be waiting.
	go r.load(context.WithoutCancel(ctx), k, e)
	return e
}

func (e *robotsEntry) expired(now time.Time) bool {
	select {
	case <-e.done:
		return !e.deadline.IsZero() && !now.Before(e.deadline)
	default:
		return false // still loading
	}
}

func (r *Robots) load(ctx context.Context, k robotsKey, e *robotsEntry) {
	defer close(e.done)
	r.fetches.Add(1)
	resp, err := r.client.Fetch(ctx, k.scheme+"://"+k.host+"/robots.txt", nil)
	if err != nil {
		e.deadline = time.Now().Add(r.errorRetry) // allow all, but not for long
		return
	}
	defer resp.Release()
	data, err := robotstxt.FromStatusAndBytes(resp.Status, resp.Body)
	switch {
	case err != nil && resp.Status >= 200 && resp.Status < 300:
		return // unparsable rules: allow all, like an empty file
	case err != nil:
		e.deadline = time.Now().Add(r.errorRetry) // unexpected status
	case resp.Status >= 500:
		e.denyAll = true // temporary by the robots.txt spec: ask again later
		e.deadline = time.Now().Add(r.errorRetry)
	default:
		e.group = data.FindGroup(r.userAgent)
	}
}
