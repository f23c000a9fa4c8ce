package shopsites

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The JSONAPI shop is an infinite-scroll storefront. Whatever
// Options.API says, it serves
//
//   - /api/products?page=N: {"items": [...], "next": "/api/products?page=N+1",
//     "page": N, "total": T}, "next" null on the last page; 404 past it.
//     Items are full product objects (APIFull) or {"url": "/api/products/<id>"}
//     (APILinks, APIGrid);
//   - /api/products/<id>: the full product object;
//   - /shop?page=N (N >= 1, page 1 also at /shop): HTML whose div#grid
//     links to /products/<id> and holds the next page's URL only in its
//     data-next-api attribute ("/shop?page=N+1&section_id=product-grid"),
//     absent on the last page;
//   - /products/<id>: an HTML shell with the product object in
//     script#__NEXT_DATA__ at props.pageProps.product.
//
// JSON is written like PHP's json_encode (\/ and \u00e9 escapes). A
// product object holds id (number), title, url ("/products/<id>"), price
// {amount, currency}, on_sale (bool), stock (a number, or null on every
// fifth product), tags (an array, empty on every seventh) and updated_at
// (RFC 3339). Options.API chooses the config and so the item URLs: the
// API items (APIFull, URL /products/<id>), the API's item documents
// (APILinks, URL /api/products/<id>) or the HTML grid (APIGrid, URL
// /products/<id>).
//
// Default 33 products, 10 per page; at least 1.
type jsonapiShop struct {
	opts     *Options
	products []apiProduct
}

type apiProduct struct {
	id       int
	title    string
	price    int64 // cents
	currency string
	onSale   bool
	stock    int64 // -1: null
	tags     []string
	updated  time.Time
}

func newJSONAPI(opts *Options) *jsonapiShop {
	opts.Products = defaultProducts(opts.Products, 33, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 10
	}
	s := &jsonapiShop{opts: opts}
	for id := 1; id <= opts.Products; id++ {
		r := newRNG(id, 0x6a736f6e617069)
		p := apiProduct{id: id, title: productName(id, r), price: cents(r, 1, 900), currency: "EUR",
			onSale: r.intn(3) == 0, stock: int64(r.between(0, 60)), tags: pickTags(r, 3),
			updated: time.Date(2025, time.February, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(id) * 26 * time.Hour)}
		if id%5 == 0 {
			p.stock = -1
		}
		if id%7 == 0 {
			p.tags = []string{}
		} else if len(p.tags) == 0 {
			p.tags = []string{"new"}
		}
		s.products = append(s.products, p)
	}
	return s
}

func (s *jsonapiShop) robots(*http.Request) string { return defaultRobots }

// object returns p as the API writes it.
func (s *jsonapiShop) object(p *apiProduct) map[string]any {
	var stock any
	if p.stock >= 0 {
		stock = p.stock
	}
	return map[string]any{"id": p.id, "title": p.title, "url": "/products/" + strconv.Itoa(p.id),
		"price": map[string]any{"amount": money(p.price), "currency": p.currency}, "on_sale": p.onSale,
		"stock": stock, "tags": p.tags, "updated_at": p.updated.Format(time.RFC3339)}
}

// product returns the product a path's last segment numbers.
func (s *jsonapiShop) product(rest string) (*apiProduct, bool) {
	id, err := strconv.Atoi(rest)
	if err != nil || id < 1 || id > len(s.products) || strconv.Itoa(id) != rest {
		return nil, false
	}
	return &s.products[id-1], true
}

func (s *jsonapiShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	path := r.URL.Path
	switch {
	case path == "/api/products":
		s.serveAPI(w, r)
	case strings.HasPrefix(path, "/api/products/"):
		if p, ok := s.product(strings.TrimPrefix(path, "/api/products/")); ok {
			writeText(w, r, http.StatusOK, ctJSON, encodeJSON(s.object(p), true, false))
			return
		}
		writeText(w, r, http.StatusNotFound, ctJSON, `{"error":"not found"}`)
	case path == "/shop":
		s.serveGrid(w, r)
	case strings.HasPrefix(path, "/products/"):
		if p, ok := s.product(strings.TrimPrefix(path, "/products/")); ok {
			next := map[string]any{"props": map[string]any{"pageProps": map[string]any{"product": s.object(p)}},
				"page": "/products/[id]", "buildId": "b1"}
			body := "<div id=\"__next\"><div class=\"skeleton\">Loading…</div></div>\n<script id=\"__NEXT_DATA__\" type=\"application/json\">" +
				encodeJSON(next, true, false) + "</script>\n<script src=\"/_next/static/chunks/main.js\" defer></script>\n"
			writeHTML(w, r, http.StatusOK, page(p.title, "", body))
			return
		}
		writeError(w, r, http.StatusNotFound)
	default:
		writeError(w, r, http.StatusNotFound)
	}
}

