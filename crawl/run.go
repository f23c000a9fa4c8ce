package crawl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/databrew/databrew-stage/verdict"
)

const (
	frontierCap   = 1024 // entries held in memory ahead of dispatch
	readChunk     = 256  // entries read from the store at once
	batchOps      = 2048 // a batch is sent to the writer at this size
	batchMaxOps   = 8192 // and the engine waits for the writer beyond it
	flushInterval = 200 * time.Millisecond
	// releaseInterval spaces the store's releases of mapped pages.
	releaseInterval = 0
)

// run is the state of one Run: only the run loop's goroutine touches it,
// except budget and rc, which workers share.
type run struct {
	e      *Engine
	rc     *RunContext
	budget *budget
	rules  *verdict.StopRules
	w      *writer

	front   *frontier
	claimed map[uint64]struct{} // entries dispatched from memory, not yet committed as done
	pending map[string]struct{} // URLs in uncommitted batches' Enqueue
	cursor  uint64              // highest seq read from the store
	dry     bool                // the store had nothing beyond cursor at the last read
	unread  int                 // enqueued entries not in the frontier since the last commit
	nextSeq uint64
	batch   *Batch
	since   time.Time // when the current batch got its first op

	inflight   int
	stopping   bool
	cancelWork context.CancelCauseFunc
	retryPass  bool

	res        Result
	items      Committed
	failed     map[string]string // URL → reason of URLs failed in this run and not fetched since
	unusable   int
	gapSamples []verdict.Gap
	storeErr   error
}

// Run crawls until the queue is empty or a stop ends the run, and returns
// the result. It returns an error only when the store failed; the result
// then says stop "error".
func (e *Engine) Run(ctx context.Context) (Result, error) {
	start, err := e.d.Store.Begin(e.starts)
	if err != nil {
		return Result{Stop: verdict.StopError, Detail: err.Error()}, err
	}
	r := &run{
		e:       e,
		rc:      &RunContext{ctx: ctx, runID: e.s.RunID},
		budget:  &budget{limit: int64(e.s.MaxRequests)},
		rules:   verdict.NewStopRules(e.s.Thresholds),
		front:   newFrontier(frontierCap),
		claimed: map[uint64]struct{}{},
		pending: map[string]struct{}{},
		nextSeq: start.NextSeq,
		batch:   &Batch{},
		failed:  map[string]string{},
	}
	r.res.Traversal = verdict.Traversal{ID: start.Traversal, Started: start.NewTraversal}
	e.log.Info("run started", "run_id", e.s.RunID, "traversal", start.Traversal, "new_traversal", start.NewTraversal, "queued", start.Queued)

	r.loop(ctx)
	r.progress()

	productive := r.items.New+r.items.Changed > 0
	fin, err := e.d.Store.Finish(productive, len(r.failed)+r.unusable)
	if err != nil && r.storeErr == nil {
		r.storeErr = err
		r.res.Stop, r.res.Detail = verdict.StopError, err.Error()
	}
	r.finishResult(fin, productive)
	return r.res, r.storeErr
}

// loop dispatches URLs to workers, handles their completions and commits
// batches until the run stops.
func (r *run) loop(ctx context.Context) {
	workCtx, cancel := context.WithCancelCause(ctx)
	r.cancelWork = cancel
	defer cancel(nil)
	tasks := make(chan Queued, r.e.s.Concurrency)
	results := make(chan completion, r.e.s.Concurrency)
	var wg sync.WaitGroup
	for range r.e.s.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.worker(workCtx, tasks, results)
		}()
	}
	r.w = newWriter(r.e.d.Store)
	defer func() {
		close(tasks)
		wg.Wait()
		r.w.close()
	}()
	ticker := time.NewTicker(flushInterval)
	defer ticker.Stop()
	done := ctx.Done()
	for {
		r.dispatch(tasks)
		if r.inflight == 0 {
			r.flush()
			if r.stopping {
				return
			}
			if r.refill() {
				continue
			}
			if r.beginRetryPass(ctx) {
				continue
			}
			if !r.stopping {
				r.stop(verdict.StopQueueEmpty, "")
			}
			return
		}
		if r.needsCommit() {
			r.sendBatch()
		}
		select {
		case c := <-results:
			r.inflight--
			r.handle(c)
		case res := <-r.w.out:
			r.w.busy = false
			r.committed(res)
		case <-done:
			done = nil
			r.interrupt(ctx)
		case <-ticker.C:
			r.progress()
			if !r.w.busy && !r.batch.Empty() && time.Since(r.since) >= flushInterval {
				r.sendBatch()
			}
		}
	}
}

// dispatch hands work to idle workers.
func (r *run) dispatch(tasks chan<- Queued) {
	for !r.stopping && r.inflight < r.e.s.Concurrency {
		if r.front.len() == 0 && !r.refill() {
			return
		}
		if r.budget.exhausted() {
			r.stop(verdict.StopMaxRequests, verdict.MaxRequestsDetail(r.e.s.MaxRequests))
			return
		}
		q, _ := r.front.popFront()
		r.inflight++
		tasks <- q
	}
}

