package stage

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
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

// bigListing is a listing page linking n item pages of the catalog site.
func bigListing(n int) []byte {
	var b bytes.Buffer
	b.WriteString("<html><body>")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `<article class="product_pod"><h3><a href="item-%d.html">%d</a></h3></article>`+"\n", i, i)
	}
	b.WriteString("</body></html>")
	return b.Bytes()
}

// serveAt answers path with body in front of the catalog site.
func (f *fixture) serveAt(path string, body []byte) {
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path == path {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write(body)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func TestHostile_AListingPageOf100000LinksIsReadUpToMaxLinksPerPage(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 50})
	f.serveAt("/catalogue/big.html", bigListing(100_000))
	cfg := f.config(map[string]string{"max_requests": "30"}, "", f.srv.URL+"/catalogue/big.html")
	rep := f.run(cfg, Options{})
	expect(t, rep, verdict.StopMaxRequests, verdict.OutcomeSuccess, 2)
	if rep.Requests.Total != 30 || !hasGap(rep, cfg.StartURLs[0]) || !strings.Contains(rep.Gaps[0].Reason, "max_links_per_page (10000)") {
		t.Fatalf("requests %d, gaps %+v; want 30 and the listing a gap past max_links_per_page", rep.Requests.Total, rep.Gaps)
	}
	if rep.Traversal.Queued != 10_000-29 {
		t.Fatalf("%d URLs queued, want the first 10000 links less the 29 fetched", rep.Traversal.Queued)
	}
}

func TestHostile_ALinkOrAKeyOverItsLimitIsAGapNotARunFailure(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	longPath := "/catalogue/" + strings.Repeat("x", 100_000) + ".html"
	listing := bigListing(20)
	listing = bytes.Replace(listing, []byte("</body>"), []byte(`<article class="product_pod"><h3><a href="`+longPath+`">long</a></h3></article></body>`), 1)
	f.serveAt("/catalogue/page-1.html", listing)
	key := strings.Repeat("k", 40_000)
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		switch {
		case r.URL.Path == "/catalogue/page-1.html":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write(listing)
		case len(r.URL.Path) > 1000:
			http.Error(w, "boom", http.StatusInternalServerError) // never asked: too long to queue
		case r.URL.Path == "/catalogue/item-7.html":
			rec := httptestRecorder(next, r)
			body := strings.Replace(rec, "<td>", "<td>"+key, 1)
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(body))
		default:
			next.ServeHTTP(w, r)
		}
	})
	rep := f.run(f.config(nil, ""), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 19 || rep.CoverageGaps != 2 {
		t.Fatalf("items %+v, gaps %d %+v; want 19 items and 2 gaps", rep.Items, rep.CoverageGaps, rep.Gaps)
	}
	reasons := rep.Gaps[0].Reason + " | " + rep.Gaps[1].Reason
	for _, want := range []string{"item link of 100", "is longer than 8192", "item key of 400"} {
		if !strings.Contains(reasons, want) {
			t.Fatalf("gap reasons %q do not say %q", reasons, want)
		}
	}
	for _, g := range rep.Gaps {
		if len(g.URL) > 300 {
			t.Fatalf("a gap lists a URL of %d bytes", len(g.URL))
		}
	}
}

// httptestRecorder returns what next answers to r.
func httptestRecorder(next http.Handler, r *http.Request) string {
	rec := &bodyRecorder{header: http.Header{}}
	next.ServeHTTP(rec, r)
	return rec.body.String()
}

type bodyRecorder struct {
	header http.Header
	body   bytes.Buffer
}

func (b *bodyRecorder) Header() http.Header         { return b.header }
func (b *bodyRecorder) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bodyRecorder) WriteHeader(int)             {}

// sleepRecorder is a clock whose sleeps return at once and are recorded.
type sleepRecorder struct {
	crawl.SystemClock
	mu     sync.Mutex
	sleeps []time.Duration
}

func (c *sleepRecorder) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	return ctx.Err()
}

