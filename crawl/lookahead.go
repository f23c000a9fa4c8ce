package crawl

import (
	"context"
	"net/url"
	"sync"
)

// A rerun's listing pages form a chain: each page's next-page link is
// known only once the page is read, so an unchanged rerun, which answers
// every listing page from its memo after a 304, makes its listing
// requests one after another, each waiting for the one before. The
// lookahead follows the chain the memos remember instead: when a worker
// takes a listing page whose memo can make its request conditional, the
// listing pages that memo links to are requested at once, conditionally,
// and so on down the remembered chain, up to a window of requests not yet
// taken. The chain is followed as soon as a request goes out, not when
// its answer is in: an unchanged rerun has up to a window of listing
// requests in flight at once. A chain that changed, or a site that
// fails, costs at most a window of requests no worker takes: an answer
// no worker takes holds its place in the window. Under a revisit policy,
// what the memos of the item pages a page that answered 304 links to say
// of when they are due is read then too, for sortDue. A worker that comes
// to such a page takes the answer instead of asking again (see
// run.visit); the page is judged and processed then, as any answer is.
// What the lookahead asked and no worker took (a chain that changed, a
// run that stopped first) is still one request of the run's count.
//
// Every request, a worker's or the lookahead's, holds one of the run's
// request slots (Settings.Concurrency of them) while it is in flight, so
// the site never sees more requests at once than the config allows; the
// lookahead only takes a slot that is free, and a request of the budget
// and the pacer's turn as any request does.

// lookahead holds the answers to listing requests made ahead of the
// workers.
type lookahead struct {
	r     *run
	slots requestSlots
	// window bounds the requests made ahead and not yet taken, or taken
	// and not yet answered.
	window int

	mu      sync.Mutex
	open    int
	parked  map[string]*ahead
	tried   map[string]bool
	waiting []pendingAhead
	// live are the requests made ahead that no worker took yet (parked,
	// or passed over): close counts those that went out.
	live   map[*ahead]struct{}
	closed bool
	// jobs are the requests launched and not yet made; runners make
	// them. A runner is started when a job finds none idle, up to the
	// window, and kept until close: a request's memo decode and exchange
	// need a deeper stack than a new goroutine starts with, and a
	// goroutine per request would grow its stack anew each time, on
	// fresh memory.
	jobs    []aheadJob
	runners int
	idle    int
	wake    *sync.Cond
	wg      sync.WaitGroup
}

// aheadJob is a request launched ahead, for one of the lookahead's
// goroutines to make.
type aheadJob struct {
	e Entry
	a *ahead
}

// pendingAhead is a listing page to request ahead once the window has
// room.
type pendingAhead struct {
	ctx context.Context
	e   Entry
}

// ahead is one listing request made ahead: done closes when its answer is
// in.
type ahead struct {
	ctx  context.Context
	done chan struct{}
	// memo is the memo the request was made conditional on; gen the
	// header generation it was made with.
	memo *PageMemo
	gen  int
	resp *Response
	err  error
	// items and itemDues are, after a 304 under a revisit policy, the
	// item pages the memo links to that sortDue sorts, and what their
	// memos say of when they are due, read ahead too.
	items    []string
	itemDues []PageDue
	// made says the request went out.
	made bool
}

func newLookahead(r *run, slots requestSlots) *lookahead {
	l := &lookahead{r: r, slots: slots, window: cap(slots),
		parked: map[string]*ahead{}, tried: map[string]bool{}, live: map[*ahead]struct{}{}}
	l.wake = sync.NewCond(&l.mu)
	return l
}

// runner makes the requests launched ahead, until close and none is left.
func (l *lookahead) runner() {
	defer l.wg.Done()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		for len(l.jobs) == 0 {
			if l.closed {
				return
			}
			l.idle++
			l.wake.Wait()
			l.idle--
		}
		j := l.jobs[0]
		l.jobs = l.jobs[1:]
		l.mu.Unlock()
		l.request(j.e, j.a)
		l.mu.Lock()
	}
}

// follow requests ahead the listing pages m links to, as far as the window
// allows; the rest wait for room. ctx is the phase the requests belong to.
func (l *lookahead) follow(ctx context.Context, m *PageMemo) {
	if m == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range m.Links {
		if e.Kind != KindListing || l.tried[e.URL] || l.closed {
			continue
		}
		l.tried[e.URL] = true
		l.waiting = append(l.waiting, pendingAhead{ctx: ctx, e: e})
	}
	l.launchLocked()
}

