package shopsites

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The Params shop lists its products at /search?page=N (no page
// parameter means page 1; a malformed one answers 400) and has no next
// link: a "Load more" button carries the next page number in data-page,
// without an href. Pages 1 to K list products; page K+1 and beyond answer
// a 200 "No results" page, or 404 with Options.EndWith404. Product pages
// are /item.php?id=<n>; out-of-stock products show "Out of stock" where
// the others show "<n> in stock".
//
// Default 26 products, 10 per page; at least 1.
type paramsShop struct {
	opts     *Options
	products []paramsProduct
}

type paramsProduct struct {
	id    int
	code  string
	name  string
	price int64 // cents
	stock int64
	tags  []string
}

func newParams(opts *Options) *paramsShop {
	opts.Products = defaultProducts(opts.Products, 26, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 10
	}
	s := &paramsShop{opts: opts}
	for id := 1; id <= opts.Products; id++ {
		r := newRNG(id, 0x706172616d73)
		p := paramsProduct{id: id, code: code("PR", id), name: productName(id, r), price: cents(r, 1, 400)}
		if r.intn(4) != 0 {
			p.stock = int64(r.between(1, 40))
		}
		p.tags = append([]string{pick(r, []string{"kitchen", "living"})}, pickTags(r, 2)...)
		p.tags = compactTags(p.tags)
		s.products = append(s.products, p)
	}
	return s
}

// compactTags drops repeated tags, keeping the first of each.
func compactTags(list []string) []string {
	out := list[:0]
	for _, t := range list {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func (s *paramsShop) robots(*http.Request) string { return defaultRobots }

func (s *paramsShop) path(p *paramsProduct) string { return "/item.php?id=" + strconv.Itoa(p.id) }

func (s *paramsShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	switch r.URL.Path {
	case "/search":
		n, ok := pageNumber(r, "page")
		if !ok {
			writeError(w, r, http.StatusBadRequest)
			return
		}
		s.serveSearch(w, r, n)
	case "/item.php":
		id, err := strconv.Atoi(r.URL.Query().Get("id"))
		if err != nil || id < 1 || id > len(s.products) {
			writeError(w, r, http.StatusNotFound)
			return
		}
		writeHTML(w, r, http.StatusOK, s.productPage(&s.products[id-1]))
	default:
		writeError(w, r, http.StatusNotFound)
	}
}

func (s *paramsShop) serveSearch(w http.ResponseWriter, r *http.Request, n int) {
	total := pages(len(s.products), s.opts.PerPage)
	if n > total && s.opts.EndWith404 {
		writeError(w, r, http.StatusNotFound)
		return
	}
	var b strings.Builder
	b.WriteString("<h1>Search results</h1>\n<form class=\"search\" action=\"/search\"><input name=\"q\" placeholder=\"Search\"></form>\n")
	if n > total {
		b.WriteString("<div class=\"no-results\"><h2>No results</h2><p>We could not find any products on this page. Try another search term or browse our categories.</p></div>\n")
		writeHTML(w, r, http.StatusOK, page("No results", "<meta name=\"robots\" content=\"noindex\">\n", b.String()))
		return
	}
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	b.WriteString("<p class=\"count\">Showing " + strconv.Itoa(first) + "–" + strconv.Itoa(last) + " of " + strconv.Itoa(len(s.products)) + "</p>\n<ol class=\"results\">\n")
	for i := first - 1; i < last; i++ {
		p := &s.products[i]
		b.WriteString("<li class=\"result\"><a class=\"result__link\" href=\"" + esc(s.path(p)) + "\">" + esc(p.name) +
			"</a> <span class=\"result__price\">£" + strconv.FormatFloat(money(p.price), 'f', 2, 64) + "</span></li>\n")
	}
	b.WriteString("</ol>\n")
	if n < total {
		b.WriteString("<button class=\"load-more\" type=\"button\" data-page=\"" + strconv.Itoa(n+1) + "\">Load more</button>\n")
	}
	writeHTML(w, r, http.StatusOK, page("Search results", "", b.String()))
}

func (s *paramsShop) productPage(p *paramsProduct) string {
	stock := "Out of stock"
	if p.stock > 0 {
		stock = strconv.FormatInt(p.stock, 10) + " in stock"
	}
	var b strings.Builder
	b.WriteString("<div class=\"product\">\n<h1>" + esc(p.name) + "</h1>\n<p><span class=\"price\">£" +
		strconv.FormatFloat(money(p.price), 'f', 2, 64) + "</span></p>\n<p class=\"stock\">" + stock + "</p>\n" +
		"<dl class=\"specs\"><dt>Code</dt><dd class=\"code\">" + p.code + "</dd></dl>\n<ul class=\"tags\">")
	for _, t := range p.tags {
		b.WriteString("<li>" + t + "</li>")
	}
	b.WriteString("</ul>\n</div>\n")
	return page(p.name, "", b.String())
}

func (s *paramsShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		out = append(out, Product{Key: p.code, URL: base + s.path(p), Values: map[string]any{
			"code": p.code, "name": p.name, "price": money(p.price), "stock": p.stock, "tags": append([]string(nil), p.tags...)}})
	}
	return out
}

func (s *paramsShop) columns() []Column {
	return []Column{{Name: "code", Type: "string"}, {Name: "name", Type: "string"}, {Name: "price", Type: "float64"},
		{Name: "stock", Type: "int64"}, {Name: "tags", Type: "string", Multiple: true}}
}

func (s *paramsShop) config(base string) string {
	return render(base, configHead("shop-params", "{base}/search?page=1"), `
[listing]
item_links = "ol.results a.result__link"
pages      = { param = "page", start = 1 }
end        = "div.no-results"

[item]
key = "code"

[item.fields]
code  = { css = "dd.code", required = true }
name  = { css = "div.product h1", required = true }
price = { css = "span.price", type = "float64", required = true }
stock = { css = "p.stock", type = "int64", regex = '([0-9]+) in stock', default = 0 }
tags  = { css = "ul.tags li", multiple = true }
`)
}