func TestHostile_MaxBackoffZeroRetriesAtOnceWhateverRetryAfterSays(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 5})
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 503, RetryAfter: "31536000", PathPrefix: "/catalogue/item-3.html"})
	clock := &sleepRecorder{}
	cfg := f.config(map[string]string{"backoff": `"0s"`, "max_backoff": `"0s"`, "retries": "2", "retry_pass_delay": `"0s"`}, "")
	rep := f.run(cfg, Options{Clock: clock})
	if rep.Requests.Retried < 2 || rep.CoverageGaps != 1 {
		t.Fatalf("requests %+v, gaps %d: want the item retried and left a gap", rep.Requests, rep.CoverageGaps)
	}
	for _, d := range clock.sleeps {
		if d != 0 {
			t.Fatalf("slept %s with max_backoff = \"0s\": sleeps %v", d, clock.sleeps)
		}
	}
	// With a cap, Retry-After is honoured up to it.
	clock = &sleepRecorder{}
	cfg = f.config(map[string]string{"backoff": `"0s"`, "max_backoff": `"7s"`, "retries": "1", "retry_pass_delay": `"0s"`}, "")
	f.run(cfg, Options{Clock: clock})
	if !containsDuration(clock.sleeps, 7*time.Second) {
		t.Fatalf("sleeps %v, want a Retry-After of a year capped at 7s", clock.sleeps)
	}
}

func containsDuration(ds []time.Duration, want time.Duration) bool {
	for _, d := range ds {
		if d == want {
			return true
		}
	}
	return false
}

func TestHostile_MaxRedirectsZeroFollowsNone(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 5})
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, catalogsite.StartURL(f.srv.URL), http.StatusFound)
			return
		}
		next.ServeHTTP(w, r)
	})
	rep := f.run(f.config(map[string]string{"max_redirects": "0"}, "", f.srv.URL+"/start"), Options{})
	if rep.Requests.Total != 1 || rep.Items.New != 0 || !hasGap(rep, f.srv.URL+"/start") || !strings.Contains(rep.Gaps[0].Reason, "not followed (max_redirects = 0)") {
		t.Fatalf("requests %d, items %+v, gaps %+v: want the redirect itself, not followed", rep.Requests.Total, rep.Items, rep.Gaps)
	}
	g := newFixture(t, catalogsite.Options{Items: 5})
	g.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, catalogsite.StartURL(g.srv.URL), http.StatusFound)
			return
		}
		next.ServeHTTP(w, r)
	})
	if rep := g.run(g.config(map[string]string{"max_redirects": "1"}, "", g.srv.URL+"/start"), Options{}); rep.Items.New != 5 {
		t.Fatalf("max_redirects = 1: %+v", rep.Items)
	}
}

func TestHostile_CrawlDelayIsHonouredUpToMaxCrawlDelay(t *testing.T) {
	for _, tt := range []struct {
		name, robots, maxDelay string
		spacing                time.Duration
		warn                   bool
	}{
		{"with delay = 0s", "User-agent: *\nCrawl-delay: 0.04\n", `"30s"`, 40 * time.Millisecond, false},
		{"capped", "User-agent: *\nCrawl-delay: 100000\n", `"50ms"`, 50 * time.Millisecond, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 5})
			f.site.SetRobots(tt.robots)
			// The times requests leave the crawler: a loaded machine may
			// delay one on its way and so bunch up when they arrive.
			var mu sync.Mutex
			var at []time.Time
			base := &http.Transport{}
			t.Cleanup(base.CloseIdleConnections)
			sent := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if r.URL.Path != "/robots.txt" {
					mu.Lock()
					at = append(at, time.Now())
					mu.Unlock()
				}
				return base.RoundTrip(r)
			})
			var logs bytes.Buffer
			cfg := f.config(map[string]string{"delay": `"0s"`, "max_crawl_delay": tt.maxDelay, "concurrency": "4"}, "")
			start := time.Now()
			rep := f.run(cfg, Options{Transport: sent, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if rep.Items.New != 5 || len(at) != 6 {
				t.Fatalf("items %+v, %d requests", rep.Items, len(at))
			}
			// The limiter lets the first request through and starts the
			// rest the delay apart, so the sixth leaves at least five
			// delays (less some timer slack) after the run started. The
			// run's start is the base, not the first request's arrival
			// here: a loaded machine may hold a request between the
			// limiter and the transport, which only makes it later.
			if span, want := at[len(at)-1].Sub(start), 5*tt.spacing; span < want-10*time.Millisecond {
				t.Fatalf("the sixth request left %s after the run started, want at least %s", span, want)
			}
			if warned := strings.Contains(logs.String(), "asks for a Crawl-delay of 27h46m40s; waiting max_crawl_delay (50ms)"); warned != tt.warn {
				t.Fatalf("WARN about the capped delay = %v, want %v:\n%s", warned, tt.warn, logs.String())
			}
		})
	}
}

