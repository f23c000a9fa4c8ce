package stage

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// Tests of the crawl's manners with a site: robots.txt, politeness,
// charsets, gzip, redirects and broken responses.

func TestRobotsTxtExcludesDisallowedLinks(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	f.site.SetRobots("User-agent: *\nDisallow: /catalogue/item-1\n") // items 1, 10-19
	rep := f.run(f.config(nil, ""), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Requests.RobotsExcluded != 11 || rep.Items.New != 9 {
		t.Fatalf("robots.txt must exclude 11 items: %+v %+v", rep.Requests, rep.Items)
	}
	if f.site.PageRequests("/catalogue/item-12.html") != 0 {
		t.Fatal("a disallowed page was fetched")
	}
	if f.site.RobotsRequests() != 1 {
		t.Fatalf("robots.txt fetched %d times, want once", f.site.RobotsRequests())
	}
	// respect_robots = false fetches everything.
	g := newFixture(t, catalogsite.Options{Items: 20})
	g.site.SetRobots("User-agent: *\nDisallow: /\n")
	rep = g.run(g.config(map[string]string{"respect_robots": "false"}, ""), Options{})
	if rep.Items.New != 20 || g.site.RobotsRequests() != 0 {
		t.Fatalf("respect_robots=false: %+v, robots fetched %d", rep.Items, g.site.RobotsRequests())
	}
}

func TestPerHostDelaySpacesRequests(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 9, PerPage: 20})
	start := time.Now()
	rep := f.run(f.config(map[string]string{"delay": `"30ms"`, "concurrency": "8"}, ""), Options{})
	if rep.Requests.Total != 10 {
		t.Fatalf("requests = %d", rep.Requests.Total)
	}
	// Ten requests to one host, 30ms apart, take at least 270ms even with
	// eight workers.
	if el := time.Since(start); el < 270*time.Millisecond {
		t.Fatalf("10 requests with a 30ms delay took %s", el)
	}
}

func TestNonUTF8PagesAreDecoded(t *testing.T) {
	for _, opts := range []catalogsite.Options{
		{Items: 14, Charset: "iso-8859-1"},
		{Items: 14, Charset: "windows-1252", CharsetInMetaOnly: true},
		{Items: 14, Gzip: true},
	} {
		f := newFixture(t, opts)
		rep := f.run(f.config(nil, ""), Options{})
		if rep.Items.New != 14 {
			t.Fatalf("%+v: %+v", opts, rep.Items)
		}
		// Item 7's title has non-ASCII letters; stored titles must equal the
		// site's own UTF-8 text.
		assertItemsMatchSite(t, f, 14)
	}
}

func TestRedirectsOutOfScopeAreNotFollowed(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if id, ok := itemID(r); ok && id == 4 {
			http.Redirect(w, r, "http://elsewhere.invalid/item", http.StatusFound)
			return
		}
		if id, ok := itemID(r); ok && id == 5 {
			http.Redirect(w, r, "/catalogue/item-6.html", http.StatusMovedPermanently)
			return
		}
		next.ServeHTTP(w, r)
	})
	rep := f.run(f.config(nil, ""), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	// Item 4 is neutral (not followed); item 5 follows to item 6's page,
	// whose item is then stored a second time, unchanged.
	if rep.Requests.Neutral != 1 || rep.Items.New != 18 || rep.Items.Unchanged != 1 {
		t.Fatalf("requests %+v items %+v", rep.Requests, rep.Items)
	}
}

func TestBrokenResponsesAreFailures(t *testing.T) {
	for _, kind := range []catalogsite.FaultKind{catalogsite.FaultTruncated, catalogsite.FaultReset, catalogsite.FaultHang, catalogsite.FaultEmpty} {
		t.Run(kind.String(), func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 20})
			f.site.AddFault(catalogsite.Fault{Kind: kind, PathPrefix: "/catalogue/item-3.html"})
			rep := f.run(f.config(map[string]string{"retries": "1", "timeout": `"200ms"`}, ""), Options{})
			expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
			// Two tries inline and two in the retry pass, all failures.
			if rep.Requests.Failed != 2 || rep.Requests.Retried != 2 || rep.CoverageGaps != 1 || rep.Items.New != 19 {
				t.Fatalf("requests %+v gaps %d items %+v", rep.Requests, rep.CoverageGaps, rep.Items)
			}
			if !strings.Contains(rep.Gaps[0].URL, "item-3.html") {
				t.Fatalf("gaps = %+v", rep.Gaps)
			}
		})
	}
}

func TestOverSizeBodyIsNeutral(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if id, ok := itemID(r); ok && id == 8 {
			_, _ = w.Write([]byte(strings.Repeat(padding, 200)))
			return
		}
		next.ServeHTTP(w, r)
	})
	rep := f.run(f.config(map[string]string{"max_body_bytes": `"64KiB"`}, ""), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Requests.Neutral != 1 || rep.Requests.Failed != 0 || rep.Items.New != 19 {
		t.Fatalf("requests %+v items %+v", rep.Requests, rep.Items)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 5})
	var hits atomic.Int64
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if id, ok := itemID(r); ok && id == 2 && hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
	start := time.Now()
	rep := f.run(f.config(map[string]string{"retries": "2", "max_backoff": `"5s"`}, ""), Options{})
	if rep.Items.New != 5 || rep.Requests.Retried != 1 {
		t.Fatalf("items %+v requests %+v", rep.Items, rep.Requests)
	}
	if el := time.Since(start); el < time.Second {
		t.Fatalf("Retry-After: 1 was not honoured; the run took %s", el)
	}
}

func TestTheDefaultUserAgentNamesTheStage(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 2})
	var agents sync.Map
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		agents.Store(r.UserAgent(), true)
		next.ServeHTTP(w, r)
	})
	f.run(f.config(nil, ""), Options{})
	agents.Range(func(k, _ any) bool {
		if ua := k.(string); !strings.HasPrefix(ua, "databrew-stage/") {
			t.Errorf("a request went out with User-Agent %q", ua)
		}
		return true
	})
	f.run(f.config(map[string]string{"user_agent": `"shopbot/2 (+ops@example.com)"`}, ""), Options{})
	if _, ok := agents.Load("shopbot/2 (+ops@example.com)"); !ok {
		t.Error("the configured User-Agent was not sent")
	}
}
