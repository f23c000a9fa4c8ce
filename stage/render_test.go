package stage

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/testkit/browsertest"
	"github.com/databrew/databrew-stage/internal/testkit/shopsites"
	"github.com/databrew/databrew-stage/verdict"
)

// TestRenderedShop: s17's listing and product pages are shells whose data
// a script fetches from an API with a signature it computes per page;
// rendered in Chromium, its config exports exactly the shop's products,
// read back with arrow-go. The pages' images, fonts and stylesheets are
// never requested; their scripts and API calls are subresources, not
// requests.
func TestRenderedShop(t *testing.T) {
	needBrowser(t)
	shop, base, rep, rows := shopRunWith(t, shopsites.Rendered, shopsites.Options{}, func(shop *shopsites.Shop, base string) string {
		return patient(shop.Config(base))
	})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.CoverageGaps != 0 {
		t.Fatalf("gaps: %+v", rep.Gaps)
	}
	expectTruth(t, shop, base, rows)
	pages := 2 + 12
	if rep.Requests.Total != pages || rep.Render == nil || rep.Render.Rendered != pages || rep.Render.Pages != "all" ||
		!strings.Contains(rep.Render.Browser, "Chrome") {
		t.Fatalf("requests %+v, render %+v; want %d documents, each rendered", rep.Requests, rep.Render, pages)
	}
	// Each page loads app.js and signs one API call.
	if rep.Requests.Subresources < 2*pages || rep.Render.Blocked.ResourceType < 3*pages {
		t.Fatalf("subresources %d, blocked %+v; want app.js and an API call per page, and its image, font and stylesheet blocked",
			rep.Requests.Subresources, rep.Render.Blocked)
	}
	for _, path := range []string{"/static/banner.png", "/static/shop.woff2", "/static/site.css"} {
		if n := shop.PageRequests(path); n != 0 {
			t.Errorf("%s was requested %d times; [render] blocks images, fonts and stylesheets by default", path, n)
		}
	}
}

// TestRenderedShopWithoutBrowser: the same shop crawled with plain HTTP
// holds no product in any page: the config of a user without a browser
// (its listing links and its sitemap) exports nothing and fails loudly on
// the markup drift rule.
func TestRenderedShopWithoutBrowser(t *testing.T) {
	plain := func(shop *shopsites.Shop, base string) string {
		text, ok := shop.PlainConfig(base)
		if !ok {
			t.Fatal("the rendered shop has no plain config")
		}
		return text
	}
	_, _, rep, rows := shopRunWith(t, shopsites.Rendered, shopsites.Options{}, plain)
	if len(rows) != 0 || rep.Items.New != 0 {
		t.Fatalf("%d rows exported; a shell holds no product", len(rows))
	}
	if rep.Stop != verdict.StopErrorRate || rep.Outcome != verdict.OutcomeFailed || !strings.Contains(rep.Detail, "the markup may have changed") {
		t.Fatalf("verdict %s (%s): %q; want failed on error_rate, the drift rule", rep.Outcome, rep.Stop, rep.Detail)
	}
	if rep.Render != nil || rep.Requests.Subresources != 0 {
		t.Fatalf("a config without [render] reports render facts: %+v, %d subresources", rep.Render, rep.Requests.Subresources)
	}
}

// renderedRun crawls a small s17 shop with its config plus extra policy
// keys.
func renderedRun(t *testing.T, opts shopsites.Options, policy string) (*shopsites.Shop, verdict.RunReport) {
	t.Helper()
	needBrowser(t)
	if opts.Products == 0 {
		opts.Products, opts.PerPage = 4, 2
	}
	shop, _, rep, _ := shopRunWith(t, shopsites.Rendered, opts, func(shop *shopsites.Shop, base string) string {
		return patient(shop.Config(base)) + policy
	})
	return shop, rep
}

// patient gives a shop config's pages 30s to render instead of 5s: on a
// loaded machine a page that times out is retried, and the counts the
// tests check would hold the retry.
func patient(config string) string {
	return strings.Replace(config, "\ntimeout = \"5s\"\n", "\ntimeout = \"30s\"\n", 1)
}

