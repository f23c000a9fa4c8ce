package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/verdict"
)

// tab is one page load in a tab of its own: the requests it makes, what
// its document answered, and whether it has gone quiet.
type tab struct {
	r   *Renderer
	req crawl.Request
	ctx context.Context // the tab's chromedp context
	t   *chromedp.Target

	mu sync.Mutex
	// closing stops new work for paused requests; work counts the
	// goroutines handling them.
	closing bool
	work    sync.WaitGroup
	// sent: the page's own request has left; hops counts its redirects.
	sent bool
	hops int
	// documents counts the further documents (frames, navigations).
	documents int
	// The document's answer.
	status   int
	header   http.Header
	finalURL string
	// done closes when the document's answer ended the load early (an
	// error status, a redirect not followed, a body too big): result and
	// fail say what it came to.
	done   chan struct{}
	result *crawl.Response
	fail   error
	// inflight holds the requests on the wire; quietSince is when the
	// last of them ended; loaded is the load event.
	inflight   map[network.RequestID]bool
	quietSince time.Time
	loaded     bool
}

// load renders req's page in a new tab of b and reads its DOM.
func (r *Renderer) load(ctx context.Context, b *browserProc, req crawl.Request) (*crawl.Response, error) {
	loadCtx, cancelLoad := context.WithTimeout(ctx, r.o.Timeout)
	defer cancelLoad()
	// The tab lives under a context the load's end cancels, so nothing
	// the browser does not answer can hold the load past its timeout.
	parent, stop := context.WithCancel(b.ctx)
	defer stop()
	unbind := context.AfterFunc(loadCtx, stop)
	defer unbind()
	// A tab in the browser's one window: a window per tab would cost a
	// window's share of the browser's own interface, which stays (about
	// 30 MB a tab here). Headless, every tab counts as visible and
	// focused, so a page's animation frames and timers run.
	tabCtx, closeTab := chromedp.NewContext(parent, chromedp.WithNewWindow(false))
	t := &tab{r: r, req: req, ctx: tabCtx, done: make(chan struct{}), inflight: map[network.RequestID]bool{}, quietSince: time.Now()}
	defer t.close(closeTab)

	tg, err := chromedp.Run(tabCtx, func(_ context.Context, tg *chromedp.Target) (*chromedp.Target, error) { return tg, nil })
	if err != nil {
		return nil, t.interrupted(loadCtx, fmt.Errorf("open a tab: %w", err))
	}
	t.t = tg
	if err := chromedp.Listen(tabCtx, t.event); err != nil {
		return nil, t.interrupted(loadCtx, fmt.Errorf("open a tab: %w", err))
	}
	nav, err := chromedp.Run(tabCtx, func(ctx context.Context, tg *chromedp.Target) (page.NavigateResult, error) {
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{
			{URLPattern: "*", RequestStage: fetch.RequestStageRequest},
			{URLPattern: "*", ResourceType: network.ResourceTypeDocument, RequestStage: fetch.RequestStageResponse},
		}})
		if err != nil {
			return page.NavigateResult{}, err
		}
		if _, err := cdp.Call(ctx, tg, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: true}); err != nil {
			return page.NavigateResult{}, err
		}
		return cdp.Call(ctx, tg, page.Navigate, page.NavigateParams{URL: req.URL})
	})
	select {
	case <-t.done:
		return t.result, t.fail
	default:
	}
	if err != nil {
		return nil, t.interrupted(loadCtx, fmt.Errorf("load the page: %w", err))
	}
	if nav.ErrorText != "" {
		return nil, navigationError(nav.ErrorText)
	}
	if err := t.wait(loadCtx); err != nil {
		return t.result, err
	}
	return t.read(loadCtx)
}

// interrupted is the error of a load the browser did not go through with:
// a render timeout when the load's time ran out, else err (the engine
// tells a crash from a canceled run).
func (t *tab) interrupted(loadCtx context.Context, err error) error {
	if errors.Is(context.Cause(loadCtx), context.DeadlineExceeded) {
		return &crawl.FetchError{Class: verdict.ClassFailure, Reason: ReasonRenderTimeout, Err: err}
	}
	return &crawl.FetchError{Class: verdict.ClassFailure, Reason: "render: " + err.Error(), Err: err}
}

// wait returns once the page has rendered: wait_for matches, or without
// one, the load event fired and no request has been in flight for Idle.
func (t *tab) wait(ctx context.Context) error {
	sel := t.r.o.WaitFor[t.req.Kind]
	tick := time.NewTicker(t.r.o.Poll)
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return t.fail
		case <-ctx.Done():
			return t.interrupted(ctx, ctx.Err())
		case <-tick.C:
		}
		if sel == "" {
			if t.quiet() {
				return nil
			}
			continue
		}
		found, err := t.matches(ctx, sel)
		switch {
		case err != nil && ctx.Err() != nil:
			return t.interrupted(ctx, err)
		case err != nil:
			return &crawl.FetchError{Class: verdict.ClassNeutral, Reason: fmt.Sprintf("render: wait_for %q: %v", sel, err), Err: err}
		case found:
			return nil
		}
	}
}

// quiet reports whether the load event fired and no request has been in
// flight for Idle.
func (t *tab) quiet() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.loaded && len(t.inflight) == 0 && time.Since(t.quietSince) >= t.r.o.Idle
}