// refill reads the next entries from the store into the frontier and
// reports whether the frontier holds any.
func (r *run) refill() bool {
	for r.front.len() == 0 && !r.dry && r.storeErr == nil {
		qs, err := r.e.d.Store.Read(r.cursor, readChunk)
		if err != nil {
			r.fail(err)
			return false
		}
		if len(qs) == 0 {
			r.dry = true
			break
		}
		for _, q := range qs {
			r.cursor = q.Seq
			if _, mine := r.claimed[q.Seq]; !mine {
				r.front.pushBack(q, true)
			}
		}
	}
	return r.front.len() > 0
}

// handle counts one completion and records it in the batch.
func (r *run) handle(c completion) {
	r.res.Requests.Total += c.requests
	r.res.Requests.Retried += c.retries
	switch {
	case c.blocked != "":
		// The page says the crawler is blocked: not a result, the URL
		// stays queued.
		r.stop(verdict.StopBlocked, c.blocked)
		r.cancelWork(errStopped)
		return
	case c.class == 0:
		if c.noBudget {
			r.stop(verdict.StopMaxRequests, verdict.MaxRequestsDetail(r.e.s.MaxRequests))
		}
		return // not finished: the URL stays queued
	}
	if c.robotsExcluded {
		r.res.Requests.RobotsExcluded++
	}
	switch c.class {
	case verdict.ClassOK:
		r.res.Requests.OK++
		delete(r.failed, c.q.URL)
	case verdict.ClassNeutral:
		r.res.Requests.Neutral++
		delete(r.failed, c.q.URL)
	case verdict.ClassFailure:
		r.res.Requests.Failed++
		r.failed[c.q.URL] = c.reason
	}
	if c.gap {
		r.gap(verdict.Gap{URL: c.q.URL, Reason: c.reason})
	}
	for _, g := range c.cardGaps {
		r.gap(g)
	}
	r.res.Facts.FetchedStartURL = r.res.Facts.FetchedStartURL || c.fetchedStart
	r.res.Facts.ListingYielded = r.res.Facts.ListingYielded || c.yielded
	if len(c.links) > 0 {
		r.enqueue(c.links)
	}
	r.addOp()
	r.batch.Done = append(r.batch.Done, Done{Seq: c.q.Seq, Entry: c.q.Entry, Failed: c.class == verdict.ClassFailure, Items: c.items})
	if trip, ok := r.rules.Record(c.class); ok && !r.stopping {
		r.tripped(trip)
	}
}

var errStopped = errors.New("run stopping")

// tripped ends the run on a stop rule. A retry pass that trips reports
// queue_empty, because the first pass emptied the queue.
func (r *run) tripped(trip verdict.Trip) {
	r.e.log.Warn("stop rule tripped", "stop", trip.Stop, "detail", trip.Detail, "request", r.res.Requests.Total, "retry_pass", r.retryPass)
	if r.retryPass {
		r.stop(verdict.StopQueueEmpty, "retry pass ended early: "+trip.Detail)
	} else {
		r.stop(trip.Stop, trip.Detail)
	}
	r.cancelWork(errStopped)
}

func (r *run) gap(g verdict.Gap) {
	r.unusable++
	if len(r.gapSamples) < verdict.MaxListedGaps {
		r.gapSamples = append(r.gapSamples, g)
	}
}

// enqueue gives new links sequence numbers and adds them to the batch;
// listing pages go to the front of the frontier so discovery runs ahead,
// item pages to the back while there is room.
func (r *run) enqueue(links []Entry) {
	fresh := make([]Entry, 0, len(links))
	urls := make([]string, 0, len(links))
	for _, l := range links {
		if _, dup := r.pending[l.URL]; dup {
			continue
		}
		r.pending[l.URL] = struct{}{}
		fresh = append(fresh, l)
		urls = append(urls, l.URL)
	}
	if len(fresh) == 0 {
		return
	}
	seen, err := r.e.d.Store.Seen(urls)
	if err != nil {
		r.fail(err)
		return
	}
	for i, l := range fresh {
		if seen[i] {
			delete(r.pending, l.URL)
			continue
		}
		q := Queued{Seq: r.nextSeq, Entry: l}
		r.nextSeq++
		r.addOp()
		r.batch.Enqueue = append(r.batch.Enqueue, q)
		switch {
		case r.stopping:
			r.unread++
		case l.Kind == KindListing:
			r.front.pushFront(q)
			r.claimed[q.Seq] = struct{}{}
		case r.front.pushBack(q, false):
			r.claimed[q.Seq] = struct{}{}
		default:
			r.unread++
		}
	}
}

func (r *run) addOp() {
	if r.batch.Empty() {
		r.since = time.Now()
	}
}

