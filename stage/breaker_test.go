package stage

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// pauseClock makes pauses instant and lets a test act at each pause;
// every other wait (backoff) is real.
type pauseClock struct {
	crawl.SystemClock
	pause   time.Duration
	pauses  atomic.Int64
	onPause func(n int64)
}

func (c *pauseClock) Sleep(ctx context.Context, d time.Duration) error {
	if d == c.pause {
		n := c.pauses.Add(1)
		if c.onPause != nil {
			c.onPause(n)
		}
		return ctx.Err()
	}
	return c.SystemClock.Sleep(ctx, d)
}

// outage is a site that answers every page with a 200-byte stub while
// down is set.
func outage(f *fixture) *atomic.Bool {
	var down atomic.Bool
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStub, Match: func(int64, *http.Request) bool { return down.Load() }})
	return &down
}

func kinds(b verdict.Breaker) string {
	var k []string
	for _, e := range b.Events {
		k = append(k, e.Kind)
	}
	return strings.Join(k, " ")
}

// TestTheNight is the practitioners' night: the site falls over twice,
// answering 200 with a 200-byte stub; the run trips, pauses, probes,
// resumes from the same place, and ends with every item stored and none
// from a stub page.
func TestTheNight(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 2000})
	down := outage(f)
	// Outage 1 starts at request 400 and lasts through one failed probe;
	// outage 2 starts at request 1300 and is over by the first probe.
	var outages atomic.Int64
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		switch n := f.site.Requests(); {
		case n == 400 && outages.Load() == 0, n == 1300 && outages.Load() == 1:
			outages.Add(1)
			down.Store(true)
		}
		next.ServeHTTP(w, r)
	})
	var stubsAt []int64
	clock := &pauseClock{pause: time.Minute, onPause: func(n int64) {
		stubsAt = append(stubsAt, f.site.Served(catalogsite.FaultStub))
		if n == 2 || n == 3 {
			down.Store(false)
		}
	}}
	cfg := f.config(map[string]string{"pause": `"1m"`, "retries": "1", "concurrency": "8"}, "")
	start := time.Now()
	rep := f.run(cfg, Options{Clock: clock})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 2000 || rep.CoverageGaps != 0 {
		t.Fatalf("every item stored, no gap: %+v, %d gaps %v", rep.Items, rep.CoverageGaps, rep.Gaps)
	}
	assertItemsMatchSite(t, f, 2000) // and none from a stub page
	if rep.Breaker.Trips != 2 || rep.Breaker.Probes != 3 {
		t.Fatalf("breaker = %d trips, %d probes: %s", rep.Breaker.Trips, rep.Breaker.Probes, kinds(rep.Breaker))
	}
	if got, want := kinds(rep.Breaker), "trip pause probe pause probe resume trip pause probe resume"; got != want {
		t.Fatalf("breaker story = %q, want %q", got, want)
	}
	for i, e := range rep.Breaker.Events {
		if e.Kind != verdict.EventProbe {
			continue
		}
		// A probe is bounded in requests: from the pause before it to its
		// end, at most probe_requests went out.
		if sent := e.Request - rep.Breaker.Events[i-1].Request; e.Of > 20 || sent > 20 {
			t.Fatalf("a probe counted %d results and sent %d requests, more than probe_requests", e.Of, sent)
		}
	}
	stubs := f.site.Served(catalogsite.FaultStub)
	t.Logf("the night: %d requests, %d on stub pages over 2 outages (at each pause: %v), %d items, %s (pauses instant)",
		rep.Requests.Total, stubs, stubsAt, rep.Items.New, time.Since(start).Round(time.Millisecond))

	// Per outage: 25 failed URLs with their one retry (50 requests, the
	// error_min_samples), plus the URLs in flight and finished but not yet
	// counted (up to 2 x 8, with their retries); plus the one failed probe
	// of 20 requests (a probe makes no retries).
	if stubs > 2*(2*25+2*2*8)+20 {
		t.Fatalf("%d requests went to stub pages", stubs)
	}
}

