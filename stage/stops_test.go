package stage

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// Tests of the stops, named after the documentation's sentences.

func TestQueueEmpty_NoURLIsLeftToFetch(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 50})
	rep := f.run(f.config(nil, ""), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 50 || rep.Requests.OK != 53 || rep.Requests.Total != 53 || rep.CoverageGaps != 0 {
		t.Fatalf("want 50 new items from 3 listing pages and 50 item pages, got %+v", rep)
	}
	if !rep.Productive || !rep.Traversal.Started || !rep.Traversal.Completed || rep.Traversal.Queued != 0 {
		t.Fatalf("traversal = %+v productive=%v", rep.Traversal, rep.Productive)
	}
	// The next run starts a new traversal and finds nothing new.
	rep = f.run(f.config(nil, ""), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 0 || rep.Items.Unchanged != 50 || rep.Productive || rep.EmptyRunStreak != 1 || rep.Traversal.ID != 2 {
		t.Fatalf("second run: %+v", rep)
	}
}

func TestQueueEmpty_IncludesTheRetriesTheRunScheduledAndWaitedFor(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 40})
	// Items 5 and 6 fail through their inline retries, then recover before
	// the retry pass.
	var healed atomic.Bool
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if id, ok := itemID(r); ok && (id == 5 || id == 6) && !healed.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
	clock := &retryPassClock{onSleep: func() { healed.Store(true) }}
	rep := f.run(f.config(map[string]string{"retries": "1", "retry_pass_delay": `"1h"`}, ""), Options{Clock: clock})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 40 || rep.CoverageGaps != 0 || rep.Requests.Failed != 2 {
		t.Fatalf("the retry pass must fetch the two failed items: %+v", rep)
	}
	if clock.slept != time.Hour {
		t.Fatalf("the run must wait retry_pass_delay before the pass, waited %s", clock.slept)
	}
}

// retryPassClock makes the retry-pass wait instant and records it.
type retryPassClock struct {
	crawl.SystemClock
	slept   time.Duration
	onSleep func()
}

func (c *retryPassClock) Sleep(ctx context.Context, d time.Duration) error {
	if d >= time.Minute {
		c.slept += d
		c.onSleep()
		return ctx.Err()
	}
	return c.SystemClock.Sleep(ctx, d)
}

func TestQueueEmpty_ARetryPassThatTripsAStopRuleReportsQueueEmpty(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 200})
	// Every 7th item fails for good: the first pass never sees 10 failures
	// in a row, the retry pass sees nothing else.
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if id, ok := itemID(r); ok && id%7 == 0 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		next.ServeHTTP(w, r)
	})
	cfg := f.config(map[string]string{"retries": "0", "max_consecutive_failures": "10", "concurrency": "1"}, "")
	rep := f.run(cfg, Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if !strings.HasPrefix(rep.Detail, "retry pass ended early: 10 requests in a row failed") {
		t.Fatalf("detail = %q", rep.Detail)
	}
	if rep.CoverageGaps != 28 || rep.Items.New != 200-28 {
		t.Fatalf("28 items fail for good and stay gaps: %+v", rep)
	}
}

func TestMaxRequests_TheRequestBudgetRanOut(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 100})
	rep := f.run(f.config(nil, ""), Options{MaxRequests: 20})
	expect(t, rep, verdict.StopMaxRequests, verdict.OutcomeSuccess, 2)
	if rep.Detail != "Reached max requests limit (20)" || rep.Requests.Total != 20 {
		t.Fatalf("detail %q after %d requests", rep.Detail, rep.Requests.Total)
	}
	if got := f.site.Requests(); got != 20 {
		t.Fatalf("the site saw %d page requests, want 20", got)
	}
	if rep.Traversal.Queued == 0 || rep.Traversal.Completed {
		t.Fatalf("unfinished URLs must wait in the queue: %+v", rep.Traversal)
	}
	// The next run resumes the traversal where the budget ran out.
	rep2 := f.run(f.config(map[string]string{"max_requests": "0"}, ""), Options{})
	expect(t, rep2, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep2.Traversal.Started || rep2.Items.New+rep.Items.New != 100 {
		t.Fatalf("resume: %+v after %+v", rep2.Items, rep.Items)
	}
}