// matches reports whether sel matches an element of the DOM.
func (t *tab) matches(ctx context.Context, sel string) (bool, error) {
	q, _ := json.Marshal(sel)
	var found bool
	err := t.eval(ctx, "document.querySelector("+string(q)+") !== null", &found)
	return found, err
}

// read reads the rendered DOM, the document's URL and character set.
func (t *tab) read(ctx context.Context) (*crawl.Response, error) {
	var dom struct {
		HTML, URL, Charset string
	}
	err := t.eval(ctx, `({HTML: document.documentElement ? document.documentElement.outerHTML : "", URL: document.URL, Charset: document.characterSet})`, &dom)
	if err != nil {
		return nil, t.interrupted(ctx, fmt.Errorf("read the DOM: %w", err))
	}
	if max := t.r.o.MaxBodyBytes; max > 0 && int64(len(dom.HTML)) > max {
		return nil, &crawl.FetchError{Class: verdict.ClassNeutral, Reason: "body over max_body_bytes"}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	final := dom.URL
	if t.finalURL != "" {
		final = t.finalURL
	}
	resp := t.response(final)
	if resp.Status == 0 {
		// The document's answer was not seen (served from memory): the
		// DOM is there, so it answered.
		resp.Status = http.StatusOK
	}
	resp.Body = []byte(dom.HTML)
	resp.Charset = strings.ToLower(dom.Charset)
	return resp, nil
}

// response is what the document answered, as the engine reads it; the
// caller holds t.mu.
func (t *tab) response(final string) *crawl.Response {
	h := t.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	// The body is the DOM, serialised as UTF-8: no length, encoding or
	// validator of the document's bytes applies to it.
	for _, k := range []string{"Content-Length", "Content-Encoding", "Transfer-Encoding", "ETag", "Last-Modified"} {
		h.Del(k)
	}
	resp := &crawl.Response{URL: t.req.URL, Status: t.status, Header: h, Documents: t.documents, Replayless: true}
	if u, err := url.Parse(final); err == nil && final != "" {
		resp.FinalURL = u
	}
	return resp
}

// eval evaluates expr in the page and decodes its JSON value into out.
func (t *tab) eval(ctx context.Context, expr string, out any) error {
	res, err := cdp.Call(ctx, t.t, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: ptr(true)})
	switch {
	case err != nil:
		return err
	case res.ExceptionDetails != nil:
		return errors.New(exceptionText(res.ExceptionDetails))
	case res.Result == nil:
		return errors.New("no result")
	}
	return json.Unmarshal([]byte(res.Result.Value), out)
}

// exceptionText is what a script error says.
func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return firstLine(d.Exception.Description)
	}
	return d.Text
}

// end ends the load early with what the document answered.
func (t *tab) end(resp *crawl.Response, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.done:
		return
	default:
	}
	t.result, t.fail = resp, err
	close(t.done)
}

// close closes the tab in the background, so the page's answer does not
// wait for the browser to let go of it (nor for a hung browser to answer):
// Renderer.Close waits for every tab to be closed, and for the goroutines
// of its requests.
func (t *tab) close(closeTab context.CancelFunc) {
	t.mu.Lock()
	t.closing = true
	t.mu.Unlock()
	t.r.tabs.Go(func() {
		closeTab()
		t.work.Wait()
	})
}

// event takes the tab's events on chromedp's reading goroutine: it only
// notes them, and hands paused requests to a goroutine of their own.
func (t *tab) event(ev any) {
	switch ev := ev.(type) {
	case *fetch.EventRequestPaused:
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.closing {
			return
		}
		t.work.Add(1)
		go func() {
			defer t.work.Done()
			t.paused(ev)
		}()
	case *network.EventRequestWillBeSent:
		t.mu.Lock()
		t.inflight[ev.RequestID] = true
		t.mu.Unlock()
	case *network.EventLoadingFinished:
		t.ended(ev.RequestID)
	case *network.EventLoadingFailed:
		t.ended(ev.RequestID)
	case *page.EventLoadEventFired:
		t.mu.Lock()
		t.loaded = true
		t.mu.Unlock()
	}
}

// ended notes a request that finished or failed.
func (t *tab) ended(id network.RequestID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inflight[id] {
		delete(t.inflight, id)
		if len(t.inflight) == 0 {
			t.quietSince = time.Now()
		}
	}
}

// navigationError is the failure of a document the browser could not
// load, in the words a plain request's failure has.
func navigationError(text string) error {
	reason := verdict.ReasonConnection + ": " + text
	switch {
	case strings.Contains(text, "ERR_CONNECTION_REFUSED"):
		reason = verdict.ReasonRefused
	case strings.Contains(text, "ERR_CONNECTION_RESET"), strings.Contains(text, "ERR_CONNECTION_CLOSED"), strings.Contains(text, "ERR_EMPTY_RESPONSE"):
		reason = verdict.ReasonReset
	case strings.Contains(text, "ERR_NAME_NOT_RESOLVED"):
		reason = verdict.ReasonDNS + ": no such host"
	case strings.Contains(text, "ERR_TIMED_OUT"), strings.Contains(text, "ERR_CONNECTION_TIMED_OUT"):
		reason = verdict.ReasonTimeout
	case strings.Contains(text, "ERR_CERT"), strings.Contains(text, "ERR_SSL"):
		reason = verdict.ReasonTLS + ": " + text
	}
	return &crawl.FetchError{Class: verdict.ClassFailure, Reason: reason}
}

func ptr[T any](v T) *T { return &v }
