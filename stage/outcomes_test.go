package stage

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// Tests of the outcome rules, named after the documentation's sentences.

func TestFailed_AllStartURLsFailedForGoodIsNotASilentQueueEmptySuccess(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 500, PathPrefix: "/catalogue/page-"})
	rep := f.run(f.config(map[string]string{"retries": "2"}, ""), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeFailed, 1)
	if rep.Requests.OK != 0 || rep.CoverageGaps != 1 || rep.Requests.Total != 6 {
		t.Fatalf("3 tries, a retry pass of 3 more, one gap: %+v", rep)
	}
	if len(rep.Gaps) != 1 || rep.Gaps[0].Reason != "HTTP 500" {
		t.Fatalf("gaps = %+v", rep.Gaps)
	}
}

func TestFailed_AStartURLWhoseListingYieldsNothing(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	// Page 2 exists and is a healthy page, but lists nothing.
	rep := f.run(f.config(nil, "", f.srv.URL+"/catalogue/page-2.html"), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeFailed, 1)
	if rep.Requests.OK != 1 {
		t.Fatalf("requests = %+v", rep.Requests)
	}
}

func TestFailed_AStartURLTheSiteHasNoPageForIsAGap(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	rep := f.run(f.config(nil, "", f.srv.URL+"/catalogue/no-such-page.html"), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeFailed, 1)
	if rep.CoverageGaps != 1 || rep.Requests.Neutral != 1 {
		t.Fatalf("a 404 start URL is a coverage gap: %+v", rep)
	}
}

func TestSuccess_AResumedTraversalThatReachesOnlyAnEmptyLastPage(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20, EmptyLastPage: true})
	// Run 1 stores the 20 items while the empty last page hangs; it is
	// interrupted once they are stored, leaving only that page queued.
	var release atomic.Bool
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path == "/catalogue/page-2.html" && !release.Load() {
			<-r.Context().Done()
			return
		}
		next.ServeHTTP(w, r)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := func(p crawl.Progress) {
		if p.New == 20 {
			cancel()
		}
	}
	rep := f.runCtx(ctx, f.config(nil, ""), Options{Progress: progress})
	if rep.Stop != verdict.StopInterrupted || rep.Items.New != 20 || rep.Traversal.Queued != 1 {
		t.Fatalf("run 1: %+v", rep)
	}
	release.Store(true)
	rep = f.run(f.config(nil, ""), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Requests.Total != 1 || rep.Traversal.Started || !rep.Traversal.Completed {
		t.Fatalf("run 2 must fetch only the empty last page: %+v", rep)
	}
}

func TestSuccess_ARunCanSucceedWithCoverageGaps(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if id, ok := itemID(r); ok && (id == 10 || id == 40) {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		if id, ok := itemID(r); ok && id == 20 {
			// A healthy page missing its required price: unusable.
			_, _ = w.Write([]byte(`<html><body><div class="product_main"><h1>No price</h1></div><table><tr><td>X</td></tr></table>` + string(make([]byte, 0)) + padding + `</body></html>`))
			return
		}
		next.ServeHTTP(w, r)
	})
	rep := f.run(f.config(nil, ""), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.CoverageGaps != 3 || rep.Items.New != 57 || len(rep.Gaps) != 3 {
		t.Fatalf("2 failed items and 1 unusable page are gaps: %+v", rep)
	}
}

const padding = `<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum.</p>`

