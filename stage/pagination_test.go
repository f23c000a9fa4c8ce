package stage

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// offsetAPI serves /api/products?offset=N&limit=10 in front of the catalog
// site, commercetools-style: {"limit", "offset", "count", "total",
// "results": [{"url": ...}]}, an empty results array past the end.
func offsetAPI(f *fixture, items int) {
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path != "/api/products" {
			next.ServeHTTP(w, r)
			return
		}
		offset, err := strconv.Atoi(r.URL.Query().Get("offset"))
		if err != nil || offset < 0 {
			http.Error(w, "bad offset", http.StatusBadRequest)
			return
		}
		results := []map[string]any{}
		for id := offset + 1; id <= min(offset+10, items); id++ {
			results = append(results, map[string]any{"url": fmt.Sprintf("/catalogue/item-%d.html", id)})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"limit": 10, "offset": offset, "count": len(results), "total": items, "results": results})
	})
}

const offsetExtraction = `
[listing]
format = "json"
item_links = "results[].url"
pages = { param = "offset", start = 0, step = 10 }

[item]
key = "upc"

[item.fields]
title = { css = "div.product_main h1", required = true }
upc   = { css = "table tr:nth-child(1) td", required = true }
`

func TestPagination_OffsetPagesWithAStep(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 35})
	offsetAPI(f, 35)
	rep := f.run(f.configOf(offsetExtraction, nil, tombstonesOn, f.srv.URL+"/api/products?limit=10"), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	// offset 0, 10, 20, 30 hold the 35 items; offset 40 is empty: the end.
	if rep.Items.New != 35 || rep.Requests.Total != 5+35 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, requests %+v, gaps %+v", rep.Items, rep.Requests, rep.Gaps)
	}
}

// linkAPI serves /wp-json/wc/store/v1/products?page=N in front of the
// catalog site, as the WooCommerce Store API does: a JSON array of
// products, the next page only in a Link header, and HTTP 400 past the
// last page (as the WordPress REST API answers).
func linkAPI(f *fixture, items int) {
	const path = "/wp-json/wc/store/v1/products"
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path != path {
			next.ServeHTTP(w, r)
			return
		}
		page, err := strconv.Atoi(r.URL.Query().Get("page"))
		if r.URL.Query().Get("page") == "" {
			page, err = 1, nil
		}
		last := (items + 9) / 10
		if err != nil || page < 1 || page > last {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"code":"rest_invalid_param","message":"Invalid parameter(s): page"}`))
			return
		}
		var products []map[string]any
		for id := (page-1)*10 + 1; id <= min(page*10, items); id++ {
			products = append(products, map[string]any{"id": id, "permalink": fmt.Sprintf("/catalogue/item-%d.html", id)})
		}
		if page < last {
			w.Header().Add("Link", fmt.Sprintf(`<%s%s?page=%d>; rel="next"`, f.srv.URL, path, page+1))
		}
		if page > 1 {
			w.Header().Add("Link", fmt.Sprintf(`<%s%s?page=%d>; rel="prev"`, f.srv.URL, path, page-1))
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(products)
	})
}

func TestPagination_TheLinkHeaderNamesTheNextPage(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 35})
	linkAPI(f, 35)
	extraction := `
[listing]
format = "json"
item_links = "[].permalink"
next_page = { header = "link" }

[item]
key = "upc"

[item.fields]
title = { css = "div.product_main h1", required = true }
upc   = { css = "table tr:nth-child(1) td", required = true }
`
	rep := f.run(f.configOf(extraction, nil, tombstonesOn, f.srv.URL+"/wp-json/wc/store/v1/products"), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	// 4 pages and no request past the last: the Link header says where
	// the chain ends.
	if rep.Items.New != 35 || rep.Requests.Total != 4+35 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, requests %+v, gaps %+v", rep.Items, rep.Requests, rep.Gaps)
	}
}

func TestPagination_ABadRequestPastTheLastPageEndsAPagesChain(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 35})
	linkAPI(f, 35)
	extraction := `
[listing]
format = "json"
item_links = "[].permalink"
pages = { param = "page", start = 1 }

[item]
key = "upc"

[item.fields]
title = { css = "div.product_main h1", required = true }
upc   = { css = "table tr:nth-child(1) td", required = true }
`
	cfg := f.configOf(extraction, nil, tombstonesOn, f.srv.URL+"/wp-json/wc/store/v1/products")
	rep := f.run(cfg, Options{})
	if rep.Items.New != 35 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, gaps %+v; want page 5's HTTP 400 the end, no gap", rep.Items, rep.Gaps)
	}
	f.site.Remove(7)
	if rep = f.run(cfg, Options{}); rep.Items.Removed != 1 {
		t.Fatalf("removed %d, want item 7: the traversal is clean", rep.Items.Removed)
	}
}
