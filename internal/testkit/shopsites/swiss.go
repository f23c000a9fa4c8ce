package shopsites

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// The Swiss shop is a Swiss Java shop (a SAP Commerce storefront, say)
// that tracks sessions in URLs only: it sets no cookie, and every link it
// writes carries ;jsessionid=<ID> (32 hex digits and the node,
// "….node2") on its path: the session of the request's URL, or a fresh one
// when the URL has none, so a crawler that drops the parameter sees a new
// one on every page.
//
// Listing pages are /de/c/wohnen (page 0) and
// /de/c/wohnen?q=%3Arelevance&page=N, numbered from 0 as the platform
// does; each product tile links to /de/p/<code> twice (a.thumb and
// a.name), and the next page is li.pagination-next a, absent on the last
// page. A product page holds div.product-details[data-product-code] with
// the name (h1), brand (div.brand), p.price ("CHF 1'234.50" or, on even
// products, with the typographic apostrophe "CHF 1’234.50"), an old price
// p.price--old ("statt CHF 1'499.00") and div.stock-status ("An Lager",
// "Lieferbar in 2–3 Wochen" or "Ausverkauft").
//
// Quirks: product 13 has no price but "Preis auf Anfrage" (price on
// request), which its config reads as a type error (TypeErrors); an old
// price on n%4 == 1; no brand on n%6 == 3; deliverable later on n%5 == 2,
// sold out on n%9 == 4. SetPrice changes a product's price (the old price
// goes, and so does "Preis auf Anfrage").
//
// Default 40 products, 12 per page; at least 1.
type swissShop struct {
	opts     *Options
	mu       sync.RWMutex // guards the products' prices
	products []swissProduct
}

type swissProduct struct {
	n         int
	code      string
	name      string
	brand     string // "": none
	price     int64  // cents
	old       int64  // cents; 0: none
	onRequest bool
	stock     string
}

// swissOnRequest is the product whose price is on request.
const swissOnRequest = 13

func newSwiss(opts *Options) *swissShop {
	opts.Products = defaultProducts(opts.Products, 40, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 12
	}
	s := &swissShop{opts: opts}
	for n := 1; n <= opts.Products; n++ {
		r := newRNG(n, 0x7377697373)
		p := swissProduct{n: n, code: strconv.Itoa(300100 + n), name: productName(n, r), brand: pick(r, brands),
			price: int64(r.between(20, 4500))*100 + int64(pick(r, []int{0, 50, 90, 95})), stock: "An Lager"}
		if n%4 == 1 {
			p.old = p.price + p.price/4
		}
		if n%6 == 3 {
			p.brand = ""
		}
		switch {
		case n%5 == 2:
			p.stock = "Lieferbar in 2–3 Wochen"
		case n%9 == 4:
			p.stock = "Ausverkauft"
		}
		if n == swissOnRequest {
			p.onRequest, p.old = true, 0
		}
		s.products = append(s.products, p)
	}
	return s
}

func (s *swissShop) robots(*http.Request) string { return defaultRobots }

// chf writes cents as a Swiss shop does: "CHF 1'234.50", with the
// typographic apostrophe when typographic.
func chf(c int64, typographic bool) string {
	sep := "'"
	if typographic {
		sep = "’"
	}
	return "CHF " + groupThousands(c/100, sep) + "." + twoDigits(c%100)
}

func (s *swissShop) setPrice(key string, cents int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.products {
		if p := &s.products[i]; p.code == key {
			p.price, p.old, p.onRequest = cents, 0, false
			return true
		}
	}
	return false
}

func (s *swissShop) typeErrors() map[string]int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]int{}
	for i := range s.products {
		if s.products[i].onRequest {
			out["price"]++
		}
	}
	return out
}

func (s *swissShop) serve(w http.ResponseWriter, r *http.Request, n int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	path, params, _ := strings.Cut(r.URL.Path, ";")
	session, ok := strings.CutPrefix(params, "jsessionid=")
	if !ok || session == "" {
		session = strings.ToUpper(sessionID(n)) + ".node" + strconv.FormatInt(1+n%2, 10)
	}
	switch {
	case path == "/de/c/wohnen":
		s.serveListing(w, r, ";jsessionid="+session)
	case strings.HasPrefix(path, "/de/p/"):
		code := strings.TrimPrefix(path, "/de/p/")
		for i := range s.products {
			if p := &s.products[i]; p.code == code {
				writeHTML(w, r, http.StatusOK, page(p.name, "", s.productPage(p, ";jsessionid="+session)))
				return
			}
		}
		writeError(w, r, http.StatusNotFound)
	default:
		writeError(w, r, http.StatusNotFound)
	}
}