func TestConsecutiveFailures_RequestsInARowFailedAfterTheirRetries(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 300})
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 503, From: 41})
	cfg := f.config(map[string]string{"retries": "1", "max_consecutive_failures": "25", "max_error_rate": "0"}, "")
	rep := f.run(cfg, Options{})
	expect(t, rep, verdict.StopConsecutiveFailures, verdict.OutcomePartial, 3)
	if rep.Detail != "25 requests in a row failed after retries" {
		t.Fatalf("detail = %q", rep.Detail)
	}
	if rep.Requests.Retried < 25 {
		t.Fatalf("each failed URL was retried once inline: %+v", rep.Requests)
	}
	if rep.Items.New == 0 || rep.Traversal.Queued == 0 {
		t.Fatalf("items before the outage stay stored, the rest stays queued: %+v", rep)
	}
}

func TestErrorRate_TheShareOfRequestsThatFailedPassedMaxErrorRate(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 400})
	// From the 60th request on, every other item page fails: 50 %.
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 502, From: 60,
		Match: func(n int64, r *http.Request) bool { id, ok := itemID(r); return ok && id%2 == 0 }})
	cfg := f.config(map[string]string{"retries": "0", "max_consecutive_failures": "0"}, "")
	rep := f.run(cfg, Options{})
	expect(t, rep, verdict.StopErrorRate, verdict.OutcomePartial, 3)
	if !strings.HasSuffix(rep.Detail, "requests failed (threshold 35%)") || !strings.Contains(rep.Detail, "of the last") {
		t.Fatalf("detail = %q", rep.Detail)
	}
}

func TestErrorRate_AStubOutageTripsAndNoStubBecomesAnItem(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 500})
	// The site "goes down" answering 200 with a 200-byte stub.
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStub, From: 150})
	cfg := f.config(map[string]string{"retries": "1"}, "")
	rep := f.run(cfg, Options{})
	if rep.Stop != verdict.StopErrorRate && rep.Stop != verdict.StopConsecutiveFailures {
		t.Fatalf("a stub outage must trip a stop rule, got %s (%s)", rep.Stop, rep.Detail)
	}
	if rep.Outcome != verdict.OutcomePartial {
		t.Fatalf("outcome = %s", rep.Outcome)
	}
	stubs := f.site.Served(catalogsite.FaultStub)
	if stubs == 0 || stubs > 120 {
		t.Fatalf("stub pages served = %d; the run must stop within the window", stubs)
	}
	// Every stored item came from a real page: 149 requests before the
	// outage include the listing pages; no stub can reach the store.
	if rep.Items.New == 0 || rep.Items.New > 149 {
		t.Fatalf("items stored = %d", rep.Items.New)
	}
	assertItemsMatchSite(t, f, rep.Items.New)
}

func TestBlocked_AMiddlewareSetTheStopReason(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 100})
	var seen atomic.Int64
	captcha := func(rc *crawl.RunContext, resp *crawl.Response) {
		if seen.Add(1) == 30 {
			rc.Stop("captcha wall after 30 pages")
		}
	}
	rep := f.run(f.config(nil, ""), Options{Middleware: []crawl.Middleware{captcha}})
	expect(t, rep, verdict.StopBlocked, verdict.OutcomePartial, 3)
	if rep.Detail != "captcha wall after 30 pages" || rep.Traversal.Queued == 0 {
		t.Fatalf("detail %q, queued %d", rep.Detail, rep.Traversal.Queued)
	}
}

func TestBlocked_ABlockRuleSelectorMarksABanPage(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if id, ok := itemID(r); ok && id == 33 {
			_, _ = w.Write([]byte(`<html><body><div id="captcha">Prove you are human</div>` + strings.Repeat("<p>padding</p>", 60) + `</body></html>`))
			return
		}
		next.ServeHTTP(w, r)
	})
	rep := f.run(f.config(nil, "\n[block]\nselectors = [\"#captcha\"]\n"), Options{})
	expect(t, rep, verdict.StopBlocked, verdict.OutcomePartial, 3)
	if !strings.Contains(rep.Detail, `matches selector "#captcha"`) || !strings.Contains(rep.Detail, "item-33") {
		t.Fatalf("detail = %q", rep.Detail)
	}
}