// TestRender_ThirdPartyHostNeverContacted: a script every page asks for
// from a host outside allowed_domains (a server on another loopback
// address) is blocked in the browser, never sent.
func TestRender_ThirdPartyHostNeverContacted(t *testing.T) {
	third, hits := browsertest.ThirdParty(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprintln(w, "window.tagged = true;")
	}))

	_, rep := renderedRun(t, shopsites.Options{ThirdParty: third.URL + "/tag.js"}, "")
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if n := hits.Load(); n != 0 {
		t.Fatalf("the third-party host got %d requests", n)
	}
	if pages := rep.Requests.Total; rep.Render.Blocked.OffDomain < pages {
		t.Fatalf("blocked %+v; want the third-party script of each of the %d pages off_domain", rep.Render.Blocked, pages)
	}
}

// TestRender_RobotsDisallowedScriptNotLoaded: robots.txt disallows a
// script every page asks for; the browser never requests it.
func TestRender_RobotsDisallowedScriptNotLoaded(t *testing.T) {
	shop, rep := renderedRun(t, shopsites.Options{}, "")
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if n := shop.PageRequests("/static/tracking.js"); n != 0 {
		t.Fatalf("/static/tracking.js, which robots.txt disallows, was requested %d times", n)
	}
	if pages := rep.Requests.Total; rep.Render.Blocked.Robots != pages || shop.PageRequests("/static/app.js") != int64(pages) {
		t.Fatalf("blocked %+v, app.js loaded %d times; want tracking.js blocked by robots.txt and app.js loaded on each of the %d pages",
			rep.Render.Blocked, shop.PageRequests("/static/app.js"), pages)
	}
}

// TestRender_MaxRequestsCountsDocuments: the budget counts the pages
// rendered, not the scripts and API calls each makes.
func TestRender_MaxRequestsCountsDocuments(t *testing.T) {
	shop, rep := renderedRun(t, shopsites.Options{Products: 12, PerPage: 6}, "max_requests = 5\n")
	expect(t, rep, verdict.StopMaxRequests, verdict.OutcomeSuccess, 2)
	documents := int64(0)
	for i := 1; i <= 12; i++ {
		documents += shop.PageRequests(fmt.Sprintf("/shop/p/%d.html", i))
	}
	documents += shop.PageRequests("/shop/page-1.html") + shop.PageRequests("/shop/page-2.html")
	if rep.Requests.Total != 5 || documents != 5 || rep.Requests.Subresources < 10 {
		t.Fatalf("requests %+v, %d documents served; want 5 documents and their scripts and API calls beside them", rep.Requests, documents)
	}
}

// TestRender_TimeoutOnDeadSiteTripsBreaker: item pages that never answer
// are render timeouts: failures that count toward the stop rules, so the
// breaker trips, its probe times out too, and the run stops on
// consecutive_failures instead of waiting out every page.
func TestRender_TimeoutOnDeadSiteTripsBreaker(t *testing.T) {
	needBrowser(t)
	release := make(chan struct{})
	var items atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/item-") {
			items.Add(1)
			select { // a site that accepts the connection and never answers
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!DOCTYPE html><html><body><ul class=grid>")
		for i := range 10 {
			fmt.Fprintf(w, "<li><a href=\"/item-%d\">item %d</a></li>", i, i)
		}
		fmt.Fprint(w, "</ul><p>"+strings.Repeat("A catalog page long enough to be a page. ", 20)+"</p></body></html>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	dir := t.TempDir()
	text := `name = "dead"
start_urls = ["` + srv.URL + `/"]
storage = "state"
output = "out"
[listing]
item_links = "ul.grid a"
[item.fields]
name = { css = "h1", required = true }
[render]
pages = "item"
wait_for = "h1"
[policy]
concurrency = 2
timeout = "1s"
retries = 0
max_consecutive_failures = 3
pause = "10ms"
probe_requests = 1
max_probes = 1
`
	cfg, err := config.Parse(filepath.Join(dir, "dead.toml"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(t.Context(), *cfg, Options{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	// The listing page is read with plain HTTP, so the 1s timeout bounds
	// only the item pages the browser waits for.
	expect(t, rep, verdict.StopConsecutiveFailures, verdict.OutcomeFailed, 4)
	if rep.Breaker.Trips != 1 || !strings.Contains(rep.Detail, "gave up after 1 failed probes") {
		t.Fatalf("breaker %+v, detail %q; want a trip, a failed probe, and the run given up", rep.Breaker, rep.Detail)
	}
	if rep.Render.Timeouts < 4 || !strings.Contains(rep.Detail, "render timeout") {
		t.Fatalf("render %+v, requests %+v, detail %q; want render timeouts counted as failures", rep.Render, rep.Requests, rep.Detail)
	}
	if n := items.Load(); n >= 10 {
		t.Fatalf("%d item pages requested: the breaker should have stopped the run before all 10", n)
	}
}
