package stage

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// pagedSite serves /search?page=N in front of the catalog site: 10 item
// links a page for items 1..items, then an empty results page, or a 404.
func pagedSite(f *fixture, items int, endsWith404 bool) {
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path != "/search" {
			next.ServeHTTP(w, r)
			return
		}
		n, err := strconv.Atoi(r.URL.Query().Get("page"))
		if err != nil || n < 1 {
			http.Error(w, "bad page", http.StatusBadRequest)
			return
		}
		var b strings.Builder
		for i := (n-1)*10 + 1; i <= min(n*10, items); i++ {
			fmt.Fprintf(&b, `<article class="product_pod"><h3><a href="/catalogue/item-%d.html">%d</a></h3></article>`, i, i)
		}
		if b.Len() == 0 && endsWith404 {
			http.Error(w, strings.Repeat("no such page ", 50), http.StatusNotFound)
			return
		}
		if b.Len() == 0 {
			b.WriteString("<p>No results.</p>")
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body>%s%s</body></html>", b.String(), strings.Repeat("<p>search</p>", 40))
	})
}

const pagedExtraction = `
[listing]
item_links = "article.product_pod h3 a"
pages = { param = "page", start = 1 }

[item]
key = "upc"

[item.fields]
title = { css = "div.product_main h1", required = true }
price = { css = "div.product_main p.price_color", type = "float64", regex = '[0-9]+\.[0-9]+', required = true }
upc   = { css = "table tr:nth-child(1) td", required = true }
`

func TestPages_FollowsThePageParameterToAnEmptyPageOrA404(t *testing.T) {
	for _, endsWith404 := range []bool{false, true} {
		t.Run(fmt.Sprintf("404=%v", endsWith404), func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 35})
			pagedSite(f, 35, endsWith404)
			cfg := f.configOf(pagedExtraction, nil, "\n[export]\ntombstones = true\n", f.srv.URL+"/search")
			rep := f.run(cfg, Options{})
			expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
			// Pages 1-4 hold the 35 items; page 5 ends the chain. An
			// empty page 5 is a gap in the first traversal, which cannot
			// tell it from a page that failed (see chains_test.go).
			wantGaps := 0
			if !endsWith404 {
				wantGaps = 1
			}
			if rep.Items.New != 35 || rep.Requests.Total != 5+35 || rep.CoverageGaps != wantGaps {
				t.Fatalf("items %+v, requests %d, gaps %+v", rep.Items, rep.Requests.Total, rep.Gaps)
			}
			assertItemsMatchSite(t, f, 35)
			// The end of the chain is no gap, so a removal is seen.
			f.site.Remove(12)
			rep = f.run(cfg, Options{})
			if rep.Items.Removed != 1 {
				t.Fatalf("removed %d, want 1", rep.Items.Removed)
			}
		})
	}
}

func TestPages_AFirstPageThatIsGoneIsAGap(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 5})
	pagedSite(f, 0, true)
	rep := f.run(f.configOf(pagedExtraction, nil, "", f.srv.URL+"/search"), Options{})
	if !hasGap(rep, f.srv.URL+"/search?page=1") || rep.Outcome != verdict.OutcomeFailed {
		t.Fatalf("%s (%s), gaps %+v: a start page the site has no page for fails the run", rep.Outcome, rep.Stop, rep.Gaps)
	}
}