func TestBlocked_A401AfterWhichARefreshHookFailed(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if id, ok := itemID(r); ok && id > 20 && r.Header.Get("Authorization") != "Bearer fresh" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
	var refreshes atomic.Int64
	failing := func(ctx context.Context) (http.Header, error) {
		refreshes.Add(1)
		return nil, errTokenEndpoint
	}
	rep := f.run(f.config(nil, ""), Options{Refresh: failing})
	expect(t, rep, verdict.StopBlocked, verdict.OutcomePartial, 3)
	if !strings.Contains(rep.Detail, "refresh after HTTP 401") || !strings.Contains(rep.Detail, "token endpoint down") {
		t.Fatalf("detail = %q", rep.Detail)
	}
	// A refresh that works lets the run go on with the new header.
	f2 := newFixture(t, catalogsite.Options{Items: 60})
	f2.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if id, ok := itemID(r); ok && id > 20 && r.Header.Get("Authorization") != "Bearer fresh" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
	refreshes.Store(0)
	working := func(ctx context.Context) (http.Header, error) {
		refreshes.Add(1)
		return http.Header{"Authorization": {"Bearer fresh"}}, nil
	}
	rep = f2.run(f2.config(nil, ""), Options{Refresh: working})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 60 || refreshes.Load() != 1 {
		t.Fatalf("items %d after %d refreshes", rep.Items.New, refreshes.Load())
	}
}

type tokenError struct{}

func (tokenError) Error() string { return "token endpoint down" }

var errTokenEndpoint error = tokenError{}

func TestBlocked_AStatusListedInBlockStatuses(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 451, From: 10})
	rep := f.run(f.config(nil, "\n[block]\nstatuses = [451]\n"), Options{})
	if rep.Stop != verdict.StopBlocked || !strings.Contains(rep.Detail, "HTTP 451") {
		t.Fatalf("stop %s detail %q", rep.Stop, rep.Detail)
	}
}

func TestInterrupted_TheDeadlineStoppedTheRun(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 2000, Latency: 20 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	start := time.Now()
	rep := f.runCtx(ctx, f.config(nil, ""), Options{})
	expect(t, rep, verdict.StopInterrupted, verdict.OutcomePartial, 3)
	// ctx ends the export too (Options.Deadline would not): nothing
	// is published, and nothing is lost.
	if !strings.HasPrefix(rep.Detail, "Deadline reached") || rep.Export.Published {
		t.Fatalf("detail = %q, export %+v", rep.Detail, rep.Export)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("the run took %s to stop after its deadline", el)
	}
	// Nothing is lost: the next run resumes and stores the rest.
	rep2 := f.run(f.config(map[string]string{"concurrency": "16"}, ""), Options{})
	if rep2.Traversal.Started || rep.Items.New+rep2.Items.New != 2000 {
		t.Fatalf("resume stored %d after %d", rep2.Items.New, rep.Items.New)
	}
}

func TestInterrupted_AfterARequestSucceededIsPartialEvenWhenNotProductive(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 300})
	f.run(f.config(nil, ""), Options{})
	// The second traversal finds nothing new and is cut short.
	ctx, cancel := context.WithCancelCause(context.Background())
	var pages atomic.Int64
	stopAt := func(rc *crawl.RunContext, resp *crawl.Response) {
		if pages.Add(1) == 50 {
			cancel(errSignal)
		}
	}
	rep := f.runCtx(ctx, f.config(nil, ""), Options{Middleware: []crawl.Middleware{stopAt}})
	expect(t, rep, verdict.StopInterrupted, verdict.OutcomePartial, 3)
	if rep.Productive || rep.Detail != "Interrupted by SIGINT" {
		t.Fatalf("productive=%v detail=%q", rep.Productive, rep.Detail)
	}
}

type signalError struct{}

func (signalError) Error() string { return "Interrupted by SIGINT" }

var errSignal error = signalError{}

func TestInterrupted_BeforeAnyRequestSucceededFails(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultHang})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	rep := f.runCtx(ctx, f.config(nil, ""), Options{})
	expect(t, rep, verdict.StopInterrupted, verdict.OutcomeFailed, 4)
}

func TestError_SetupRaisedAnError(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	cfg := f.config(nil, "")
	// The storage path is a file: the state cannot be opened.
	if err := writeFile(cfg.Storage, "not a folder"); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), cfg, Options{})
	if err == nil || rep.Stop != verdict.StopError || rep.Outcome != verdict.OutcomeFailed {
		t.Fatalf("report %+v, err %v", rep, err)
	}
}
