package stage

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// chainSite serves a pages chain in front of the catalog site, 10 item
// links a page for items 1..items: HTML at /search?page=N and JSON at
// /api/search?page=N ({"items": [{"url": ...}], "page": N}). Past the last
// page it answers as past says; a page of override answers as that
// handler does instead.
type chainSite struct {
	f     *fixture
	items int
	mu    sync.Mutex
	past  pastEnd
	pages map[int]http.HandlerFunc
}

// pastEnd is how a chainSite answers past its last page.
type pastEnd string

const (
	pastEmpty         pastEnd = "empty"          // an empty results page, or {"items": []}
	pastNoResults     pastEnd = "no-results"     // an empty page marked <p class="no-results">
	pastStatus404     pastEnd = "404"            // 404
	pastRepeat        pastEnd = "repeat"         // the last page again, for every number
	pastFirst         pastEnd = "first"          // page 1's items, answered 200, for every number
	pastRedirectFirst pastEnd = "redirect-first" // a redirect to ?page=1
	pastRedirectBase  pastEnd = "redirect-base"  // a redirect to the listing without the parameter
)

func newChainSite(f *fixture, items int, past pastEnd) *chainSite {
	s := &chainSite{f: f, items: items, past: past, pages: map[int]http.HandlerFunc{}}
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path != "/search" && r.URL.Path != "/api/search" {
			next.ServeHTTP(w, r)
			return
		}
		s.serve(w, r)
	})
	return s
}

// override makes page n answer as h does; a nil h restores it.
func (s *chainSite) override(n int, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h == nil {
		delete(s.pages, n)
		return
	}
	s.pages[n] = h
}

// setItems changes how many items the chain lists.
func (s *chainSite) setItems(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = n
}

func (s *chainSite) serve(w http.ResponseWriter, r *http.Request) {
	isJSON := r.URL.Path == "/api/search"
	raw := r.URL.Query().Get("page")
	n, err := strconv.Atoi(raw)
	if raw == "" {
		n, err = 1, nil
	}
	if err != nil || n < 1 {
		http.Error(w, "bad page", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	h, past, items := s.pages[n], s.past, s.items
	s.mu.Unlock()
	lastPage := (items + 9) / 10
	if h != nil {
		h(w, r)
		return
	}
	shown := n
	if n > lastPage {
		switch past {
		case pastStatus404:
			http.Error(w, strings.Repeat("no such page ", 50), http.StatusNotFound)
			return
		case pastRepeat:
			shown = lastPage
		case pastFirst:
			shown = 1
		case pastRedirectFirst:
			http.Redirect(w, r, r.URL.Path+"?page=1", http.StatusFound)
			return
		case pastRedirectBase:
			http.Redirect(w, r, r.URL.Path, http.StatusFound)
			return
		}
	}
	var ids []int
	for i := (shown-1)*10 + 1; i <= min(shown*10, items); i++ {
		ids = append(ids, i)
	}
	if isJSON {
		writeChainJSON(w, n, ids)
		return
	}
	var b strings.Builder
	for _, i := range ids {
		fmt.Fprintf(&b, `<article class="product_pod"><h3><a href="/catalogue/item-%d.html">%d</a></h3></article>`, i, i)
	}
	if len(ids) == 0 {
		if past == pastNoResults {
			b.WriteString(`<p class="no-results">No results.</p>`)
		} else {
			b.WriteString("<p>No results.</p>")
		}
	}
	writeChainHTML(w, b.String())
}

func writeChainHTML(w http.ResponseWriter, inner string) {
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(w, "<html><body>%s%s</body></html>", inner, strings.Repeat("<p>search</p>", 40))
}

func writeChainJSON(w http.ResponseWriter, n int, ids []int) {
	items := make([]map[string]any, 0, len(ids))
	for _, i := range ids {
		items = append(items, map[string]any{"url": fmt.Sprintf("/catalogue/item-%d.html", i)})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"items": items, "page": n})
}

// jsonAnswer answers body as a JSON document.
func jsonAnswer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}
}