func Test404sInTheMiddleOfFailuresDoNotCount(t *testing.T) {
	oddFails := func(f *fixture) {
		f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 500,
			Match: func(n int64, r *http.Request) bool { id, ok := itemID(r); return ok && id%2 == 1 }})
	}
	policy := map[string]string{"retries": "0", "max_consecutive_failures": "5", "max_error_rate": "0", "concurrency": "1"}
	// Odd items fail; even items answer 404. Neutral results neither count
	// nor reset: five failures trip despite the 404s between them.
	f := newFixture(t, catalogsite.Options{Items: 100})
	oddFails(f)
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultNotFound,
		Match: func(n int64, r *http.Request) bool { id, ok := itemID(r); return ok && id%2 == 0 }})
	rep := f.run(f.config(policy, ""), Options{})
	if rep.Stop != verdict.StopConsecutiveFailures {
		t.Fatalf("stop = %s (%s)", rep.Stop, rep.Detail)
	}
	if rep.Requests.Failed != 5 || rep.Requests.Neutral < 4 {
		t.Fatalf("five failures with 404s between them must trip: %+v", rep.Requests)
	}
	// The same failures with healthy pages between them never trip.
	g := newFixture(t, catalogsite.Options{Items: 100})
	oddFails(g)
	rep = g.run(g.config(policy, ""), Options{})
	// (Its retry pass, which sees nothing but the 50 failures, trips and
	// reports queue_empty.)
	if rep.Stop != verdict.StopQueueEmpty || rep.Items.New != 50 || rep.Requests.Failed < 50 {
		t.Fatalf("ok results reset the counter; stop = %s (%s), %+v", rep.Stop, rep.Detail, rep.Requests)
	}
}

func TestNotStarted_TheDeadlineStoppedItBeforeItStarted(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := f.config(nil, "")
	rep, err := Run(ctx, cfg, Options{})
	if err == nil || rep.Detail != "Not started" || rep.Outcome != verdict.OutcomeFailed || rep.Started {
		t.Fatalf("report %+v err %v", rep, err)
	}
	if _, err := os.Stat(cfg.Storage); !os.IsNotExist(err) {
		t.Fatalf("a config that never started must write nothing to its storage path: %v", err)
	}
}

func TestLocked_AStoragePathAnotherProcessHolds(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	cfg := f.config(nil, "")
	f.run(cfg, Options{})
	lastRun := filepath.Join(cfg.Storage, LastRunFile)
	before, err := os.ReadFile(lastRun)
	if err != nil {
		t.Fatal(err)
	}
	stopHolder := startLockHolder(t, cfg.Storage)
	defer stopHolder()
	start := time.Now()
	rep, err := Run(context.Background(), cfg, Options{LockTimeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if rep.Stop != verdict.StopError || rep.Outcome != verdict.OutcomeFailed || rep.Started {
		t.Fatalf("report = %+v", rep)
	}
	if want := cfg.Storage; !strings.Contains(rep.Detail, want) {
		t.Fatalf("detail %q must name the path %s", rep.Detail, want)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("the lock wait must be short")
	}
	after, _ := os.ReadFile(lastRun)
	if string(after) != string(before) {
		t.Fatal(".last_run.json must keep describing the last run that started")
	}
}

// fixedClock always says the same time; waits are real.
type fixedClock struct {
	crawl.SystemClock
	at time.Time
}

func (c fixedClock) Now() time.Time { return c.at }

func TestRunIDsSortByStartAndNeverRepeat(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 5})
	cfg := f.config(nil, "")
	at := time.Date(2026, 11, 30, 0, 23, 5, 0, time.UTC)
	var ids []string
	// Three runs in one second, the last two in one millisecond.
	for _, now := range []time.Time{at.Add(900 * time.Millisecond), at.Add(901 * time.Millisecond), at.Add(901 * time.Millisecond)} {
		ids = append(ids, f.run(cfg, Options{Clock: fixedClock{at: now}}).RunID)
	}
	if !slices.IsSorted(ids) || ids[0] == ids[1] || ids[1] == ids[2] {
		t.Fatalf("run ids %q do not sort by start, or repeat", ids)
	}
	if !strings.HasPrefix(ids[0], "20261130T002305.900Z-") || !strings.HasPrefix(ids[2], "20261130T002305.902Z-") {
		t.Fatalf("run ids %q", ids)
	}
}
