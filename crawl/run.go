package crawl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/databrew/databrew-stage/verdict"
)

// run is one Run: its loop's goroutine alone touches it, except budget and
// rc, which workers share. It coordinates three parts, each with its own
// file: the schedule (what to fetch next, and the batches on their way to
// the store), the breaker (pause-and-probe over the stop rules) and the
// tally (what the run came to).
type run struct {
	e      *Engine
	rc     *RunContext
	budget *budget
	sched  *schedule
	slots  requestSlots
	ahead  *lookahead
	brk    *breaker
	tally  *tally
	notes  *notices

	inflight  int
	stopping  bool
	stop      verdict.Stop
	detail    string
	retryPass bool
	storeErr  error

	// Cancellation: workCtx ends every request when the run stops;
	// phaseCtx, under it, ends the requests in flight when a stop rule
	// trips.
	workCtx     context.Context
	cancelWork  context.CancelCauseFunc
	phaseCtx    context.Context
	phaseCancel context.CancelFunc

	traversal verdict.Traversal
	// scoped answers which links a replayed memo keeps (see replay).
	scoped siteScope
	// firstDup is the run's first duplicate key, told at its end if the
	// verdict still counts duplicates once keys have moved.
	firstDup *DuplicateKey
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
	if e.d.Store == nil {
		err := errors.New("crawl engine needs a store to run")
		return failed(err), err
	}
	start, err := e.d.Store.Begin(e.starts)
	if err != nil {
		return failed(err), err
	}
	r := &run{
		e:      e,
		rc:     &RunContext{ctx: ctx, runID: e.s.RunID},
		budget: &budget{limit: int64(e.s.MaxRequests)},
		sched:  newSchedule(e.d.Store, start.NextSeq),
		brk:    newBreaker(e.s.Thresholds, e.s.Breaker),
		tally:  newTally(),
		notes:  newNotices(len(e.s.Fields)),
	}
	r.slots = newRequestSlots(e.s.Concurrency)
	r.ahead = newLookahead(r, r.slots)
	r.traversal = verdict.Traversal{ID: start.Traversal, Started: start.NewTraversal}
	r.tally.committed(start.Moves)
	e.log.Info("run started", "run_id", e.s.RunID, "traversal", start.Traversal, "new_traversal", start.NewTraversal, "queued", start.Queued,
		"forgotten_urls", start.Forgotten)

	r.loop(ctx)
	r.progress()
	r.notes.report(e.log, e.s.Fields, e.s.FieldTypes)
	r.judgeDrift()

	fin, err := e.d.Store.Finish(r.tally.gaps())
	if err != nil && r.storeErr == nil {
		r.storeErr = err
		r.stop, r.detail = verdict.StopError, err.Error()
	}
	if fin.Moves.Moved > 0 {
		e.log.Info(fmt.Sprintf("%d item keys moved to the pages that yield them now: the traversal did not link the pages that held them", fin.Moves.Moved),
			"changed", fin.Moves.Changed, "unchanged", fin.Moves.Unchanged)
	}
	r.tally.committed(fin.Moves)
	if d := r.firstDup; d != nil && r.tally.duplicates() > 0 {
		e.log.Warn(fmt.Sprintf("item key %q is yielded by %s and by %s: the item keeps the values of the first; items.duplicate_keys counts every page like the second",
			shortURL(d.Key), d.HeldBy, d.AlsoAt), "key", shortURL(d.Key), "held_by", d.HeldBy, "also_at", d.AlsoAt)
	}
	return r.result(fin), r.storeErr
}

// loop dispatches URLs to workers, handles their completions and commits
// batches until the run stops.
func (r *run) loop(ctx context.Context) {
	r.workCtx, r.cancelWork = context.WithCancelCause(ctx)
	defer r.cancelWork(nil)
	r.newPhase()
	defer func() { r.phaseCancel() }()
	tasks := make(chan task, r.e.s.Concurrency)
	results := make(chan completion, r.e.s.Concurrency)
	var wg sync.WaitGroup
	for range r.e.s.Concurrency {
		wg.Go(func() { r.worker(tasks, results) })
	}
	r.sched.start()
	defer func() {
		close(tasks)
		wg.Wait()
		r.phaseCancel()
		r.tally.requests.Total += r.ahead.close()
		r.sched.close()
	}()
	ticker := time.NewTicker(flushInterval)
	defer ticker.Stop()
	done := ctx.Done()
	for {
		r.dispatch(tasks)
		if r.inflight == 0 {
			r.flush()
			switch {
			case r.stopping:
				return
			case r.brk.phase == phasePaused:
				r.pause(ctx)
				continue
			case r.brk.phase == phaseProbing && (r.brk.probeOver() || !r.refill()):
				r.judgeProbe()
				continue
			case r.refill(), r.beginRetryPass(ctx):
				continue
			}
			r.halt(verdict.StopQueueEmpty, "")
			return
		}
		if r.sched.overdue() {
			r.committed(r.sched.w.wait())
		}
		if r.sched.due() {
			r.sched.send()
		}
		select {
		case c := <-results:
			r.inflight--
			r.handle(c)
		case res := <-r.sched.w.out:
			r.committed(res)
		case <-done:
			done = nil
			r.interrupt(ctx)
		case <-ticker.C:
			r.progress()
			if r.sched.stale() {
				r.sched.send()
			}
		}
	}
}