// botChallenge answers a 200 HTML page that holds no listing: what a bot
// wall or a consent interstitial shows in place of page 2.
func botChallenge(w http.ResponseWriter, _ *http.Request) {
	writeChainHTML(w, "<h1>Checking your browser before accessing the shop</h1><noscript>Enable JavaScript</noscript>")
}

const jsonChainExtraction = `
[listing]
format = "json"
item_links = "items[].url"
pages = { param = "page", start = 1 }

[item]
key = "upc"

[item.fields]
title = { css = "div.product_main h1", required = true }
price = { css = "div.product_main p.price_color", type = "float64", regex = '[0-9]+\.[0-9]+', required = true }
upc   = { css = "table tr:nth-child(1) td", required = true }
`

const tombstonesOn = "\n[export]\ntombstones = true\n"

// chainConfig is a config for the chain at path (/search or /api/search).
func (s *chainSite) config(path string) (extraction, start string) {
	if path == "/api/search" {
		return jsonChainExtraction, s.f.srv.URL + path
	}
	return pagedExtraction, s.f.srv.URL + path
}

func TestChains_APageThatYieldsNothingInsideAChainIsAGapAndRemovesNothing(t *testing.T) {
	cases := []struct {
		name, path string
		answer     http.HandlerFunc
	}{
		{"html bot challenge", "/search", botChallenge},
		{"json error object", "/api/search", jsonAnswer(`{"error": "rate limited, try again later"}`)},
		{"json items null", "/api/search", jsonAnswer(`{"items": null, "page": 2}`)},
		{"json items of another shape", "/api/search", jsonAnswer(`{"items": "temporarily unavailable", "page": 2}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 35})
			s := newChainSite(f, 35, pastEmpty)
			extraction, start := s.config(tc.path)
			cfg := f.configOf(extraction, nil, tombstonesOn, start)
			// Two traversals: the second knows where the chain ended.
			for range 2 {
				f.run(cfg, Options{})
			}
			s.override(2, tc.answer)
			rep := f.run(cfg, Options{})
			page2 := start + "?page=2"
			if rep.Items.Removed != 0 || !hasGap(rep, page2) {
				t.Fatalf("removed %d, gaps %+v: page 2 yielded nothing, so the traversal is not clean and nothing is removed",
					rep.Items.Removed, rep.Gaps)
			}
			if n := f.site.PageRequests("/catalogue/item-15.html"); n != 2 {
				t.Fatalf("item 15 (page 2) fetched %d times, want 2 (the first two runs)", n)
			}
		})
	}
}

func TestChains_AnHTMLPageThatHeldItemsIsAGapOnceThenTheEnd(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 35})
	s := newChainSite(f, 35, pastEmpty)
	cfg := f.configOf(pagedExtraction, nil, tombstonesOn, f.srv.URL+"/search")
	// The first traversal cannot tell the empty page 5 from a page that
	// failed: no earlier traversal read it.
	rep := f.run(cfg, Options{})
	if rep.Items.New != 35 || rep.CoverageGaps != 1 || !hasGap(rep, f.srv.URL+"/search?page=5") {
		t.Fatalf("first traversal: items %+v, gaps %+v; want 35 items and page 5 a gap", rep.Items, rep.Gaps)
	}
	// The second finds it empty again: the end, and the traversal is clean.
	rep = f.run(cfg, Options{})
	if rep.CoverageGaps != 0 || rep.Traversal.Gaps != 0 {
		t.Fatalf("second traversal: gaps %+v; want page 5 taken as the end", rep.Gaps)
	}
	// The catalog shrinks to 3 pages: page 4 held 5 items and yields none.
	for id := 31; id <= 35; id++ {
		f.site.Remove(id)
	}
	s.setItems(30)
	rep = f.run(cfg, Options{})
	want := "page 4 yields nothing; it held 5 items in the last traversal"
	if rep.Items.Removed != 0 || rep.CoverageGaps != 1 || !strings.Contains(rep.Gaps[0].Reason, want) {
		t.Fatalf("items %+v, gaps %+v; want no removal and page 4 a gap saying %q", rep.Items, rep.Gaps, want)
	}
	// Empty again: the end; the 5 items are removed.
	rep = f.run(cfg, Options{})
	if rep.Items.Removed != 5 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, gaps %+v; want the 5 items removed after the second empty page 4", rep.Items, rep.Gaps)
	}
}

func TestChains_ListingEndMarksTheEndOfAnHTMLChain(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 35})
	s := newChainSite(f, 35, pastNoResults)
	cfg := f.configOf(strings.Replace(pagedExtraction, "pages = {", "end = \"p.no-results\"\npages = {", 1), nil, tombstonesOn, f.srv.URL+"/search")
	rep := f.run(cfg, Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 35 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, gaps %+v; want page 5 the end by [listing] end", rep.Items, rep.Gaps)
	}
	// A page that does not match end and yields nothing is a gap, even in
	// the middle of a chain whose previous traversal it ended.
	s.override(3, botChallenge)
	rep = f.run(cfg, Options{})
	if rep.Items.Removed != 0 || !hasGap(rep, f.srv.URL+"/search?page=3") {
		t.Fatalf("removed %d, gaps %+v", rep.Items.Removed, rep.Gaps)
	}
}

func TestChains_AJSONEmptyArrayEndsTheChainCleanly(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 35})
	s := newChainSite(f, 35, pastEmpty)
	extraction, start := s.config("/api/search")
	cfg := f.configOf(extraction, nil, tombstonesOn, start)
	rep := f.run(cfg, Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 35 || rep.Requests.Total != 5+35 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, requests %d, gaps %+v", rep.Items, rep.Requests.Total, rep.Gaps)
	}
	f.site.Remove(12)
	if rep = f.run(cfg, Options{}); rep.Items.Removed != 1 {
		t.Fatalf("removed %d, want item 12", rep.Items.Removed)
	}
}

func TestChains_AClientErrorPastTheLastPageEndsTheChainWithoutAGap(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusGone, http.StatusRequestedRangeNotSatisfiable} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 35})
			s := newChainSite(f, 35, pastEmpty)
			s.override(5, func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, `{"code": "rest_post_invalid_page_number"}`, status)
			})
			extraction, start := s.config("/api/search")
			rep := f.run(f.configOf(extraction, nil, tombstonesOn, start), Options{})
			expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
			if rep.Items.New != 35 || rep.CoverageGaps != 0 || rep.Requests.Neutral != 1 {
				t.Fatalf("items %+v, requests %+v, gaps %+v; want page 5 a neutral end", rep.Items, rep.Requests, rep.Gaps)
			}
		})
	}
}

func TestChains_AnEndlessTailEndsAndTheNextTraversalRereadsPageOne(t *testing.T) {
	for _, past := range []pastEnd{pastRepeat, pastFirst, pastRedirectFirst, pastRedirectBase} {
		for _, path := range []string{"/search", "/api/search"} {
			t.Run(string(past)+path, func(t *testing.T) {
				f := newFixture(t, catalogsite.Options{Items: 35})
				s := newChainSite(f, 35, past)
				extraction, start := s.config(path)
				if path == "/search" {
					extraction = strings.Replace(extraction, "pages = {", "end = \"p.no-results\"\npages = {", 1)
				}
				cfg := f.configOf(extraction, map[string]string{"max_requests": "100"}, tombstonesOn, start)
				rep := f.run(cfg, Options{})
				expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
				if rep.Items.New != 35 || rep.CoverageGaps != 0 || rep.Requests.Total > 4+3+35 {
					t.Fatalf("items %+v, requests %+v, gaps %+v; want the chain ended past page 4", rep.Items, rep.Requests, rep.Gaps)
				}
				// A change on page 1 reaches the next run's export.
				f.site.SetPrice(3, 1234.5)
				rep = f.run(cfg, Options{})
				if rep.Items.Changed != 1 || !rep.Export.Published || rep.Items.Removed != 0 {
					t.Fatalf("items %+v, export %+v; want item 3's change exported", rep.Items, rep.Export)
				}
			})
		}
	}
}