func (s *swissShop) serveListing(w http.ResponseWriter, r *http.Request, session string) {
	n := 0
	if raw := r.URL.Query().Get("page"); raw != "" {
		var err error
		if n, err = strconv.Atoi(raw); err != nil || n < 0 || strconv.Itoa(n) != raw {
			writeError(w, r, http.StatusBadRequest)
			return
		}
	}
	total := pages(len(s.products), s.opts.PerPage)
	if n >= total {
		writeError(w, r, http.StatusNotFound)
		return
	}
	var b strings.Builder
	b.WriteString("<nav class=\"breadcrumb\"><a href=\"/de/" + session + "\">Startseite</a> › Wohnen</nav>\n<h1>Wohnen</h1>\n<div class=\"product-listing\">\n")
	first, last := pageRange(n+1, len(s.products), s.opts.PerPage)
	for i := first - 1; i < last; i++ {
		p := &s.products[i]
		href := "/de/p/" + p.code + session
		b.WriteString("<div class=\"product-item\"><a class=\"thumb\" href=\"" + href + "\"><img src=\"/medias/" + p.code +
			".jpg\" alt=\"\"></a><a class=\"name\" href=\"" + href + "\">" + esc(p.name) + "</a><div class=\"price\">" +
			s.priceText(p) + "</div></div>\n")
	}
	b.WriteString("</div>\n<ul class=\"pagination\">")
	if n+1 < total {
		b.WriteString("<li class=\"pagination-next\"><a href=\"/de/c/wohnen" + session + "?q=%3Arelevance&amp;page=" +
			strconv.Itoa(n+1) + "\" rel=\"next\">Weiter</a></li>")
	}
	b.WriteString("</ul>\n")
	writeHTML(w, r, http.StatusOK, page("Wohnen", "", b.String()))
}

// priceText is a product's price as the shop prints it.
func (s *swissShop) priceText(p *swissProduct) string {
	if p.onRequest {
		return "Preis auf Anfrage"
	}
	return chf(p.price, p.n%2 == 0)
}

func (s *swissShop) productPage(p *swissProduct, session string) string {
	var b strings.Builder
	b.WriteString("<nav class=\"breadcrumb\"><a href=\"/de/" + session + "\">Startseite</a> › <a href=\"/de/c/wohnen" + session +
		"\">Wohnen</a></nav>\n<div class=\"product-details\" data-product-code=\"" + p.code + "\">\n<div class=\"name\"><h1>" +
		esc(p.name) + "</h1></div>\n")
	if p.brand != "" {
		b.WriteString("<div class=\"brand\">" + esc(p.brand) + "</div>\n")
	}
	b.WriteString("<p class=\"code\">Art.-Nr. " + p.code + "</p>\n<p class=\"price\">" + s.priceText(p) + "</p>\n")
	if p.old > 0 {
		b.WriteString("<p class=\"price price--old\">statt " + chf(p.old, p.n%2 == 1) + "</p>\n")
	}
	b.WriteString("<div class=\"stock-status\">" + p.stock + "</div>\n<form action=\"/de/cart/add" + session +
		"\" method=\"post\"><button>In den Warenkorb</button></form>\n</div>\n")
	return b.String()
}

func (s *swissShop) truth(base string) []Product {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		v := map[string]any{"code": p.code, "name": p.name, "brand": nil, "price": money(p.price), "old_price": nil,
			"in_stock": p.stock != "Ausverkauft"}
		if p.brand != "" {
			v["brand"] = p.brand
		}
		if p.onRequest {
			v["price"] = nil
		}
		if p.old > 0 {
			v["old_price"] = money(p.old)
		}
		out = append(out, Product{Key: p.code, URL: base + "/de/p/" + p.code, Values: v})
	}
	return out
}

func (s *swissShop) columns() []Column {
	return []Column{{Name: "code", Type: "string"}, {Name: "name", Type: "string"}, {Name: "brand", Type: "string"},
		{Name: "price", Type: "float64"}, {Name: "old_price", Type: "float64"}, {Name: "in_stock", Type: "bool"}}
}

func (s *swissShop) config(base string) string {
	return render(base, configHead("shop-swiss", "{base}/de/c/wohnen"), `
[listing]
item_links = "div.product-item a.name"
next_page  = "li.pagination-next a"

[item]
key = "code"

[item.fields]
code      = { css = "div.product-details", attr = "data-product-code", required = true }
name      = { css = "div.product-details h1", required = true }
brand     = { css = "div.product-details div.brand" }
price     = { css = "div.product-details p.price:not(.price--old)", type = "float64" }
old_price = { css = "p.price--old", regex = 'CHF\s*(.+)', type = "float64" }
in_stock  = { css = "div.stock-status", type = "bool", map = { "An Lager" = true, "Lieferbar in *" = true, "*" = false } }
`)
}