// needsCommit reports whether the batch should go to the writer now: it is
// big, or the frontier ran dry while entries wait in the batch.
func (r *run) needsCommit() bool {
	if r.batch.Empty() {
		return false
	}
	n := len(r.batch.Done) + len(r.batch.Enqueue)
	if r.w.busy {
		if n >= batchMaxOps {
			r.committed(r.w.wait())
		}
		return false
	}
	return n >= batchOps || (r.front.len() == 0 && r.unread > 0)
}

func (r *run) sendBatch() {
	if r.w.busy || r.batch.Empty() {
		return
	}
	r.batch.NextSeq = r.nextSeq
	r.w.send(r.batch)
	r.batch = &Batch{}
	r.unread = 0
}

// flush commits everything: the batch in flight and the current one.
func (r *run) flush() {
	if r.w.busy {
		r.committed(r.w.wait())
	}
	if !r.batch.Empty() {
		r.sendBatch()
		r.committed(r.w.wait())
	}
}

// committed takes a writer's result.
func (r *run) committed(res committed) {
	if res.err != nil {
		r.fail(res.err)
		return
	}
	r.items = r.items.Add(res.counts)
	for _, d := range res.batch.Done {
		delete(r.claimed, d.Seq)
	}
	for _, q := range res.batch.Enqueue {
		delete(r.pending, q.URL)
	}
	r.dry = false
}

// beginRetryPass waits retry_pass_delay and queues the URLs that failed,
// once per run. It reports whether there is a pass to run.
func (r *run) beginRetryPass(ctx context.Context) bool {
	if r.retryPass || len(r.failed) == 0 {
		return false
	}
	if r.budget.exhausted() {
		r.stop(verdict.StopMaxRequests, verdict.MaxRequestsDetail(r.e.s.MaxRequests))
		return false
	}
	r.retryPass = true
	r.e.log.Info("retry pass", "urls", len(r.failed), "after", r.e.s.RetryPassDelay)
	if err := r.e.d.Clock.Sleep(ctx, r.e.s.RetryPassDelay); err != nil {
		r.interrupt(ctx)
		return false
	}
	moved, next, err := r.e.d.Store.RequeueFailed(r.nextSeq)
	if err != nil {
		r.fail(err)
		return false
	}
	r.nextSeq, r.dry = next, false
	return moved > 0
}

// interrupt stops the run because its context ended.
func (r *run) interrupt(ctx context.Context) {
	detail := "Interrupted"
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, context.DeadlineExceeded):
		detail = "Deadline reached"
	case cause != nil && !errors.Is(cause, context.Canceled):
		detail = cause.Error()
	}
	r.stop(verdict.StopInterrupted, detail)
	r.cancelWork(errStopped)
}

// fail stops the run on a store error.
func (r *run) fail(err error) {
	if r.storeErr == nil {
		r.storeErr = err
	}
	r.stop(verdict.StopError, err.Error())
	r.cancelWork(errStopped)
}

// stop sets the run's stop; the first stop wins.
func (r *run) stop(s verdict.Stop, detail string) {
	if r.stopping {
		return
	}
	r.stopping = true
	r.res.Stop, r.res.Detail = s, detail
}

// finishResult fills in the facts and counts once the run has ended.
func (r *run) finishResult(fin Finish, productive bool) {
	res := &r.res
	res.Items = verdict.ItemCounts{New: r.items.New, Changed: r.items.Changed, Unchanged: r.items.Unchanged}
	// URLs that failed and were not fetched successfully since are gaps,
	// whether they wait in the failed set or, when a stop cut the retry
	// pass short, in the queue.
	res.CoverageGaps = len(r.failed) + r.unusable
	res.Gaps = append([]verdict.Gap{}, r.gapSamples...)
	for u, reason := range r.failed {
		if len(res.Gaps) >= verdict.MaxListedGaps {
			break
		}
		res.Gaps = append(res.Gaps, verdict.Gap{URL: u, Reason: reason})
	}
	res.Traversal.Completed = res.Stop == verdict.StopQueueEmpty
	res.Traversal.Queued = fin.Queued
	res.TraversalGaps = fin.TraversalGaps
	res.EmptyRunStreak = fin.EmptyRunStreak
	res.Breaker.Events = []verdict.BreakerEvent{}
	res.Facts.Stop = res.Stop
	res.Facts.Succeeded = res.Requests.OK > 0
	res.Facts.FailuresRemain = res.CoverageGaps > 0
	res.Facts.Productive = productive
	r.e.log.Info("run finished", "stop", res.Stop, "detail", res.Detail, "requests", res.Requests.Total,
		"new", res.Items.New, "changed", res.Items.Changed, "gaps", res.CoverageGaps, "queued", fin.Queued)
}

// String describes a completion for debugging.
func (c completion) String() string {
	return fmt.Sprintf("%s %s class=%s reason=%q", c.q.Kind, c.q.URL, c.class, c.reason)
}
