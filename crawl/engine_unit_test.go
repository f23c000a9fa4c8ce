package crawl_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/verdict"
)

// The engine's behaviour on a fake site and a memstore (see
// fakesite_test.go), one URL at a time unless a test says otherwise, so
// that the order of requests is known.

func expectStop(t *testing.T, res crawl.Result, stop verdict.Stop, detail string) {
	t.Helper()
	if res.Stop != stop || res.Detail != detail {
		t.Fatalf("stopped %s (%q), want %s (%q); result %+v", res.Stop, res.Detail, stop, detail, res)
	}
}

func expectFetches(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("fetched\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// kinds is the breaker's story, its events' kinds in order.
func kinds(b verdict.Breaker) string {
	k := make([]string, len(b.Events))
	for i, e := range b.Events {
		k[i] = e.Kind
	}
	return strings.Join(k, " ")
}

// urls lists URLs: listing pages, then item pages.
func urls(listings []int, items ...int) []string {
	var out []string
	for _, n := range listings {
		out = append(out, listURL(n))
	}
	for _, n := range items {
		out = append(out, itemURL(n))
	}
	return out
}

func TestEngineFetchesListingPagesFirst(t *testing.T) {
	u := newUnit(t, 3, 2)
	res := u.run()
	expectStop(t, res, verdict.StopQueueEmpty, "")
	expectFetches(t, u.site.fetches(), urls([]int{1, 2, 3}, 1, 2, 3, 4, 5, 6)...)
	if res.Items.New != 6 || res.Requests.Total != 9 || res.Requests.OK != 9 || res.CoverageGaps != 0 {
		t.Fatalf("result = %+v, want 6 new items from 9 ok requests", res)
	}
	if tr := res.Traversal; tr.ID != 1 || !tr.Started || !tr.Completed || tr.Queued != 0 {
		t.Fatalf("traversal = %+v, want traversal 1 started and completed", tr)
	}
	// The next run starts traversal 2 and finds every item unchanged.
	res = u.run()
	if tr := res.Traversal; tr.ID != 2 || !tr.Started || !tr.Completed {
		t.Fatalf("second run's traversal = %+v, want traversal 2 started and completed", tr)
	}
	if res.Items != (verdict.ItemCounts{Unchanged: 6}) {
		t.Fatalf("second run's items = %+v, want 6 unchanged", res.Items)
	}
}

func TestEngineOnManyWorkers(t *testing.T) {
	u := newUnit(t, 20, 10)
	u.settings.Concurrency = 8
	res := u.run()
	expectStop(t, res, verdict.StopQueueEmpty, "")
	if res.Items.New != 200 || res.Requests.Total != 220 || res.Requests.OK != 220 || !res.Traversal.Completed {
		t.Fatalf("result = %+v, want 200 new items from 220 ok requests", res)
	}
}

func TestEngineRetriesAPageInline(t *testing.T) {
	u := newUnit(t, 1, 3)
	u.site.answer(itemURL(1), unavailable, thePage)
	u.site.answer(itemURL(2), timeout, thePage)
	res := u.run()
	expectStop(t, res, verdict.StopQueueEmpty, "")
	expectFetches(t, u.site.fetches(), urls([]int{1}, 1, 1, 2, 2, 3)...)
	if r := res.Requests; r.Total != 6 || r.Retried != 2 || r.OK != 4 || r.Failed != 0 {
		t.Fatalf("requests = %+v, want 6, 2 of them retries, and 4 ok results", r)
	}
	if res.Items.New != 3 || res.CoverageGaps != 0 {
		t.Fatalf("result = %+v, want 3 new items and no gap", res)
	}
	if n := u.clock.sleeps(time.Millisecond); n != 2 {
		t.Fatalf("%d backoffs, want 2", n)
	}
}

func TestEngineRetryPass(t *testing.T) {
	u := newUnit(t, 1, 3)
	// Item 2 fails with its two retries, and answers in the retry pass.
	u.site.answer(itemURL(2), unavailable, unavailable, unavailable, thePage)
	res := u.run()
	expectStop(t, res, verdict.StopQueueEmpty, "")
	expectFetches(t, u.site.fetches(), urls([]int{1}, 1, 2, 2, 2, 3, 2)...)
	if u.clock.sleeps(retryPassDelay) != 1 {
		t.Fatal("the retry pass did not wait retry_pass_delay")
	}
	if r := res.Requests; r.Total != 7 || r.Failed != 1 || r.OK != 4 {
		t.Fatalf("requests = %+v, want 7 with 1 failed and 4 ok results", r)
	}
	if res.Items.New != 3 || res.CoverageGaps != 0 || !res.Traversal.Completed {
		t.Fatalf("result = %+v, want 3 new items, no gap, the traversal completed", res)
	}
}

func TestEngineLeavesAFailedURLToTheNextRun(t *testing.T) {
	u := newUnit(t, 1, 3)
	u.site.answer(itemURL(2), unavailable)
	res := u.run()
	expectStop(t, res, verdict.StopQueueEmpty, "")
	// Three attempts in the first pass, three in the retry pass.
	expectFetches(t, u.site.fetches(), urls([]int{1}, 1, 2, 2, 2, 3, 2, 2, 2)...)
	if res.CoverageGaps != 1 || len(res.Gaps) != 1 || res.Gaps[0] != (verdict.Gap{URL: itemURL(2), Reason: "HTTP 503"}) {
		t.Fatalf("gaps = %d %+v, want item 2's", res.CoverageGaps, res.Gaps)
	}
	// The traversal is complete: what is left waits in the failed set.
	if tr := res.Traversal; !tr.Completed || tr.Queued != 1 || tr.Gaps != 1 {
		t.Fatalf("traversal = %+v, want it completed with item 2 left and 1 gap", tr)
	}
	// The next run starts traversal 2 with item 2 queued again.
	u.site.answer(itemURL(2), thePage)
	res = u.run()
	if !res.Traversal.Started || res.Items.New != 1 || res.Items.Unchanged != 2 || res.CoverageGaps != 0 {
		t.Fatalf("next run = %+v, want a new traversal storing item 2", res)
	}
	if got := u.site.fetches(); got[0] != itemURL(2) {
		t.Fatalf("next run fetched %v, want item 2 first", got)
	}
}

func TestEngineStopsAtMaxRequests(t *testing.T) {
	u := newUnit(t, 3, 2)
	u.settings.MaxRequests = 4
	res := u.run()
	expectStop(t, res, verdict.StopMaxRequests, verdict.MaxRequestsDetail(4))
	expectFetches(t, u.site.fetches(), urls([]int{1, 2, 3}, 1)...)
	if tr := res.Traversal; tr.Completed || tr.Queued != 5 || res.Items.New != 1 {
		t.Fatalf("result = %+v, want 1 item stored and 5 URLs left", res)
	}
	// The next run goes on with the traversal from where it stopped.
	u.settings.MaxRequests = 0
	res = u.run()
	expectStop(t, res, verdict.StopQueueEmpty, "")
	expectFetches(t, u.site.fetches(), urls(nil, 2, 3, 4, 5, 6)...)
	if tr := res.Traversal; tr.ID != 1 || tr.Started || !tr.Completed || res.Items.New != 5 {
		t.Fatalf("result = %+v, want traversal 1 completed with the 5 items left", res)
	}
}

func TestEngineStopsOnConsecutiveFailures(t *testing.T) {
	u := newUnit(t, 3, 2)
	u.settings.Retries = 0
	u.settings.Thresholds = verdict.Thresholds{MaxConsecutiveFailures: 3, ErrorWindow: 10, ErrorMinSamples: 10}
	for n := 1; n <= 6; n++ {
		u.site.answer(itemURL(n), unavailable)
	}
	res := u.run()
	// The run failed: its detail names its first failure too.
	expectStop(t, res, verdict.StopConsecutiveFailures, verdict.ConsecutiveDetail(3)+"; the first failure: "+itemURL(1)+" answered HTTP 503 Service Unavailable")
	expectFetches(t, u.site.fetches(), urls([]int{1, 2, 3}, 1, 2, 3)...)
	// Without pause-and-probe the failures are the run's coverage gaps.
	if res.CoverageGaps != 3 || res.Traversal.Queued != 6 || res.Breaker.Trips != 0 {
		t.Fatalf("result = %+v, want 3 gaps, 6 URLs left and no breaker", res)
	}
}

func TestEngineStopsOnErrorRate(t *testing.T) {
	u := newUnit(t, 3, 2)
	u.settings.Retries = 0
	u.settings.Thresholds = verdict.Thresholds{MaxErrorRate: 0.5, ErrorWindow: 4, ErrorMinSamples: 4}
	for n := 1; n <= 6; n++ {
		u.site.answer(itemURL(n), unavailable)
	}
	res := u.run()
	// Three listing pages and item 1 fill the window at 25%; item 2 makes
	// it 2 of the last 4.
	expectStop(t, res, verdict.StopErrorRate, verdict.ErrorRateDetail(2, 4, 0.5)+"; the first failure: "+itemURL(1)+" answered HTTP 503 Service Unavailable")
	expectFetches(t, u.site.fetches(), urls([]int{1, 2, 3}, 1, 2)...)
}

// outageThresholds trip consecutive_failures at the second failure in a
// row; error_rate, judged from 10 results, does not trip first, and a
// probe fails at half its results failed.
var outageThresholds = verdict.Thresholds{MaxConsecutiveFailures: 2, MaxErrorRate: 0.5, ErrorWindow: 10, ErrorMinSamples: 10}

func TestEnginePausesProbesAndResumes(t *testing.T) {
	u := newUnit(t, 3, 2)
	u.settings.Retries = 0
	u.settings.Thresholds = outageThresholds
	u.settings.Breaker = verdict.BreakerPolicy{Pause: pause, ProbeRequests: 2, MaxProbes: 3}
	u.site.answer(itemURL(1), unavailable, thePage)
	u.site.answer(itemURL(2), unavailable, thePage)
	u.site.answer(itemURL(3), unavailable, thePage)
	res := u.run()
	expectStop(t, res, verdict.StopQueueEmpty, "")
	// The outage's URLs go back first in line, and the probe fetches them.
	// The stop rules start afresh: item 3's failure after the resume trips
	// nothing, and the retry pass fetches it.
	expectFetches(t, u.site.fetches(), urls([]int{1, 2, 3}, 1, 2, 1, 2, 3, 4, 5, 6, 3)...)
	if got := kinds(res.Breaker); got != "trip pause probe resume" || u.clock.sleeps(pause) != 1 {
		t.Fatalf("breaker = %q after %d pauses, want one trip, pause, probe and resume", got, u.clock.sleeps(pause))
	}
	if res.Items.New != 6 || res.CoverageGaps != 0 || !res.Traversal.Completed {
		t.Fatalf("result = %+v, want every item and no gap", res)
	}
}

func TestEngineGivesUpAfterMaxProbes(t *testing.T) {
	u := newUnit(t, 3, 2)
	u.settings.Retries = 0
	u.settings.Thresholds = outageThresholds
	u.settings.Breaker = verdict.BreakerPolicy{Pause: pause, ProbeRequests: 2, MaxProbes: 2}
	for n := 1; n <= 6; n++ {
		u.site.answer(itemURL(n), unavailable)
	}
	res := u.run()
	expectStop(t, res, verdict.StopConsecutiveFailures, verdict.ConsecutiveDetail(2)+"; gave up after 2 failed probes; the first failure: "+itemURL(1)+" answered HTTP 503 Service Unavailable")
	// Each probe sends probe_requests requests, without retries.
	expectFetches(t, u.site.fetches(), urls([]int{1, 2, 3}, 1, 2, 1, 2, 1, 2)...)
	if got := kinds(res.Breaker); got != "trip pause probe pause probe give_up" {
		t.Fatalf("breaker = %q, want two failed probes, then give_up", got)
	}
	// An outage is not charged as coverage gaps: its URLs wait in the queue.
	if res.CoverageGaps != 0 || res.Traversal.Queued != 6 || res.Traversal.Completed {
		t.Fatalf("result = %+v, want no gap and the 6 items queued", res)
	}
}

func TestEngineStopsWhenMiddlewareSaysBlocked(t *testing.T) {
	u := newUnit(t, 3, 2)
	u.site.answer(itemURL(3), answer{status: 200, body: "<html><body>Please solve this captcha</body></html>"})
	var runIDs []string
	u.deps.Middleware = []crawl.Middleware{func(rc *crawl.RunContext, resp *crawl.Response) {
		runIDs = append(runIDs, rc.RunID())
		if strings.Contains(string(resp.Body), "captcha") {
			rc.Stop("captcha at " + resp.URL)
		}
	}}
	res := u.run()
	expectStop(t, res, verdict.StopBlocked, "captcha at "+itemURL(3))
	expectFetches(t, u.site.fetches(), urls([]int{1, 2, 3}, 1, 2, 3)...)
	if len(runIDs) != 6 || runIDs[0] != "unit" {
		t.Fatalf("middleware saw %d responses with run ids %v, want 6 of run unit", len(runIDs), runIDs)
	}
	// The blocked page is no result: it stays queued with the rest.
	if r := res.Requests; r.Total != 6 || r.OK != 5 || res.Traversal.Queued != 4 || res.Items.New != 2 {
		t.Fatalf("result = %+v, want 5 ok results and 4 URLs left, item 3 among them", res)
	}
}

func TestEngineCountsCoverageGaps(t *testing.T) {
	u := newUnit(t, 1, 6)
	empty, gone := "http://"+siteHost+"/empty", "http://"+siteHost+"/gone"
	u.settings.StartURLs = []string{listURL(1), empty, gone}
	u.site.answer(empty, answer{status: 200, body: "<html><body><p>No products here.</p></body></html>"})
	u.site.answer(gone, answer{status: 404, body: "not found"})
	u.site.answer(itemURL(1), answer{status: 404, body: "not found"})
	u.site.answer(itemURL(2), answer{status: 410, body: "gone"})
	u.site.answer(itemURL(3), answer{status: 400, body: "bad request"})
	u.site.answer(itemURL(4), answer{err: &crawl.FetchError{Class: verdict.ClassNeutral, Reason: "body over max_body_bytes"}})
	u.site.answer(itemURL(5), answer{status: 200, body: "<html><body><div class=\"product_main\"><h1>Item 5</h1></div></body></html>"})
	res := u.run()
	expectStop(t, res, verdict.StopQueueEmpty, "")
	// A listing page that yields nothing leaves a gap whatever its status;
	// an item page does unless the site says it is gone (404, 410).
	want := []verdict.Gap{
		{URL: empty, Reason: "listing page yielded no item, item link or next page"},
		{URL: gone, Reason: "HTTP 404"},
		{URL: itemURL(3), Reason: "HTTP 400"},
		{URL: itemURL(4), Reason: "body over max_body_bytes"},
		{URL: itemURL(5), Reason: "unusable page: missing required fields price, upc"},
	}
	same := len(res.Gaps) == len(want)
	for i := 0; same && i < len(want); i++ {
		same = res.Gaps[i].URL == want[i].URL && strings.HasPrefix(res.Gaps[i].Reason, want[i].Reason)
	}
	if !same || res.CoverageGaps != len(want) || res.Traversal.Gaps != len(want) {
		t.Fatalf("%d gaps %+v, want %+v", res.CoverageGaps, res.Gaps, want)
	}
	// The empty listing page is an ok result, though a gap.
	if r := res.Requests; r.Total != 9 || r.OK != 3 || r.Neutral != 6 || res.Items.New != 1 {
		t.Fatalf("result = %+v, want 3 ok and 6 neutral results, 1 item", res)
	}
}

func TestEngineCountsDuplicateKeys(t *testing.T) {
	u := newUnit(t, 2, 3)
	u.site.answer(itemURL(5), answer{status: 200, body: itemHTML(5, "upc-2")})
	res := u.run()
	expectStop(t, res, verdict.StopQueueEmpty, "")
	if res.Items.New != 5 || res.Items.DuplicateKeys != 1 {
		t.Fatalf("items = %+v, want 5 new and 1 duplicate key", res.Items)
	}
	if log := u.log.String(); !strings.Contains(log, "held_by="+itemURL(2)+" also_at="+itemURL(5)) {
		t.Fatalf("no warning names the pages of the duplicate key:\n%s", log)
	}
}

// With error_rate off (max_error_rate = 0) a trip comes from
// consecutive_failures, and a probe fails only when all it counted failed:
// a probe of healthy pages resumes the run.
func TestEngineProbesWithErrorRateOff(t *testing.T) {
	u := newUnit(t, 3, 2)
	u.settings.Retries = 0
	u.settings.Thresholds = outageThresholds
	u.settings.Thresholds.MaxErrorRate = 0
	u.settings.Breaker = verdict.BreakerPolicy{Pause: pause, ProbeRequests: 2, MaxProbes: 3}
	u.site.answer(itemURL(1), unavailable, thePage)
	u.site.answer(itemURL(2), unavailable, thePage)
	res := u.run()
	expectStop(t, res, verdict.StopQueueEmpty, "")
	if got := kinds(res.Breaker); got != "trip pause probe resume" {
		t.Fatalf("breaker = %q, want the probe of healthy pages to resume the run", got)
	}
	if res.Items.New != 6 || res.CoverageGaps != 0 {
		t.Fatalf("result = %+v, want every item", res)
	}
}

// A redesign that breaks the item pages' markup trips error_rate with the
// drift detail, instead of ending success with no rows.
func TestEngineMarkupDriftTripsTheErrorRate(t *testing.T) {
	redesigned := answer{status: 200, body: "<html><body><div class=\"app\">Loading…</div></body></html>"}
	drift := verdict.Thresholds{MaxConsecutiveFailures: 25, MaxErrorRate: 0.35, ErrorWindow: 10, ErrorMinSamples: 6, MaxUnusableRate: 0.5}
	for _, tt := range []struct {
		name   string
		policy verdict.BreakerPolicy
		story  string
	}{
		{"without pause", verdict.BreakerPolicy{}, ""},
		{"with pause and probe", verdict.BreakerPolicy{Pause: pause, ProbeRequests: 2, MaxProbes: 2}, "trip pause probe pause probe give_up"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := newUnit(t, 5, 4)
			u.settings.Thresholds = drift
			u.settings.Breaker = tt.policy
			for n := 5; n <= 20; n++ { // items 1-4 keep their markup
				u.site.answer(itemURL(n), redesigned, redesigned, redesigned)
			}
			res := u.run()
			want := "50% of the last 8 item pages were unusable (threshold 50%): the markup may have changed"
			if res.Stop != verdict.StopErrorRate || !strings.Contains(res.Detail, want) {
				t.Fatalf("stopped %s (%q), want error_rate with the drift detail", res.Stop, res.Detail)
			}
			if got := kinds(res.Breaker); got != tt.story {
				t.Fatalf("breaker = %q, want %q", got, tt.story)
			}
			if res.Items.New != 4 {
				t.Fatalf("stored %d items, want the 4 read before the redesign", res.Items.New)
			}
		})
	}
}

// A small site whose every item page is unusable ends on error_rate, though
// its few items never fill the drift rule's window.
func TestEngineAllItemsUnusableIsNotASuccess(t *testing.T) {
	u := newUnit(t, 2, 3)
	u.settings.Thresholds.MaxUnusableRate = 0.5
	for n := 1; n <= 6; n++ {
		u.site.answer(itemURL(n), answer{status: 200, body: "<html><body><div id=\"app\"></div></body></html>"})
	}
	res := u.run()
	expectStop(t, res, verdict.StopErrorRate, verdict.AllUnusableDetail(6))
	// With the rule off, the run ends as it used to.
	u = newUnit(t, 2, 3)
	u.settings.Thresholds.MaxUnusableRate = 0
	for n := 1; n <= 6; n++ {
		u.site.answer(itemURL(n), answer{status: 200, body: "<html><body><div id=\"app\"></div></body></html>"})
	}
	expectStop(t, u.run(), verdict.StopQueueEmpty, "")
}

// A run tells its operator, once each, of a selector that matches elements
// it cannot use and of a field that found nothing on any item it read.
func TestEngineWarnsOnceOfSelectorsThatFindNothing(t *testing.T) {
	u := newUnit(t, 2, 2)
	withBrand := spec
	withBrand.Fields = append(slices.Clone(spec.Fields), extract.FieldSpec{Name: "brand", CSS: []string{"p.brand"}})
	x, err := extract.Compile(withBrand)
	if err != nil {
		t.Fatal(err)
	}
	u.deps.Readers = htmlReaders(t, x, 0)
	u.settings.Fields = []string{"title", "price", "upc", "brand"}
	u.settings.StartURLs = []string{listURL(1), listURL(2)}
	hrefless := "</ol>\n<ul class=\"pager\"><li class=\"next\"><a>next</a></li></ul>"
	for n := 1; n <= 2; n++ {
		page := strings.Replace(listingHTML([]int{2*n - 1, 2 * n}, 0), "</ol>", hrefless, 1)
		u.site.answer(listURL(n), answer{status: 200, body: page})
	}
	res := u.run()
	expectStop(t, res, verdict.StopQueueEmpty, "")
	if res.Items.New != 4 {
		t.Fatalf("stored %d items, want 4", res.Items.New)
	}
	log := u.log.String()
	for _, want := range []string{
		`next_page \"li.next a\" matches elements without a usable \"href\"`,
		`field \"brand\" found nothing on any of the 4 items read: no element matches \"p.brand\"`,
	} {
		if n := strings.Count(log, want); n != 1 {
			t.Fatalf("warned %d times of %s, want once:\n%s", n, want, log)
		}
	}
	if strings.Contains(log, `field \"title\"`) {
		t.Fatalf("warned of a field that found its value:\n%s", log)
	}

	// A last page whose next link has no href is no news when the pages
	// before it had one.
	u = newUnit(t, 2, 2)
	last := strings.Replace(listingHTML([]int{3, 4}, 0), "</ol>", hrefless, 1)
	u.site.answer(listURL(2), answer{status: 200, body: last})
	expectStop(t, u.run(), verdict.StopQueueEmpty, "")
	if log := u.log.String(); strings.Contains(log, "level=WARN") {
		t.Fatalf("warned of a next_page that yielded the next page:\n%s", log)
	}
}
