package stage

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// stateShop is a storefront whose pages carry their data only in script:
// /shop?page=N lists 10 products in window.__INITIAL_STATE__ (a JavaScript
// object literal: unquoted keys, single quotes, \u002F escapes) and in
// script#__NEXT_DATA__ (JSON); /p/N assigns the product to
// window.__INITIAL_STATE__ after other code, as a Vue storefront does.
func stateShop(f *fixture, items int) {
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		w.Header().Set("Content-Type", "text/html")
		switch {
		case r.URL.Path == "/shop":
			n, _ := strconv.Atoi(r.URL.Query().Get("page"))
			var links, cards []string
			for id := (n-1)*10 + 1; id <= min(n*10, items); id++ {
				links = append(links, fmt.Sprintf(`'\u002Fp\u002F%d'`, id))
				it, _ := f.site.Item(id)
				card, _ := json.Marshal(map[string]any{"sku": it.UPC, "name": it.Title, "price": it.Price, "href": fmt.Sprintf("/p/%d", id)})
				cards = append(cards, string(card))
			}
			fmt.Fprintf(w, `<html><head><script>var x = 1; window.__INITIAL_STATE__ = {catalog: {page: %d, items: [%s],}, user: undefined};(function(){ track(); })()</script>
<script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{"products":[%s]}}}</script></head><body>%s</body></html>`,
				n, strings.Join(links, ","), strings.Join(cards, ","), strings.Repeat("<p>shop</p>", 40))
		case strings.HasPrefix(r.URL.Path, "/p/"):
			id, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
			it, ok := f.site.Item(id)
			if err != nil || !ok {
				http.NotFound(w, r)
				return
			}
			fmt.Fprintf(w, `<html><head><script>window.__INITIAL_STATE__ = loadState();</script><script>
window.__INITIAL_STATE__ = {product: {current: {sku: '%s', title: %q, price: %v, image: '\u002Fimg\u002F%d.jpg', tags: ['a', 'b',]}}};</script></head><body>%s</body></html>`,
				it.UPC, it.Title, it.Price, id, strings.Repeat("<p>product</p>", 40))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func TestScripts_LinksFromAScriptAndFieldsFromAnotherOnItemPages(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 25})
	stateShop(f, 25)
	extraction := `
[listing]
item_links = { js = "window.__INITIAL_STATE__", json = "catalog.items" }
pages = { param = "page", start = 1 }
end = "body"

[item]
key = "sku"

[item.fields]
sku   = { js = "window.__INITIAL_STATE__", json = "product.current.sku", required = true }
title = { js = "__INITIAL_STATE__", json = "product.current.title", required = true }
price = { js = "window.__INITIAL_STATE__", json = "product.current.price", type = "float64" }
image = { js = "window.__INITIAL_STATE__", json = "product.current.image", url = true }
tags  = { js = "window.__INITIAL_STATE__", json = "product.current.tags", multiple = true }
`
	rep := f.run(f.configOf(extraction, nil, "", f.srv.URL+"/shop"), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 25 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, gaps %+v", rep.Items, rep.Gaps)
	}
	rows := readRun(t, rep.Export.Path)
	for _, r := range rows {
		it := findItem(t, f, r.key)
		if r.title != it.Title || r.price != it.Price || !strings.HasPrefix(r.values[3].(string), f.srv.URL+"/img/") {
			t.Fatalf("row %+v, site %+v", r, it)
		}
	}
}

func TestScripts_CardsFromNextData(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 25})
	stateShop(f, 25)
	extraction := `
[listing]
items = { css = "script#__NEXT_DATA__", json = "props.pageProps.products" }
pages = { param = "page", start = 1 }
end = "body"

[item]
key = "sku"

[item.fields]
sku   = { json = "sku", required = true }
title = { json = "name", required = true }
price = { json = "price", type = "float64" }
link  = { json = "href", url = true }
`
	rep := f.run(f.configOf(extraction, nil, "", f.srv.URL+"/shop"), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	// 3 pages of cards and the empty page 4: no item page is fetched.
	if rep.Items.New != 25 || rep.Requests.Total != 4 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, requests %+v, gaps %+v", rep.Items, rep.Requests, rep.Gaps)
	}
	for _, r := range readRun(t, rep.Export.Path) {
		if it := findItem(t, f, r.key); r.title != it.Title || r.price != it.Price || !strings.HasPrefix(r.url, f.srv.URL+"/p/") {
			t.Fatalf("row %+v, site %+v", r, it)
		}
	}
}

// findItem returns the site's item with this UPC.
func findItem(t *testing.T, f *fixture, upc string) catalogsite.Item {
	t.Helper()
	for _, it := range f.site.Items() {
		if it.UPC == upc {
			return it
		}
	}
	t.Fatalf("no item %q on the site", upc)
	return catalogsite.Item{}
}
