package shopsites

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The Microdata shop's items are its listing cards: /shop/page/N (page 1
// also at /shop) holds li.card elements carrying data-pid and data-price
// on the card element itself and schema.org microdata inside, values in
// content= and href= attributes (the visible price and rating are in
// European notation, the attributes are not). The only pagination is a
// <link rel="next"> in <head>; the body has no next link. The gtin13 meta
// is missing on every third product (n%3 == 1), the rating on every
// fourth (n%4 == 3). Product pages /p/p-<n> exist, with the same
// microdata, but the config reads the cards.
//
// Default 30 products, 8 per page; at least 2.
type microdataShop struct {
	opts     *Options
	products []microdataProduct
}

type microdataProduct struct {
	id           int
	pid          string
	name, brand  string
	price        int64 // cents
	currency     string
	availability string // schema.org term
	gtin         string // "" when missing
	rating       int    // tenths; 0 when missing
}

func newMicrodata(opts *Options) *microdataShop {
	opts.Products = defaultProducts(opts.Products, 30, 2)
	if opts.PerPage == 0 {
		opts.PerPage = 8
	}
	s := &microdataShop{opts: opts}
	for id := 1; id <= opts.Products; id++ {
		r := newRNG(id, 0x6d6963726f)
		p := microdataProduct{id: id, pid: "P-" + strconv.Itoa(id), name: productName(id, r), brand: pick(r, brands),
			price: cents(r, 2, 2500), currency: "EUR", availability: pick(r, []string{"InStock", "InStock", "OutOfStock", "SoldOut"})}
		if id%3 != 1 {
			p.gtin = fmt.Sprintf("40%011d", r.next()%100_000_000_000)
		}
		if id%4 != 3 {
			p.rating = r.between(10, 50)
		}
		s.products = append(s.products, p)
	}
	return s
}

func (s *microdataShop) robots(*http.Request) string { return defaultRobots }

func (s *microdataShop) path(p *microdataProduct) string { return "/p/" + lower(p.pid) }

func (s *microdataShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	path := r.URL.Path
	if path == "/shop" {
		s.serveListing(w, r, 1)
		return
	}
	if rest, ok := strings.CutPrefix(path, "/shop/page/"); ok {
		n, err := strconv.Atoi(rest)
		if err == nil && n >= 1 && strconv.Itoa(n) == rest {
			s.serveListing(w, r, n)
			return
		}
	}
	for i := range s.products {
		if p := &s.products[i]; path == s.path(p) {
			body := "<div class=\"product-page\">" + s.card(p, "div") + "<p>Free returns within 30 days.</p></div>\n"
			writeHTML(w, r, http.StatusOK, page(p.name, "", body))
			return
		}
	}
	writeError(w, r, http.StatusNotFound)
}

func (s *microdataShop) serveListing(w http.ResponseWriter, r *http.Request, n int) {
	total := pages(len(s.products), s.opts.PerPage)
	if n > total {
		writeError(w, r, http.StatusNotFound)
		return
	}
	var head strings.Builder
	head.WriteString("<link rel=\"canonical\" href=\"/shop/page/" + strconv.Itoa(n) + "\">\n")
	if n > 1 {
		head.WriteString("<link rel=\"prev\" href=\"/shop/page/" + strconv.Itoa(n-1) + "\">\n")
	}
	if n < total {
		head.WriteString("<link rel=\"next\" href=\"/shop/page/" + strconv.Itoa(n+1) + "\">\n")
	}
	var b strings.Builder
	b.WriteString("<h1>Home &amp; living</h1>\n<ul class=\"products\">\n")
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	for i := first - 1; i < last; i++ {
		b.WriteString(s.card(&s.products[i], "li"))
	}
	b.WriteString("</ul>\n<div class=\"infinite-scroll-sentinel\" aria-hidden=\"true\"></div>\n")
	writeHTML(w, r, http.StatusOK, page("Home & living", head.String(), b.String()))
}