// launchLocked starts the waiting requests the window has room for.
func (l *lookahead) launchLocked() {
	for l.open < l.window && len(l.waiting) > 0 && !l.closed {
		p := l.waiting[0]
		l.waiting = l.waiting[1:]
		if p.ctx.Err() != nil {
			continue // a phase that ended
		}
		a := &ahead{ctx: p.ctx, done: make(chan struct{})}
		l.open++
		l.parked[p.e.URL] = a
		l.live[a] = struct{}{}
		l.jobs = append(l.jobs, aheadJob{e: p.e, a: a})
		if len(l.jobs) <= l.idle {
			l.wake.Signal()
		} else if l.runners < l.window {
			l.runners++
			l.wg.Add(1)
			go l.runner()
		}
	}
}

// request makes the listing request of e ahead, when the page's memo can
// make it conditional and a slot is free; otherwise it leaves the page to
// its worker. The chain goes on from its memo as it goes out.
func (l *lookahead) request(e Entry, a *ahead) {
	defer close(a.done)
	if !l.ask(e, a) {
		l.mu.Lock()
		if l.parked[e.URL] == a {
			delete(l.parked, e.URL)
			l.open--
		}
		delete(l.live, a) // no request to count
		l.launchLocked()
		l.mu.Unlock()
		return
	}
	if a.err == nil && a.resp != nil && a.resp.Status == 304 {
		if l.r.e.s.Revisit != nil {
			// What sortDue will read when the page replays its memo.
			a.items = l.r.itemLinks(a.memo.Links)
			a.itemDues = l.r.itemDues(a.items)
		}
	}
}

// ask makes the request of e for a, and reports whether it went out.
func (l *lookahead) ask(e Entry, a *ahead) bool {
	r := l.r
	eng := r.e
	u, err := url.Parse(e.URL)
	if err != nil || !eng.scope.Allows(u) || len(e.URL) > MaxURLBytes || eng.s.ListingRequest.post() {
		return false
	}
	m, _ := r.memo(Queued{Entry: e})
	if !m.Conditional() {
		return false
	}
	if eng.d.Robots != nil {
		if allowed, _, _ := eng.d.Robots.Allowed(a.ctx, u); !allowed {
			return false
		}
	}
	if !l.slots.tryAcquire() {
		return false // the workers need the slots
	}
	defer l.slots.release()
	hdr, gen := eng.headers()
	req, err := eng.request(Queued{Entry: e}, conditionalHeader(hdr, m))
	if err != nil || a.ctx.Err() != nil || !r.budget.take() {
		return false
	}
	// As a worker's: a request whose turn never came spends its budget
	// and is no request.
	if eng.d.Pacer != nil {
		if err := eng.d.Pacer.Wait(a.ctx, u.Host); err != nil {
			return false
		}
	}
	a.memo, a.gen, a.made = m, gen, true
	// The pages it links to go out beside it, not after its answer.
	l.follow(a.ctx, m)
	a.resp, a.err = eng.d.Fetcher.Fetch(a.ctx, req)
	return true
}

// take hands a worker the answer made ahead for q's page in the phase
// ctx: nil when there is none (the worker asks itself). It waits for a
// request still in flight. The answer's memo is the store's memo of the
// page: the lookahead requests only pages no worker came to (take marks
// them tried), and only a worker's visit of a page changes its memo.
func (l *lookahead) take(ctx context.Context, q Queued) *ahead {
	if q.Kind != KindListing {
		return nil // only listing pages are requested ahead
	}
	l.mu.Lock()
	// A page a worker came to first is not requested ahead after it.
	l.tried[q.URL] = true
	a := l.parked[q.URL]
	if a != nil {
		delete(l.parked, q.URL)
	}
	l.mu.Unlock()
	if a == nil {
		return nil
	}
	// The request keeps its place in the window until it is answered: it
	// holds a slot until then, and the request that took its place would
	// find none free and leave its page, and the chain after it, to the
	// workers.
	stopped := false
	select {
	case <-a.done:
	case <-ctx.Done():
		stopped = true // close counts it
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	l.launchLocked()
	if stopped || !a.made || a.ctx != ctx || a.memo == nil {
		return nil // not asked, or asked in another phase: close counts it
	}
	delete(l.live, a)
	return a
}

// close stops the lookahead, waits for its requests and returns how many
// went out that no worker took: they count among the run's requests.
func (l *lookahead) close() int {
	l.mu.Lock()
	l.closed = true
	l.waiting = nil
	l.wake.Broadcast()
	l.mu.Unlock()
	l.wg.Wait()
	untaken := 0
	for a := range l.live {
		if a.made {
			untaken++
			a.resp.release()
		}
	}
	l.live = nil
	return untaken
}

// requestSlots bounds the run's requests in flight: a request holds one
// slot from just before its exchange until its answer is read.
type requestSlots chan struct{}

func newRequestSlots(n int) requestSlots { return make(requestSlots, max(n, 1)) }

// acquire takes a slot, waiting for one.
func (s requestSlots) acquire(ctx context.Context) error {
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tryAcquire takes a slot when one is free.
func (s requestSlots) tryAcquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

// release gives a slot back.
func (s requestSlots) release() { <-s }