// TestASiteThatNeverComesBack gives up after exactly max_probes probes of
// at most probe_requests each, on the rule that tripped; the run stored
// nothing new, so it failed (rule 4) and the notify command runs once with
// the verdict on stdin.
func TestASiteThatNeverComesBack(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 500})
	notified := filepath.Join(f.dir, "notified.json")
	cfg := f.config(map[string]string{"pause": `"1m"`, "retries": "0", "probe_requests": "5", "max_probes": "3"},
		"\n[notify]\ncommand = \"cat > notified.json; echo $DATABREW_OUTCOME >> calls\"\n")
	f.run(cfg, Options{})
	if _, err := os.Stat(notified); err == nil {
		t.Fatal("a successful run must not notify")
	}
	// The next night the site goes down for good after 60 requests.
	f.site.ResetStats()
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 503, From: 61})
	clock := &pauseClock{pause: time.Minute}
	rep := f.run(cfg, Options{Clock: clock})
	// Whichever rule trips first (results arrive out of order) is the stop.
	if !rep.Stop.IsStopRule() || rep.Outcome != verdict.OutcomeFailed || rep.Rule != 4 {
		t.Fatalf("verdict = %s (%s, rule %d): %s", rep.Outcome, rep.Stop, rep.Rule, rep.Detail)
	}
	// The rule's detail, then the run's first failure (the run failed).
	if !regexp.MustCompile(`; gave up after 3 failed probes; the first failure: http://\S+/catalogue/(item|page)-\d+\.html answered HTTP 503 Service Unavailable$`).MatchString(rep.Detail) {
		t.Fatalf("detail = %q", rep.Detail)
	}
	if got := kinds(rep.Breaker); got != "trip pause probe pause probe pause probe give_up" {
		t.Fatalf("breaker story = %q", got)
	}
	for _, e := range rep.Breaker.Events {
		if e.Kind == verdict.EventProbe && (e.Failed != 5 || e.Of != 5) {
			t.Fatalf("probe = %+v, want 5 of 5 failed", e)
		}
	}
	// 60 healthy requests; 25 failures in a row to trip, or 33 when late
	// healthy results keep resetting that count and the error rate trips
	// first (35 % of 93); up to 4 in flight; then 3 probes of 5.
	if rep.Requests.Total > 60+33+4+3*5 {
		t.Fatalf("%d requests for a site that stopped answering", rep.Requests.Total)
	}
	if rep.CoverageGaps != 0 || rep.Traversal.Queued == 0 {
		t.Fatalf("an outage charges no gaps and keeps the queue: %d gaps, %d queued", rep.CoverageGaps, rep.Traversal.Queued)
	}
	raw, err := os.ReadFile(notified)
	if err != nil {
		t.Fatalf("notify command did not run: %v", err)
	}
	var got verdict.RunReport
	if err := json.Unmarshal(raw, &got); err != nil || got.RunID != rep.RunID || got.Outcome != verdict.OutcomeFailed {
		t.Fatalf("notify stdin = %s (%v)", raw, err)
	}
	if calls, _ := os.ReadFile(filepath.Join(f.dir, "calls")); string(calls) != "failed\n" {
		t.Fatalf("notify ran %q times", calls)
	}
}

func TestADeadlineDuringAPauseEndsTheRunAtOnce(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 300})
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStub, From: 60})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	// The deadline passes while the run waits out its one-hour pause.
	clock := &pausedClock{pause: time.Hour, paused: make(chan struct{})}
	go func() {
		<-clock.paused
		cancel(context.DeadlineExceeded)
	}()
	done := make(chan verdict.RunReport, 1)
	go func() {
		// From request 60 every page is a stub; ten in a row trip the
		// rule however the results of the requests in flight interleave.
		cfg := f.config(map[string]string{"pause": `"1h"`, "retries": "0", "max_consecutive_failures": "10"}, "")
		done <- f.runCtx(ctx, cfg, Options{Clock: clock})
	}()
	var rep verdict.RunReport
	select {
	case rep = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the run did not end after its deadline passed during a one-hour pause")
	}
	if rep.Stop != verdict.StopInterrupted || !strings.HasPrefix(rep.Detail, "Deadline reached") {
		t.Fatalf("stop = %s (%s)", rep.Stop, rep.Detail)
	}
	if got := kinds(rep.Breaker); got != "trip pause" {
		t.Fatalf("breaker story = %q", got)
	}
	if rep.Outcome != verdict.OutcomePartial || rep.CoverageGaps != 0 || rep.Traversal.Queued == 0 {
		t.Fatalf("report = %s, %d gaps, %d queued", rep.Outcome, rep.CoverageGaps, rep.Traversal.Queued)
	}
}

// pausedClock really waits, and closes paused when the run starts its
// pause.
type pausedClock struct {
	crawl.SystemClock
	pause  time.Duration
	paused chan struct{}
	once   sync.Once
}

func (c *pausedClock) Sleep(ctx context.Context, d time.Duration) error {
	if d == c.pause {
		c.once.Do(func() { close(c.paused) })
	}
	return c.SystemClock.Sleep(ctx, d)
}

func Test404sDuringAProbeAreNeutral(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 400})
	down := outage(f)
	var gone atomic.Bool
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultNotFound,
		Match: func(int64, *http.Request) bool { return gone.Load() }})
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if f.site.Requests() == 100 {
			down.Store(true)
		}
		next.ServeHTTP(w, r)
	})
	// At the pause the outage becomes 404s: the probe counts nothing, and
	// passes. Then the site is fine again.
	var probeSaw404 atomic.Bool
	clock := &pauseClock{pause: time.Minute, onPause: func(int64) {
		down.Store(false)
		gone.Store(true)
	}}
	mw := func(rc *crawl.RunContext, resp *crawl.Response) {
		if resp.Status == http.StatusNotFound && gone.Load() {
			probeSaw404.Store(true)
			if f.site.Served(catalogsite.FaultNotFound) >= 20 {
				gone.Store(false)
			}
		}
	}
	rep := f.run(f.config(map[string]string{"pause": `"1m"`, "retries": "0"}, ""), Options{Clock: clock, Middleware: []crawl.Middleware{mw}})
	if got := kinds(rep.Breaker); got != "trip pause probe resume" {
		t.Fatalf("breaker story = %q", got)
	}
	probe := rep.Breaker.Events[2]
	if !probeSaw404.Load() || probe.Failed != 0 || probe.Of != 0 {
		t.Fatalf("probe = %+v: 404s neither fail nor count", probe)
	}
	if rep.Stop != verdict.StopQueueEmpty {
		t.Fatalf("stop = %s (%s)", rep.Stop, rep.Detail)
	}
}
