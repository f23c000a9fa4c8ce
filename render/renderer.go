package render

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/verdict"
)

// Options configure a Renderer: what a plain request of the config would
// be sent with, and how pages render.
type Options struct {
	// Browser is the path of the browser to run (see Find).
	Browser string
	// Pages is [render] pages as written, for the verdict's facts.
	Pages string
	// WaitFor is the selector whose first match means a page of that kind
	// has rendered; a kind without one waits for the load event and Idle
	// without a request in flight.
	WaitFor map[crawl.Kind]string
	// Block lists the resource types a page never loads (the DevTools
	// protocol's names in lower case).
	Block []string
	// InScope says whether a URL is on the allowed domains; nil allows
	// every URL.
	InScope func(*url.URL) bool
	// Robots, when set, is asked before every request of a page but its
	// own document (the engine asked before that one).
	Robots crawl.Robots
	// Pacer, when set, spaces every request of a page but its own
	// document, per host, with the plain requests.
	Pacer crawl.Pacer
	// Header is sent with every request (all go to the allowed domains).
	Header http.Header
	// Cookies are set for each of CookieDomains (and their subdomains)
	// before the first page.
	Cookies       []*http.Cookie
	CookieDomains []string
	UserAgent     string
	// Timeout bounds a page's load, from its start until its DOM is read.
	Timeout time.Duration
	// MaxRedirects bounds the redirects a page's document follows; 0
	// follows none.
	MaxRedirects int
	// MaxBodyBytes bounds a document's Content-Length and its rendered
	// DOM; 0 means no bound.
	MaxBodyBytes int64
	// Idle is how long no request may be in flight after the load event
	// for a page without wait_for to have rendered; 0 means 500ms.
	Idle time.Duration
	// Poll is how often a loading page is looked at; 0 means 50ms.
	Poll time.Duration
	// StartTimeout bounds the browser's start; 0 means 30s.
	StartTimeout time.Duration
	// PingTimeout bounds the answer of a browser that may be hung; 0
	// means 5s.
	PingTimeout time.Duration
	// Logger receives the restarts; nil discards.
	Logger *slog.Logger
}

// Renderer is a crawl.Fetcher that loads pages in one headless browser, a
// tab per page at a time, as many at once as the engine asks (its
// concurrency). Start it, and Close it on every path.
type Renderer struct {
	o Options

	mu       sync.Mutex
	b        *browserProc
	restarts int
	fatal    string
	version  string
	closed   bool
	// tabs are the tabs being closed.
	tabs sync.WaitGroup

	stats stats
}

// Start launches the browser: a browser that does not start is an error
// with the first line it wrote.
func Start(o Options) (*Renderer, error) {
	if o.Idle <= 0 {
		o.Idle = 500 * time.Millisecond
	}
	if o.Poll <= 0 {
		o.Poll = 50 * time.Millisecond
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = 5 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	b, err := launch(o.Browser, &o)
	if err != nil {
		return nil, fmt.Errorf("the browser %s did not start: %w", o.Browser, err)
	}
	return &Renderer{o: o, b: b, version: b.version}, nil
}

// Close kills the browser and its process group and waits until its
// goroutines and those of its tabs are gone. It is safe to call more than
// once, and only after the last Fetch returned.
func (r *Renderer) Close() {
	r.mu.Lock()
	b := r.b
	r.b, r.closed = nil, true
	r.mu.Unlock()
	if b != nil {
		b.close()
	}
	r.tabs.Wait()
}

// PID is the browser's process id (the leader of its process group), 0
// when none runs.
func (r *Renderer) PID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.b == nil {
		return 0
	}
	return r.b.pid
}

// Facts are the verdict's render facts so far.
func (r *Renderer) Facts() verdict.Render {
	r.mu.Lock()
	restarts, version := r.restarts, r.version
	r.mu.Unlock()
	f := r.stats.facts()
	f.Pages, f.Browser, f.Restarts = r.o.Pages, version, restarts
	return f
}

// Subresources counts the requests pages made besides their documents
// that left the browser.
func (r *Renderer) Subresources() int { return int(r.stats.subresources.Load()) }

// Fetch loads req's page in a tab and answers with its rendered DOM. A
// page that does not render within the timeout is a failure ("render
// timeout"); a browser that crashed, or hung, is restarted once, and
// after that every Fetch is a fatal error.
func (r *Renderer) Fetch(ctx context.Context, req crawl.Request) (*crawl.Response, error) {
	b, err := r.current()
	if err != nil {
		return nil, &crawl.FetchError{Fatal: true, Reason: err.Error()}
	}
	resp, err := r.load(ctx, b, req)
	if err == nil {
		r.stats.rendered.Add(1)
		return resp, nil
	}
	if ctx.Err() != nil {
		return nil, &crawl.FetchError{Canceled: true, Reason: "canceled", Err: ctx.Err()}
	}
	var fe *crawl.FetchError
	if errors.As(err, &fe) && fe.Reason == ReasonRenderTimeout {
		r.stats.timeouts.Add(1)
	}
	// A page that failed may have failed for the browser: one that is
	// gone crashed, one that does not answer hangs.
	// A ping that fails at once because the connection broke is a crash,
	// even before chromedp has noticed it and ended the browser's context.
	if perr := b.ping(r.o.PingTimeout); perr != nil {
		if errors.Is(perr, context.DeadlineExceeded) && b.alive() {
			return nil, r.lost(b, "hung", err)
		}
		return nil, r.lost(b, "crashed", err)
	}
	return nil, err
}

// ReasonRenderTimeout is the reason of a page that did not render within
// the timeout.
const ReasonRenderTimeout = "render timeout"

// current is the running browser, or why there is none.
func (r *Renderer) current() (*browserProc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.fatal != "":
		return nil, errors.New(r.fatal)
	case r.closed || r.b == nil:
		return nil, errors.New("render: the browser is closed")
	}
	return r.b, nil
}

// lost handles a browser that crashed or hung while loading a page: the
// first time it starts a new one and the page is a failure to retry;
// after that the run must stop.
func (r *Renderer) lost(b *browserProc, what string, cause error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.b == b {
		how := b.exitError(cause)
		b.close()
		r.b = nil
		switch {
		case r.closed:
		case r.restarts >= 1:
			r.fatal = fmt.Sprintf("render: the browser %s %s again after its restart", b.path, what)
			if how != "" {
				r.fatal += " (" + how + ")"
			}
		default:
			r.restarts++
			r.o.Logger.Warn(fmt.Sprintf("render: the browser %s %s; starting it again", b.path, what), "how", how)
			nb, err := launch(b.path, &r.o)
			if err != nil {
				r.fatal = fmt.Sprintf("render: the browser %s %s and did not start again: %v", b.path, what, err)
				break
			}
			r.b = nb
		}
	}
	if r.fatal != "" {
		return &crawl.FetchError{Fatal: true, Reason: r.fatal, Err: cause}
	}
	return &crawl.FetchError{Class: verdict.ClassFailure, Reason: fmt.Sprintf("the browser %s; it was started again", what), Err: cause}
}
