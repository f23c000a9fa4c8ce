package shopsites

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Messy shop is a European shop with values as people write them.
// Listing pages /shop/all?pg=N (page 1 also at /shop/all) link to product
// pages /p/<ref>.html through a[rel=next] with a query-only href
// ("?pg=2"). On product pages:
//
//   - the regular price .price-regular .amount is always there; a sale
//     price .promo .amount on every third product (n%3 == 0), and an
//     empty .promo .amount on n%6 == 4; prices read "1.234,56 €",
//     "1.234,56\u00a0€", "€1.234,56" or "EUR 1.234,56" (n%4);
//   - the weight reads "2,2 kg" (missing when n%4 == 2), the release date
//     "3 March 2025" (missing when n%5 == 4);
//   - availability text "In stock" (any case), "Only 3 left", "Sold out"
//     or "Pre-order", and td.stock a number or "Sold out" (no stock row
//     for a pre-order, n%6 == 5);
//   - the colour row is missing when n%3 == 2; shipping reads "Free",
//     "6,90 €" or is missing (n%4).
//
// Default 24 products, 9 per page; at least 6.
type messyShop struct {
	opts     *Options
	products []messyProduct
}

type messyProduct struct {
	id       int
	ref      string
	name     string
	regular  int64 // cents
	promo    int64 // cents; 0: no sale price
	grams    int   // 0: no weight
	released time.Time
	stock    int // -1: pre-order
	colour   string
}

var colours = []string{"Anthracite", "Crème", "Sage", "Terracotta", "Midnight blue"}

func newMessy(opts *Options) *messyShop {
	opts.Products = defaultProducts(opts.Products, 24, 6)
	if opts.PerPage == 0 {
		opts.PerPage = 9
	}
	s := &messyShop{opts: opts}
	for id := 1; id <= opts.Products; id++ {
		r := newRNG(id, 0x6d65737379)
		p := messyProduct{id: id, ref: strconv.Itoa(10000 + id), name: productName(id, r), regular: cents(r, 2, 2500),
			grams: r.between(1, 250) * 100, stock: r.between(0, 30), colour: pick(r, colours),
			released: time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.between(0, 500))}
		if id%3 == 0 {
			p.promo = p.regular * 8 / 10
		}
		if id%4 == 2 {
			p.grams = 0
		}
		if id%5 == 4 {
			p.released = time.Time{}
		}
		switch {
		case id%6 == 5:
			p.stock = -1
		case id%7 == 2:
			p.stock = 0
		}
		if id%3 == 2 {
			p.colour = ""
		}
		s.products = append(s.products, p)
	}
	return s
}

func (s *messyShop) robots(*http.Request) string { return defaultRobots }

func (s *messyShop) path(p *messyProduct) string { return "/p/" + p.ref + ".html" }

func (s *messyShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	path := r.URL.Path
	if path == "/shop/all" {
		s.serveListing(w, r)
		return
	}
	for i := range s.products {
		if p := &s.products[i]; path == s.path(p) {
			writeHTML(w, r, http.StatusOK, s.productPage(p))
			return
		}
	}
	writeError(w, r, http.StatusNotFound)
}

func (s *messyShop) serveListing(w http.ResponseWriter, r *http.Request) {
	n, total, ok := listingPage(w, r, "pg", len(s.products), s.opts.PerPage)
	if !ok {
		return
	}
	var b strings.Builder
	b.WriteString("<h1>Alle Produkte</h1>\n<div class=\"product-list\">\n")
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	for i := first - 1; i < last; i++ {
		p := &s.products[i]
		b.WriteString("<div class=\"tile\"><a class=\"product-link\" href=\"" + s.path(p) + "\">" + esc(p.name) +
			"</a> <span class=\"amount\">" + euro(p.regular, p.id) + "</span></div>\n")
	}
	b.WriteString("</div>\n<div class=\"pager\">")
	if n > 1 {
		b.WriteString("<a rel=\"prev\" href=\"?pg=" + strconv.Itoa(n-1) + "\">‹</a> ")
	}
	b.WriteString(strconv.Itoa(n) + " / " + strconv.Itoa(total))
	if n < total {
		b.WriteString(" <a rel=\"next\" href=\"?pg=" + strconv.Itoa(n+1) + "\">›</a>")
	}
	b.WriteString("</div>\n")
	writeHTML(w, r, http.StatusOK, page("Alle Produkte", "", b.String()))
}

// euro writes cents the way product n's page does (n%4 picks the style).
func euro(c int64, n int) string {
	num := groupThousands(c/100, ".") + "," + twoDigits(c%100)
	switch n % 4 {
	case 0:
		return num + " €"
	case 1:
		return num + "&nbsp;€"
	case 2:
		return "€" + num
	}
	return "EUR " + num
}

// availability returns p's availability text and its stock cell ("" for
// none).
func (p *messyProduct) availability() (text, cell string) {
	switch {
	case p.stock < 0:
		return "Pre-order", ""
	case p.stock == 0:
		return "Sold out", "Sold out"
	case p.stock <= 5:
		return "Only " + strconv.Itoa(p.stock) + " left", strconv.Itoa(p.stock)
	case p.id%8 == 1:
		return "IN STOCK", strconv.Itoa(p.stock)
	}
	return "In stock", strconv.Itoa(p.stock)
}