func (s *jsonapiShop) serveAPI(w http.ResponseWriter, r *http.Request) {
	n, ok := pageNumber(r, "page")
	if !ok {
		writeText(w, r, http.StatusBadRequest, ctJSON, `{"error":"bad page"}`)
		return
	}
	total := pages(len(s.products), s.opts.PerPage)
	if n > total {
		writeText(w, r, http.StatusNotFound, ctJSON, `{"error":"not found"}`)
		return
	}
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	items := make([]any, 0, last-first+1)
	for i := first - 1; i < last; i++ {
		p := &s.products[i]
		if s.opts.API == APIFull {
			items = append(items, s.object(p))
		} else {
			items = append(items, map[string]any{"url": "/api/products/" + strconv.Itoa(p.id)})
		}
	}
	var next any
	if n < total {
		next = "/api/products?page=" + strconv.Itoa(n+1)
	}
	doc := map[string]any{"items": items, "next": next, "page": n, "total": len(s.products)}
	writeText(w, r, http.StatusOK, ctJSON, encodeJSON(doc, true, false))
}

func (s *jsonapiShop) serveGrid(w http.ResponseWriter, r *http.Request) {
	n, total, ok := listingPage(w, r, "page", len(s.products), s.opts.PerPage)
	if !ok {
		return
	}
	var b strings.Builder
	b.WriteString("<h1>New in</h1>\n<div id=\"grid\" class=\"grid\"")
	if n < total {
		b.WriteString(" data-next-api=\"/shop?page=" + strconv.Itoa(n+1) + "&amp;section_id=product-grid\"")
	}
	b.WriteString(">\n")
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	for i := first - 1; i < last; i++ {
		p := &s.products[i]
		b.WriteString("<a class=\"card-link\" href=\"/products/" + strconv.Itoa(p.id) + "\"><span class=\"card-title\">" +
			esc(p.title) + "</span></a>\n")
	}
	b.WriteString("</div>\n<div class=\"spinner\" hidden>Loading more…</div>\n")
	writeHTML(w, r, http.StatusOK, page("New in", "", b.String()))
}

func (s *jsonapiShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		id := strconv.Itoa(p.id)
		v := map[string]any{"id": int64(p.id), "title": p.title, "url": base + "/products/" + id, "price": money(p.price),
			"currency": p.currency, "on_sale": p.onSale, "stock": nil, "tags": nil, "updated_at": p.updated}
		if p.stock >= 0 {
			v["stock"] = p.stock
		}
		if len(p.tags) > 0 {
			v["tags"] = append([]string(nil), p.tags...)
		}
		url := base + "/products/" + id
		if s.opts.API == APILinks {
			url = base + "/api/products/" + id
		}
		out = append(out, Product{Key: id, URL: url, Values: v})
	}
	return out
}

func (s *jsonapiShop) columns() []Column {
	return []Column{{Name: "id", Type: "int64"}, {Name: "title", Type: "string"}, {Name: "url", Type: "string"},
		{Name: "price", Type: "float64"}, {Name: "currency", Type: "string"}, {Name: "on_sale", Type: "bool"},
		{Name: "stock", Type: "int64"}, {Name: "tags", Type: "string", Multiple: true}, {Name: "updated_at", Type: "timestamp"}}
}

// jsonapiFields are the fields of the APIFull and APILinks configs: the
// same expressions on an API item and on an item document.
const jsonapiFields = `
[item.fields]
id         = { json = "id", type = "int64", required = true }
title      = { json = "title", required = true }
url        = { json = "url", url = true }
price      = { json = "price.amount", type = "float64", required = true }
currency   = { json = "price.currency" }
on_sale    = { json = "on_sale", type = "bool" }
stock      = { json = "stock", type = "int64" }
tags       = { json = "tags", multiple = true }
updated_at = { json = "updated_at", type = "timestamp" }
`

func (s *jsonapiShop) config(base string) string {
	switch s.opts.API {
	case APILinks:
		return render(base, configHead("shop-jsonapi", "{base}/api/products?page=1"), `
[listing]
format     = "json"
item_links = "items[].url"
next_page  = "next"

[item]
format = "json"
key    = "id"
`+jsonapiFields)
	case APIGrid:
		return render(base, configHead("shop-jsonapi", "{base}/shop"), `
[listing]
item_links = "#grid a.card-link"
next_page  = { css = "#grid", attr = "data-next-api" }

[item]
key = "id"

[item.fields]
id         = { css = "script#__NEXT_DATA__", json = "props.pageProps.product.id", type = "int64", required = true }
title      = { css = "script#__NEXT_DATA__", json = "props.pageProps.product.title", required = true }
url        = { css = "script#__NEXT_DATA__", json = "props.pageProps.product.url", url = true }
price      = { css = "script#__NEXT_DATA__", json = "props.pageProps.product.price.amount", type = "float64", required = true }
currency   = { css = "script#__NEXT_DATA__", json = "props.pageProps.product.price.currency" }
on_sale    = { css = "script#__NEXT_DATA__", json = "props.pageProps.product.on_sale", type = "bool" }
stock      = { css = "script#__NEXT_DATA__", json = "props.pageProps.product.stock", type = "int64" }
tags       = { css = "script#__NEXT_DATA__", json = "props.pageProps.product.tags", multiple = true }
updated_at = { css = "script#__NEXT_DATA__", json = "props.pageProps.product.updated_at", type = "timestamp" }
`)
	}
	return render(base, configHead("shop-jsonapi", "{base}/api/products?page=1"), `
[listing]
format    = "json"
items     = "items"
next_page = "next"

[item]
key = "id"
`+jsonapiFields)
}
