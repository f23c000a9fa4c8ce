package crawl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/verdict"
)

// completion is what a worker reports for one queued URL.
type completion struct {
	q Queued
	// class is the URL's result after its retries; 0 means the URL was not
	// finished (the run is stopping or the budget ran out) and stays queued.
	class  verdict.Class
	reason string
	// answeredBy is the URL that answered when redirects led away from
	// q.URL.
	answeredBy string
	gap        bool
	blocked    string
	noBudget   bool
	// fatal is why the fetcher gave up: the run stops with the error stop.
	fatal string

	requests, retries int
	robotsExcluded    bool
	// The last response: its status, content type, charset and body size.
	status               int
	contentType, charset string
	bytes                int

	links []Entry
	items []ItemVersion
	// usableItems and unusableItems count the items (item pages, cards,
	// rows) the page held that could and could not be read: the markup
	// drift rule's results.
	usableItems, unusableItems int
	// notes say what a selector matched but could not use; reports how
	// reading the fields of the page's items went.
	notes   []extract.Note
	reports []ItemReport
	// pageGaps are further gaps the page found: unusable cards, links
	// and keys too long to keep.
	pageGaps     []verdict.Gap
	fetchedStart bool
	yielded      bool

	// notModified: the page answered 304 to a conditional request, and
	// its memo stood in for it: touched are the keys of the items it
	// still holds.
	notModified bool
	touched     []ItemRef
	// memo replaces the store's memo of the page; forgetMemo removes it.
	memo       *PageMemo
	forgetMemo bool
	// chain, for a page of a pages chain that was read, is what it held:
	// its memo keeps it for the next traversal (see followChain).
	chain *ChainMark
	// replayless: the page was requested with a POST, which no memo may
	// answer for, so its memo keeps no validators.
	replayless bool
	// Under a revisit policy, due are the links to queue (c.links less
	// the item pages that are not due, which are in skips); nil without
	// one.
	due   []Entry
	skips []Skip
	// aheadItems and aheadDues are the item pages and their dues the
	// lookahead read for the page's memo, when it answered the page.
	aheadItems []string
	aheadDues  []PageDue
}

// worker fetches queued URLs until tasks closes.
func (r *run) worker(tasks <-chan task, out chan<- completion) {
	for t := range tasks {
		retries := r.e.s.Retries
		if t.probe {
			retries = 0
		}
		out <- r.visit(t.ctx, t.q, retries, !t.probe)
	}
}

// visit fetches one URL with up to retries inline retries and processes
// the page. lookAhead lets the visit of a listing page request the listing
// pages its memo links to ahead (see lookahead); a probe's does not.
func (r *run) visit(ctx context.Context, q Queued, retries int, lookAhead bool) completion {
	e := r.e
	c := completion{q: q}
	u, err := url.Parse(q.URL)
	switch {
	case err != nil:
		c.class, c.gap, c.reason = verdict.ClassNeutral, true, fmt.Sprintf("bad URL: %v", err)
		return c
	case !e.scope.Allows(u):
		// Queued by an earlier run whose config allowed more domains.
		c.class, c.reason = verdict.ClassNeutral, "outside allowed_domains"
		return c
	case len(q.URL) > MaxURLBytes:
		// Queued by an earlier version that kept any length.
		c.class, c.gap, c.reason = verdict.ClassNeutral, true, tooLong("URL", len(q.URL), MaxURLBytes)
		return c
	}
	if e.d.Robots != nil && q.Kind != KindRobots {
		allowed, delay, _ := e.d.Robots.Allowed(ctx, u)
		if ctx.Err() != nil {
			return c
		}
		if delay > 0 && e.d.Pacer != nil {
			// A shard waits as many times longer as there are shards.
			e.d.Pacer.SetHostDelay(u.Host, e.crawlDelay(u.Host, delay)*time.Duration(max(e.s.Shard.Count, 1)))
		}
		if !allowed {
			// Not evidence of a removal: the crawl may not look.
			c.class, c.robotsExcluded, c.reason = verdict.ClassNeutral, true, "excluded by robots.txt"
			c.gap = true
			return c
		}
	}
	if _, err := e.request(q, nil); err != nil {
		c.class, c.gap, c.reason = verdict.ClassNeutral, true, fmt.Sprintf("listing request: %v", err)
		return c
	}
	// A listing page requested ahead comes with the memo its request was
	// made on, which is the store's: no worker came to the page before
	// (see lookahead.take). Otherwise the worker reads it, and follows
	// the chain from it.
	var memo *PageMemo
	hadMemo := false
	pre := r.ahead.take(ctx, q)
	switch {
	case pre != nil:
		memo, hadMemo = pre.memo, true
	case q.Kind == KindListing && e.s.ListingRequest.post():
		// A POST is never conditional: no memo answers for it.
		_, hadMemo = r.memo(q)
		c.replayless = true
	default:
		memo, hadMemo = r.memo(q)
		if lookAhead && q.Kind == KindListing && memo.Conditional() {
			r.ahead.follow(ctx, memo)
		}
	}
	refreshed := false
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			pre = nil
		}
		var x exchange
		switch {
		case pre != nil:
			x = exchange{resp: pre.resp, err: pre.err, gen: pre.gen}
			c.aheadItems, c.aheadDues = pre.items, pre.itemDues
		default:
			x = r.exchange(ctx, q, u, memo)
		}
		switch {
		case x.noBudget:
			c.noBudget = true
			return c
		case x.notAsked:
			return c
		}
		resp, err, gen := x.resp, x.err, x.gen
		c.requests++
		if resp != nil {
			c.requests += resp.Documents
			r.budget.charge(resp.Documents)
			c.replayless = c.replayless || resp.Replayless
		}
		if attempt > 0 {
			c.retries++
		}
		if resp != nil && err == nil {
			if reason := r.middleware(resp); reason != "" {
				resp.release()
				c.blocked = reason
				return c
			}
		}
		j := e.judge(resp, err, memo.Conditional())
		var y Yield
		if j.class == verdict.ClassOK && j.blocked == "" && !j.canceled && !j.notModified {
			// A page is read inside the retry loop: one that is not a
			// document of its format at all fails, and is retried, like
			// a 5xx.
			y, j = r.read(q, resp, j)
		}
		switch {
		case j.fatal != "":
			resp.release()
			c.fatal = j.fatal
			return c
		case j.canceled || ctx.Err() != nil:
			resp.release()
			return c
		case j.auth:
			resp.release()
			if refreshed {
				c.blocked = fmt.Sprintf("HTTP 401 at %s after a refresh", q.URL)
				return c
			}
			if err := e.refresh(ctx, gen); err != nil {
				c.blocked = fmt.Sprintf("refresh after HTTP 401 at %s failed: %v", q.URL, err)
				return c
			}
			refreshed = true
			continue
		case j.blocked != "":
			resp.release()
			c.blocked = j.blocked
			return c
		case j.class == verdict.ClassFailure && attempt < retries:
			resp.release()
			if err := e.d.Clock.Sleep(ctx, e.backoff(attempt, j.retryAfter)); err != nil {
				return c
			}
			continue
		}
		c.class, c.reason, c.gap = j.class, j.reason, j.unusable || leavesGap(q.Entry, j)
		if j.unusable && q.Kind == KindItem {
			c.unusableItems = 1
		}
		if resp != nil {
			c.status, c.contentType, c.charset, c.bytes = resp.Status, resp.Header.Get("Content-Type"), resp.Charset, len(resp.Body)
		}
		if resp != nil && resp.FinalURL != nil {
			if final := e.s.IgnoreParams.StripString(resp.FinalURL.String()); final != q.URL {
				c.answeredBy = final
			}
		}
		switch {
		case j.notModified:
			r.replay(q, memo, &c)
		case j.class == verdict.ClassOK:
			r.yield(q, y, memo, &c)
		}
		if r.e.s.Revisit != nil && c.class == verdict.ClassOK && q.Kind != KindItem {
			r.sortDue(&c)
		}
		r.remember(&c, resp, memo, hadMemo)
		r.e.s.Shard.keepOwn(&c)
		resp.release()
		return c
	}
}

