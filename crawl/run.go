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
	batchOps      = 512  // a batch is sent to the writer at this size
	batchMaxOps   = 4096 // and the engine waits for the writer beyond it
	flushInterval = 200 * time.Millisecond
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

	// Pause-and-probe.
	workCtx     context.Context
	phase       phase
	phaseCtx    context.Context // the context tasks run under until the next trip
	phaseCancel context.CancelFunc
	policy      verdict.BreakerPolicy
	lastTrip    verdict.Trip
	counted     int             // results counted by the stop rules since they were reset
	recent      []recentFailure // failures among the last error_window counted results
	probeLeft   int             // URLs the current probe may still dispatch
	probeFailed int
	probeOf     int

	res        Result
	items      Committed
	dupWarned  bool
	failed     map[string]string // URL → reason of URLs failed in this run and not fetched since
	unusable   int
	gapSamples []verdict.Gap
	storeErr   error
}

// phase is where pause-and-probe stands.
type phase uint8

const (
	phaseRunning phase = iota // dispatching freely
	phasePaused               // a stop rule tripped: waiting out the pause
	phaseProbing              // dispatching a bounded probe
)

// recentFailure is a failed URL and the count of results when it failed.
type recentFailure struct {
	at int
	q  Queued
}

// task is a URL to visit under the context of the phase it was sent in.
type task struct {
	ctx context.Context
	q   Queued
	// probe limits the visit to one request: a probe is bounded in
	// requests, not only in URLs.
	probe bool
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
		policy:  e.s.Breaker,
	}
	r.policy.MaxErrorRate = e.s.Thresholds.MaxErrorRate
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
	r.workCtx = workCtx
	r.newPhase()
	defer func() { r.phaseCancel() }()
	tasks := make(chan task, r.e.s.Concurrency)
	results := make(chan completion, r.e.s.Concurrency)
	var wg sync.WaitGroup
	for range r.e.s.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.worker(tasks, results)
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
			if r.phase == phasePaused {
				r.pause(ctx)
				continue
			}
			if r.phase == phaseProbing && (r.probeLeft == 0 || !r.refill()) {
				r.judgeProbe()
				continue
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

// dispatch hands work to idle workers: freely while running, at most
// probe_requests URLs while probing, none while paused.
func (r *run) dispatch(tasks chan<- task) {
	for !r.stopping && r.phase != phasePaused && r.inflight < r.e.s.Concurrency {
		if r.phase == phaseProbing && r.probeLeft == 0 {
			return
		}
		if r.front.len() == 0 && !r.refill() {
			return
		}
		if r.budget.exhausted() {
			r.stop(verdict.StopMaxRequests, verdict.MaxRequestsDetail(r.e.s.MaxRequests))
			return
		}
		q, _ := r.front.popFront()
		if r.phase == phaseProbing {
			r.probeLeft--
		}
		r.inflight++
		tasks <- task{ctx: r.phaseCtx, q: q, probe: r.phase == phaseProbing}
	}
}

// newPhase starts the context tasks run under, so a trip can cancel the
// requests in flight without ending the run.
func (r *run) newPhase() {
	if r.phaseCancel != nil {
		r.phaseCancel()
	}
	r.phaseCtx, r.phaseCancel = context.WithCancel(r.workCtx)
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
		switch {
		case c.noBudget:
			r.stop(verdict.StopMaxRequests, verdict.MaxRequestsDetail(r.e.s.MaxRequests))
		case !r.stopping:
			// Cancelled by a trip: first in line when the run goes on.
			r.front.pushFront(c.q)
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
	for _, g := range c.pageGaps {
		r.gap(g)
	}
	r.res.Facts.FetchedStartURL = r.res.Facts.FetchedStartURL || c.fetchedStart
	r.res.Facts.ListingYielded = r.res.Facts.ListingYielded || c.yielded
	if len(c.links) > 0 && !r.enqueue(c.links) {
		return // the store failed: the page stays queued with its links
	}
	r.addOp()
	r.batch.Done = append(r.batch.Done, Done{Seq: c.q.Seq, Entry: c.q.Entry, Failed: c.class == verdict.ClassFailure, Items: c.items})
	r.count(c)
}

var errStopped = errors.New("run stopping")

// tripped handles a stop rule that fired. With pause-and-probe the run
// pauses: requests in flight are cancelled and go back to the queue, and so
// do the URLs that failed in the window, which are not charged as coverage
// gaps. Without it — or in a retry pass, which reports queue_empty because
// the first pass emptied the queue — the run stops.
func (r *run) tripped(trip verdict.Trip) {
	switch {
	case r.retryPass:
		r.e.log.Warn("stop rule tripped in the retry pass", "stop", trip.Stop, "detail", trip.Detail, "request", r.res.Requests.Total)
		r.stop(verdict.StopQueueEmpty, "retry pass ended early: "+trip.Detail)
		r.cancelWork(errStopped)
	case !r.policy.Enabled():
		r.e.log.Warn("stop rule tripped", "stop", trip.Stop, "detail", trip.Detail, "request", r.res.Requests.Total)
		r.stop(trip.Stop, trip.Detail)
		r.cancelWork(errStopped)
	default:
		r.lastTrip = trip
		r.res.Breaker.Tripped(r.e.d.Clock.Now(), r.res.Requests.Total, trip)
		r.e.log.Warn(fmt.Sprintf("tripped at request %d: %d/%d failed", r.res.Requests.Total, trip.Failed, trip.Of),
			"stop", trip.Stop, "detail", trip.Detail)
		r.requeueRecent()
		r.phase = phasePaused
		r.phaseCancel()
	}
}

// count feeds a result to the stop rules while running, to the probe
// while probing; a failure that lands while paused goes back to the queue.
func (r *run) count(c completion) {
	failed := c.class == verdict.ClassFailure
	switch r.phase {
	case phasePaused:
		if failed {
			r.recent = append(r.recent, recentFailure{q: c.q})
			r.requeueRecent()
		}
	case phaseProbing:
		if c.class == verdict.ClassNeutral {
			return
		}
		r.probeOf++
		if failed {
			r.probeFailed++
			r.recent = append(r.recent, recentFailure{q: c.q})
		}
	default:
		if c.class == verdict.ClassNeutral {
			return
		}
		r.counted++
		if failed {
			r.recent = append(r.recent, recentFailure{at: r.counted, q: c.q})
		}
		for len(r.recent) > 0 && r.counted-r.recent[0].at >= max(r.e.s.Thresholds.ErrorWindow, 1) {
			r.recent = r.recent[1:]
		}
		if trip, ok := r.rules.Record(c.class); ok && !r.stopping {
			r.tripped(trip)
		}
	}
}

// requeueRecent puts the URLs that failed in the current outage back at
// the front of the queue, in the order they failed, and takes them off
// the coverage gaps.
func (r *run) requeueRecent() {
	for i := len(r.recent) - 1; i >= 0; i-- {
		f := r.recent[i]
		delete(r.failed, f.q.URL)
		q := Queued{Seq: r.nextSeq, Entry: f.q.Entry}
		r.nextSeq++
		r.addOp()
		r.batch.Retry = append(r.batch.Retry, q)
		r.front.pushFront(q)
		r.claimed[q.Seq] = struct{}{}
	}
	r.recent = r.recent[:0]
}

// pause waits out the pause, then starts a probe. A deadline or a signal
// during the pause ends the run at once.
func (r *run) pause(ctx context.Context) {
	r.res.Breaker.Paused(r.e.d.Clock.Now(), r.res.Requests.Total)
	r.e.log.Warn(fmt.Sprintf("paused %s", r.policy.Pause), "request", r.res.Requests.Total, "queued_in_memory", r.front.len())
	if err := r.e.d.Clock.Sleep(ctx, r.policy.Pause); err != nil {
		r.interrupt(ctx)
		return
	}
	r.phase = phaseProbing
	r.probeLeft, r.probeFailed, r.probeOf = max(r.policy.ProbeRequests, 1), 0, 0
	r.newPhase()
}

// judgeProbe closes the breaker after a probe whose failure share is below
// the threshold: the stop rules start afresh and the run goes on from the
// same place. Otherwise the probe's failures go back to the queue and the
// run pauses again, or, after max_probes failed probes in a row, stops for
// good on the rule that tripped.
func (r *run) judgeProbe() {
	now := r.e.d.Clock.Now()
	passed := r.res.Breaker.Probed(now, r.res.Requests.Total, r.probeFailed, r.probeOf, r.policy)
	r.e.log.Warn(fmt.Sprintf("probe %d: %d/%d failed", r.res.Breaker.Probes, r.probeFailed, r.probeOf), "request", r.res.Requests.Total)
	if passed {
		r.rules.Reset()
		r.counted, r.recent = 0, r.recent[:0]
		r.phase = phaseRunning
		r.res.Breaker.Resumed(now, r.res.Requests.Total)
		r.e.log.Warn("resumed", "request", r.res.Requests.Total)
		return
	}
	r.requeueRecent()
	if r.res.Breaker.GivesUp(r.policy) {
		r.res.Breaker.GaveUp(now, r.res.Requests.Total)
		detail := fmt.Sprintf("%s; gave up after %d failed probes", r.lastTrip.Detail, r.res.Breaker.FailedProbes())
		r.e.log.Warn("gave up", "stop", r.lastTrip.Stop, "detail", detail)
		r.stop(r.lastTrip.Stop, detail)
		r.cancelWork(errStopped)
		return
	}
	r.phase = phasePaused
}

func (r *run) gap(g verdict.Gap) {
	r.unusable++
	if len(r.gapSamples) < verdict.MaxListedGaps {
		r.gapSamples = append(r.gapSamples, g)
	}
}

// enqueue gives new links sequence numbers and adds them to the batch;
// listing pages go to the front of the frontier so discovery runs ahead,
// item pages to the back while there is room. It reports false when the
// store could not be read.
func (r *run) enqueue(links []Entry) bool {
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
		return true
	}
	seen, err := r.e.d.Store.Seen(urls)
	if err != nil {
		for _, l := range fresh {
			delete(r.pending, l.URL)
		}
		r.fail(err)
		return false
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
	return true
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
	if d := res.counts.FirstDuplicate; d != nil && !r.dupWarned {
		r.dupWarned = true
		r.e.log.Warn(fmt.Sprintf("item key %q is yielded by %s and by %s: the item keeps the values of the first; items.duplicate_keys counts every page like the second",
			shortURL(d.Key), d.HeldBy, d.AlsoAt), "key", shortURL(d.Key), "held_by", d.HeldBy, "also_at", d.AlsoAt)
	}
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
	r.stop(verdict.StopInterrupted, InterruptedDetail(context.Cause(ctx)))
	r.cancelWork(errStopped)
}

// InterruptedDetail is the detail of a run its context ended, from the
// context's cause: "Deadline reached", the cause a signal handler set (such
// as "Interrupted by SIGTERM"), or "Interrupted".
func InterruptedDetail(cause error) string {
	switch {
	case errors.Is(cause, context.DeadlineExceeded):
		return "Deadline reached"
	case cause != nil && !errors.Is(cause, context.Canceled):
		return cause.Error()
	}
	return "Interrupted"
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
	res.Items = verdict.ItemCounts{New: r.items.New, Changed: r.items.Changed, Unchanged: r.items.Unchanged, DuplicateKeys: r.items.DuplicateKeys}
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
	// The traversal is complete when its queue is empty; failed URLs wait
	// in the failed set for the next traversal.
	res.Traversal.Completed = fin.Queued == fin.Failed
	res.Traversal.Queued = fin.Queued
	res.Traversal.Gaps = fin.TraversalGaps
	res.EmptyRunStreak = fin.EmptyRunStreak
	if res.Breaker.Events == nil {
		res.Breaker.Events = []verdict.BreakerEvent{}
	}
	res.Facts.Stop = res.Stop
	res.Facts.Succeeded = res.Requests.OK > 0
	res.Facts.FailuresRemain = res.CoverageGaps > 0
	res.Facts.Productive = productive
	r.e.log.Info("run finished", "stop", res.Stop, "detail", res.Detail, "requests", res.Requests.Total,
		"new", res.Items.New, "changed", res.Items.Changed, "gaps", res.CoverageGaps, "queued", fin.Queued)
}