// card renders p as a tag element with microdata; the listing's cards are
// li elements.
func (s *microdataShop) card(p *microdataProduct, tag string) string {
	price := strconv.FormatFloat(money(p.price), 'f', 2, 64)
	if p.id%3 == 0 {
		price = strconv.FormatFloat(money(p.price), 'f', -1, 64) // "12.5"
	}
	euro := strings.Replace(strconv.FormatFloat(money(p.price), 'f', 2, 64), ".", ",", 1) + " €"
	var b strings.Builder
	b.WriteString("<" + tag + " class=\"card\" data-pid=\"" + p.pid + "\" data-price=\"" + price +
		"\" itemscope itemtype=\"https://schema.org/Product\">\n")
	b.WriteString(" <a class=\"card__link\" itemprop=\"url\" href=\"" + s.path(p) + "\"><img itemprop=\"image\" src=\"/img/" +
		lower(p.pid) + ".jpg\" alt=\"\"><span itemprop=\"name\">" + esc(p.name) + "</span></a>\n")
	b.WriteString(" <meta itemprop=\"sku\" content=\"" + p.pid + "\"><meta itemprop=\"brand\" content=\"" + esc(p.brand) + "\">\n")
	if p.gtin != "" {
		b.WriteString(" <meta itemprop=\"gtin13\" content=\"" + p.gtin + "\">\n")
	}
	b.WriteString(" <div itemprop=\"offers\" itemscope itemtype=\"https://schema.org/Offer\"><span class=\"price\">" + euro +
		"</span><meta itemprop=\"price\" content=\"" + price + "\"><meta itemprop=\"priceCurrency\" content=\"" + p.currency +
		"\"><link itemprop=\"availability\" href=\"https://schema.org/" + p.availability + "\"></div>\n")
	if p.rating > 0 {
		b.WriteString(" <div itemprop=\"aggregateRating\" itemscope itemtype=\"https://schema.org/AggregateRating\"><span itemprop=\"ratingValue\" content=\"" +
			strconv.FormatFloat(float64(p.rating)/10, 'f', 1, 64) + "\">" + strconv.Itoa(p.rating/10) + "," + strconv.Itoa(p.rating%10) +
			"</span> / 5</div>\n")
	}
	b.WriteString("</" + tag + ">\n")
	return b.String()
}

func (s *microdataShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		v := map[string]any{"pid": p.pid, "name": p.name, "price": money(p.price), "currency": p.currency,
			"brand": p.brand, "gtin": nil, "in_stock": p.availability == "InStock", "rating": nil, "url": base + s.path(p)}
		if p.gtin != "" {
			v["gtin"] = p.gtin
		}
		if p.rating > 0 {
			v["rating"] = float64(p.rating) / 10
		}
		out = append(out, Product{Key: p.pid, URL: base + s.path(p), Values: v})
	}
	return out
}

func (s *microdataShop) columns() []Column {
	return []Column{{Name: "pid", Type: "string"}, {Name: "name", Type: "string"}, {Name: "price", Type: "float64"},
		{Name: "currency", Type: "string"}, {Name: "brand", Type: "string"}, {Name: "gtin", Type: "string"},
		{Name: "in_stock", Type: "bool"}, {Name: "rating", Type: "float64"}, {Name: "url", Type: "string"}}
}

func (s *microdataShop) config(base string) string {
	return render(base, configHead("shop-microdata", "{base}/shop"), `
[listing]
items     = "ul.products li.card"
next_page = "head link[rel=next]"

[item]
key = "pid"

[item.fields]
pid      = { css = ":scope", attr = "data-pid", required = true }
name     = { css = "[itemprop=name]", required = true }
price    = { css = ":scope", attr = "data-price", type = "float64", required = true }
currency = { css = "meta[itemprop=priceCurrency]", attr = "content" }
brand    = { css = "meta[itemprop=brand]", attr = "content" }
gtin     = { css = "meta[itemprop=gtin13]", attr = "content" }
in_stock = { css = "link[itemprop=availability]", attr = "href", type = "bool", map = { "*/InStock" = true, "*" = false } }
rating   = { css = "[itemprop=ratingValue]", attr = "content", type = "float64" }
url      = { css = "a[itemprop=url]", attr = "href", url = true }
`)
}