// exchange is one request's outcome: the response or the error, and the
// header generation it was made with; or why it was not made.
type exchange struct {
	resp *Response
	err  error
	gen  int
	// noBudget: the run's budget had no request left; notAsked: the
	// wait for the pacer or for a request slot was cut short.
	noBudget, notAsked bool
}

// exchange makes one request of q's page at u, conditional on memo when it
// can be, holding one of the run's request slots while it is in flight.
func (r *run) exchange(ctx context.Context, q Queued, u *url.URL, memo *PageMemo) exchange {
	e := r.e
	if !r.budget.take() {
		return exchange{noBudget: true}
	}
	if e.d.Pacer != nil {
		if err := e.d.Pacer.Wait(ctx, u.Host); err != nil {
			return exchange{notAsked: true}
		}
	}
	hdr, gen := e.headers()
	if memo.Conditional() {
		hdr = conditionalHeader(hdr, memo)
	}
	req, _ := e.request(q, hdr) // visit checked it
	if err := r.slots.acquire(ctx); err != nil {
		return exchange{notAsked: true}
	}
	defer r.slots.release()
	resp, err := e.d.Fetcher.Fetch(ctx, req)
	return exchange{resp: resp, err: err, gen: gen}
}

// middleware runs the run's middleware on a response and returns the stop
// reason one of them set.
func (r *run) middleware(resp *Response) string {
	for _, m := range r.e.d.Middleware {
		m(r.rc, resp)
	}
	return r.rc.StopReason()
}

// backoff is the wait before retry attempt+1: exponential from Backoff with
// up to a quarter of jitter, at least what Retry-After asked, at most
// MaxBackoff — so a MaxBackoff of 0 retries at once, whatever the site
// asks.
func (e *Engine) backoff(attempt int, retryAfter time.Duration) time.Duration {
	d := e.s.Backoff << min(attempt, 32)
	if d > 0 {
		d += time.Duration(rand.Int64N(int64(d)/4 + 1))
	}
	return min(max(d, retryAfter), e.s.MaxBackoff)
}

// crawlDelay caps a host's robots.txt Crawl-delay at MaxCrawlDelay, and
// says so once per host when the site asks for more.
func (e *Engine) crawlDelay(host string, asked time.Duration) time.Duration {
	if asked <= e.s.MaxCrawlDelay {
		return asked
	}
	if _, warned := e.delayWarned.LoadOrStore(host, true); !warned {
		e.log.Warn(fmt.Sprintf("robots.txt of %s asks for a Crawl-delay of %s; waiting max_crawl_delay (%s) instead", host, asked, e.s.MaxCrawlDelay),
			"host", host)
	}
	return e.s.MaxCrawlDelay
}

// refresh calls the refresh hook once per header generation: concurrent
// 401s wait for the first caller's refresh and reuse its headers.
func (e *Engine) refresh(ctx context.Context, seenGen int) error {
	e.hdrMu.Lock()
	defer e.hdrMu.Unlock()
	if e.hdrGen != seenGen {
		return nil
	}
	h, err := e.d.Refresh(ctx)
	if err != nil {
		return err
	}
	merged := http.Header{}
	for k, v := range e.hdr {
		merged[k] = v
	}
	for k, v := range h {
		merged[k] = v
	}
	e.hdr = merged
	e.hdrGen++
	return nil
}