func (s *messyShop) productPage(p *messyProduct) string {
	var b strings.Builder
	b.WriteString("<div class=\"product\">\n<h1 class=\"product-name\">" + esc(p.name) + "</h1>\n<span class=\"ref\">Art.-Nr. " + p.ref + "</span>\n")
	b.WriteString("<div class=\"prices\">")
	switch {
	case p.promo > 0:
		b.WriteString("<div class=\"promo\"><span class=\"badge\">Sale</span> <span class=\"amount\">" + euro(p.promo, p.id) + "</span></div>")
	case p.id%6 == 4:
		b.WriteString("<div class=\"promo\"><span class=\"amount\"> </span></div>")
	}
	b.WriteString("<div class=\"price-regular\"><s><span class=\"amount\">" + euro(p.regular, p.id) + "</span></s></div></div>\n")
	text, cell := p.availability()
	b.WriteString("<p class=\"availability\">" + text + "</p>\n<table class=\"details\">\n")
	if p.grams > 0 {
		b.WriteString("<tr><th>Gewicht</th><td class=\"weight\">" + kilos(p.grams) + "</td></tr>\n")
	}
	if !p.released.IsZero() {
		b.WriteString("<tr><th>Released</th><td class=\"released\">" + p.released.Format("2 January 2006") + "</td></tr>\n")
	}
	if cell != "" {
		b.WriteString("<tr><th>Stock</th><td class=\"stock\">" + cell + "</td></tr>\n")
	}
	if p.colour != "" {
		b.WriteString("<tr><th>Colour</th><td class=\"colour\">" + entities.Replace(esc(p.colour)) + "</td></tr>\n")
	}
	switch p.id % 4 {
	case 0:
		b.WriteString("<tr><th>Shipping</th><td class=\"shipping\">Free</td></tr>\n")
	case 1:
		b.WriteString("<tr><th>Shipping</th><td class=\"shipping\">6,90 €</td></tr>\n")
	}
	b.WriteString("</table>\n</div>\n")
	return page(p.name, "", b.String())
}

// kilos writes grams as kilograms with a decimal comma: "2,2 kg".
func kilos(g int) string {
	s := strconv.Itoa(g / 1000)
	if frac := g % 1000; frac > 0 {
		s += "," + strings.TrimRight(strconv.Itoa(1000 + frac)[1:], "0")
	}
	return s + " kg"
}

func (s *messyShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		v := map[string]any{"ref": p.ref, "name": p.name, "price": money(p.regular), "regular_price": money(p.regular),
			"weight": nil, "released": nil, "in_stock": p.stock > 0, "stock": int64(max(p.stock, 0)),
			"colour": p.colour, "shipping": 4.95}
		if p.promo > 0 {
			v["price"] = money(p.promo)
		}
		if p.grams > 0 {
			v["weight"] = float64(p.grams) / 1000
		}
		if !p.released.IsZero() {
			v["released"] = p.released
		}
		switch p.id % 4 {
		case 0:
			v["shipping"] = 0.0
		case 1:
			v["shipping"] = 6.9
		}
		out = append(out, Product{Key: p.ref, URL: base + s.path(p), Values: v})
	}
	return out
}

func (s *messyShop) columns() []Column {
	return []Column{{Name: "ref", Type: "string"}, {Name: "name", Type: "string"}, {Name: "price", Type: "float64"},
		{Name: "regular_price", Type: "float64"}, {Name: "weight", Type: "float64"}, {Name: "released", Type: "timestamp"},
		{Name: "in_stock", Type: "bool"}, {Name: "stock", Type: "int64"}, {Name: "colour", Type: "string"},
		{Name: "shipping", Type: "float64"}}
}

func (s *messyShop) config(base string) string {
	return render(base, configHead("shop-messy", "{base}/shop/all"), `
[listing]
item_links = "div.product-list a.product-link"
next_page  = "a[rel=next]"

[item]
key = "ref"

[item.fields]
ref           = { css = "span.ref", regex = '([0-9]+)', required = true }
name          = { css = "h1.product-name", required = true }
price         = { css = [".promo .amount", ".price-regular .amount"], type = "float64", decimal = ",", required = true }
regular_price = { css = ".price-regular .amount", type = "float64", decimal = "," }
weight        = { css = "td.weight", type = "float64", decimal = "," }
released      = { css = "td.released", type = "timestamp", format = "2 January 2006" }
in_stock      = { css = "p.availability", type = "bool", map = { "In stock" = true, "Only * left" = true, "*" = false } }
stock         = { css = "td.stock", type = "int64", map = { "Sold out" = 0 }, default = 0 }
colour        = { css = "td.colour", default = "" }
shipping      = { css = "td.shipping", type = "float64", decimal = ",", map = { "Free" = 0.0 }, default = 4.95 }
`)
}