func TestHostile_TwoPagesWithOneKeyDoNotChurn(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	// Item 7's page shows item 3's UPC at another price; which of the two
	// finishes last alternates from run to run.
	var slow atomic.Value
	slow.Store("")
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path == slow.Load().(string) {
			time.Sleep(100 * time.Millisecond)
		}
		if r.URL.Path != "/catalogue/item-7.html" {
			next.ServeHTTP(w, r)
			return
		}
		r3 := r.Clone(r.Context())
		r3.URL.Path = "/catalogue/item-3.html"
		body := httptestRecorder(next, r3)
		body = regexp.MustCompile(`£[0-9.]+`).ReplaceAllString(body, "£999.99")
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(body))
	})
	var logs bytes.Buffer
	cfg := f.config(nil, "\n[export]\ntombstones = true\n")
	for run, last := range []string{"/catalogue/item-3.html", "/catalogue/item-7.html", "/catalogue/item-3.html", "/catalogue/item-7.html"} {
		slow.Store(last)
		logs.Reset()
		rep := f.run(cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if rep.Items.DuplicateKeys != 1 || !strings.Contains(logs.String(), "/catalogue/item-7.html") || !strings.Contains(logs.String(), "/catalogue/item-3.html") {
			t.Fatalf("run %d: duplicate_keys %d; want 1 and a WARN naming both pages:\n%s", run+1, rep.Items.DuplicateKeys, logs.String())
		}
		if run == 0 {
			if rep.Items.New != 19 {
				t.Fatalf("run 1 stored %d items, want 19", rep.Items.New)
			}
			continue
		}
		if rep.Productive || rep.Items.Changed != 0 || rep.Items.Removed != 0 || rep.Export.Published {
			t.Fatalf("run %d: productive %v, %+v, export %+v: the key must not change hands", run+1, rep.Productive, rep.Items, rep.Export)
		}
	}
	if got := strings.Count(logs.String(), "is yielded by"); got != 1 {
		t.Fatalf("%d WARNs about the duplicate in one run, want 1", got)
	}
}

func TestHostile_AGapNamesTheURLThatAnsweredAndWhereItCameFrom(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 5})
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, "/catalogue/page-1.html", http.StatusFound)
		case "/catalogue/page-1.html":
			http.Error(w, strings.Repeat("forbidden ", 100), http.StatusForbidden)
		default:
			next.ServeHTTP(w, r)
		}
	})
	rep := f.run(f.config(map[string]string{"retries": "0"}, "", f.srv.URL+"/start"), Options{})
	want := verdict.Gap{URL: f.srv.URL + "/catalogue/page-1.html", Reason: "HTTP 403 (redirected from " + f.srv.URL + "/start)"}
	if len(rep.Gaps) != 1 || rep.Gaps[0] != want {
		t.Fatalf("gaps = %+v, want %+v", rep.Gaps, want)
	}
}

func TestMarkupDrift_ASiteThatSwapsItsMarkupMidRunDoesNotEndSuccess(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 300})
	var items atomic.Int64
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if _, ok := itemID(r); ok && items.Add(1) > 40 {
			// The redesign: a JavaScript shell where the product was.
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(`<html><body><div id="app"></div>` + strings.Repeat("<script>/* app */</script>", 30) + `</body></html>`))
			return
		}
		next.ServeHTTP(w, r)
	})
	rep := f.run(f.config(map[string]string{"concurrency": "1"}, ""), Options{})
	want := "item pages were unusable (threshold 50%): the markup may have changed"
	if rep.Stop != verdict.StopErrorRate || !strings.Contains(rep.Detail, want) || rep.Outcome == verdict.OutcomeSuccess {
		t.Fatalf("verdict %s (%s): %q; want error_rate with the drift detail, not success", rep.Outcome, rep.Stop, rep.Detail)
	}
	if rep.Items.New != 40 {
		t.Fatalf("stored %d items, want the 40 read before the redesign", rep.Items.New)
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