// dispatch hands work to idle workers as far as the breaker lets it.
func (r *run) dispatch(tasks chan<- task) {
	for !r.stopping && r.brk.mayDispatch() && r.inflight < r.e.s.Concurrency {
		if r.sched.queued() == 0 && !r.refill() {
			return
		}
		if r.budget.exhausted() {
			r.halt(verdict.StopMaxRequests, verdict.MaxRequestsDetail(r.e.s.MaxRequests))
			return
		}
		q, _ := r.sched.next()
		r.inflight++
		tasks <- task{ctx: r.phaseCtx, q: q, probe: r.brk.dispatched()}
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

// refill reads ahead from the store and reports whether the frontier holds
// an entry.
func (r *run) refill() bool {
	if r.storeErr != nil {
		return false
	}
	ok, err := r.sched.refill()
	if err != nil {
		r.fail(err)
	}
	return ok
}

// handle counts one completion and records it in the batch.
func (r *run) handle(c completion) {
	r.tally.sent(&c)
	switch {
	case c.blocked != "":
		// The page says the crawler is blocked: not a result, the URL
		// stays queued.
		r.halt(verdict.StopBlocked, c.blocked)
		r.cancelWork(errStopped)
		return
	case c.fatal != "":
		// The fetcher cannot go on: not a result either.
		r.halt(verdict.StopError, c.fatal)
		r.cancelWork(errStopped)
		return
	case c.class == 0:
		switch {
		case c.noBudget:
			r.halt(verdict.StopMaxRequests, verdict.MaxRequestsDetail(r.e.s.MaxRequests))
		case !r.stopping:
			// Cancelled by a trip: first in line when the run goes on.
			r.sched.putBack(c.q)
		}
		return // not finished: the URL stays queued
	}
	r.tally.result(&c)
	r.notes.page(&c)
	links := c.links
	if c.due != nil {
		links = c.due
	}
	if len(links) > 0 || len(c.skips) > 0 {
		if err := r.sched.enqueue(links, c.skips, r.stopping); err != nil {
			r.fail(err) // the page stays queued with its links
			return
		}
	}
	r.sched.finish(Done{Seq: c.q.Seq, Entry: c.q.Entry, Failed: c.class == verdict.ClassFailure, Items: c.items,
		Touched: c.touched, Memo: c.memo, ForgetMemo: c.forgetMemo})
	r.count(c)
}

var errStopped = errors.New("run stopping")

// count feeds a result to the breaker. A failure that lands while the run
// is paused belongs to the outage and goes back to the queue at once.
func (r *run) count(c completion) {
	paused := r.brk.phase == phasePaused
	trip, tripped := r.brk.record(c.class, c.q)
	if !tripped {
		trip, tripped = r.brk.recordItems(c.usableItems, c.unusableItems)
	}
	switch {
	case paused:
		r.requeue(r.brk.outage())
	case tripped && !r.stopping:
		r.tripped(trip)
	}
}

// tripped handles a stop rule that fired. With pause-and-probe the run
// pauses: requests in flight are cancelled and go back to the queue, and so
// do the URLs that failed in the outage, which are not charged as coverage
// gaps. Without it — or in a retry pass, which reports queue_empty because
// the first pass emptied the queue — the run stops.
func (r *run) tripped(trip verdict.Trip) {
	requests := r.tally.requests.Total
	switch {
	case r.retryPass:
		r.e.log.Warn("stop rule tripped in the retry pass", "stop", trip.Stop, "detail", trip.Detail, "request", requests)
		r.halt(verdict.StopQueueEmpty, "retry pass ended early: "+trip.Detail)
		r.cancelWork(errStopped)
	case !r.brk.enabled():
		r.e.log.Warn("stop rule tripped", "stop", trip.Stop, "detail", trip.Detail, "request", requests)
		r.halt(trip.Stop, trip.Detail)
		r.cancelWork(errStopped)
	default:
		r.brk.trip(r.e.d.Clock.Now(), requests, trip)
		r.e.log.Warn(fmt.Sprintf("tripped at request %d: %d/%d failed", requests, trip.Failed, trip.Of),
			"stop", trip.Stop, "detail", trip.Detail)
		r.requeue(r.brk.outage())
		r.phaseCancel()
	}
}

// requeue puts URLs that failed in an outage back first in line and takes
// them off the coverage gaps.
func (r *run) requeue(qs []Queued) {
	r.tally.requeued(qs)
	r.sched.retry(qs)
}

// pause waits out the pause, then starts a probe. A deadline or a signal
// during the pause ends the run at once.
func (r *run) pause(ctx context.Context) {
	requests := r.tally.requests.Total
	r.brk.pausing(r.e.d.Clock.Now(), requests)
	r.e.log.Warn(fmt.Sprintf("paused %s", r.brk.policy.Pause), "request", requests, "queued_in_memory", r.sched.queued())
	if err := r.e.d.Clock.Sleep(ctx, r.brk.policy.Pause); err != nil {
		r.interrupt(ctx)
		return
	}
	r.brk.probe()
	r.newPhase()
}

// judgeProbe acts on a finished probe: the run goes on, pauses again, or
// stops for good on the rule that tripped; a failed probe's failures go
// back to the queue.
func (r *run) judgeProbe() {
	requests := r.tally.requests.Total
	resumed, trip, giveUp := r.brk.verdictOnProbe(r.e.d.Clock.Now(), requests)
	r.e.log.Warn(fmt.Sprintf("probe %d: %d/%d failed", r.brk.story.Probes, r.brk.probeFailed, r.brk.probeOf), "request", requests)
	if resumed {
		r.e.log.Warn("resumed", "request", requests)
		return
	}
	r.requeue(r.brk.outage())
	if giveUp {
		detail := fmt.Sprintf("%s; gave up after %d failed probes", trip.Detail, r.brk.story.FailedProbes())
		r.e.log.Warn("gave up", "stop", trip.Stop, "detail", detail)
		r.halt(trip.Stop, detail)
		r.cancelWork(errStopped)
	}
}

// flush commits everything: the batch in flight and the current one (it
// takes two rounds at most: the one in flight, then the current one).
func (r *run) flush() {
	for r.sched.flushing() {
		r.sched.send()
		r.committed(r.sched.w.wait())
	}
}

// committed takes a writer's result.
func (r *run) committed(res committed) {
	counts, err := r.sched.settle(res)
	if err != nil {
		r.fail(err)
		return
	}
	// A duplicate is told at the end of the run: a key whose holder the
	// traversal did not link moves when it completes, and is none.
	if d := r.tally.committed(counts); d != nil {
		r.firstDup = d
	}
}

// beginRetryPass waits retry_pass_delay and queues the URLs that failed,
// once per run. It reports whether there is a pass to run.
func (r *run) beginRetryPass(ctx context.Context) bool {
	if r.retryPass || len(r.tally.failed) == 0 {
		return false
	}
	if r.budget.exhausted() {
		r.halt(verdict.StopMaxRequests, verdict.MaxRequestsDetail(r.e.s.MaxRequests))
		return false
	}
	r.retryPass = true
	r.e.log.Info("retry pass", "urls", len(r.tally.failed), "after", r.e.s.RetryPassDelay)
	if err := r.e.d.Clock.Sleep(ctx, r.e.s.RetryPassDelay); err != nil {
		r.interrupt(ctx)
		return false
	}
	moved, err := r.sched.requeueFailed()
	if err != nil {
		r.fail(err)
		return false
	}
	return moved
}

// interrupt stops the run because its context ended.
func (r *run) interrupt(ctx context.Context) {
	r.halt(verdict.StopInterrupted, InterruptedDetail(context.Cause(ctx)))
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
	r.halt(verdict.StopError, err.Error())
	r.cancelWork(errStopped)
}

// judgeDrift ends a run that read item pages but could use none of them
// on error_rate, however few they were: the markup drift rule judges its
// window only from error_min_samples on, and a small site whose redesign
// broke every selector must not end success with no rows.
func (r *run) judgeDrift() {
	t := r.tally
	if r.e.s.Thresholds.MaxUnusableRate <= 0 || t.usableItems > 0 || t.unusableItems == 0 ||
		(r.stop != verdict.StopQueueEmpty && r.stop != verdict.StopMaxRequests) {
		return
	}
	r.stop, r.detail = verdict.StopErrorRate, verdict.AllUnusableDetail(t.unusableItems)
}

// halt sets the run's stop; the first stop wins.
func (r *run) halt(s verdict.Stop, detail string) {
	if r.stopping {
		return
	}
	r.stopping = true
	r.stop, r.detail = s, detail
}

// result is what the run came to, with what the store says is left.
func (r *run) result(fin Finish) Result {
	res := Result{Crawl: verdict.Crawl{Stop: r.stop, Detail: r.detail, Traversal: r.traversal, Breaker: r.brk.story}}
	r.tally.fill(&res)
	r.notes.fill(&res, r.e.s.Fields)
	// The traversal is complete when its queue is empty; failed URLs wait
	// in the failed set for the next traversal.
	res.Traversal.Completed = fin.Queued == fin.Failed
	res.Traversal.Queued = fin.Queued
	res.Traversal.Gaps = fin.TraversalGaps
	if res.Breaker.Events == nil {
		res.Breaker.Events = []verdict.BreakerEvent{}
	}
	if outcome, _ := verdict.Decide(res.Facts); outcome == verdict.OutcomeFailed {
		res.Detail = verdict.FailedDetail(res.Detail, res.Facts)
	}
	r.e.log.Info("run finished", "stop", res.Stop, "detail", res.Detail, "requests", res.Requests.Total,
		"new", res.Items.New, "changed", res.Items.Changed, "gaps", res.CoverageGaps, "queued", fin.Queued)
	return res
}
