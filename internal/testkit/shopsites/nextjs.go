package shopsites

import (
	"net/http"
	"strconv"
	"strings"
)

// The NextJS shop is a Next.js storefront rendered on the server. Listing
// pages /category/all?page=N (page 1 also at /category/all) render only
// the first four product cards of the page as HTML, the rest as loading
// skeletons, and carry every product of the page in
// script#__NEXT_DATA__ at props.pageProps.initialData.products, beside
// the category, the pagination and the site's navigation; the next page
// is an a[rel=next] in nav.pagination, absent on the last page. Product
// pages /p/<slug> carry the product in their own __NEXT_DATA__ at
// props.pageProps.product; the config never needs them. JSON in
// __NEXT_DATA__ escapes &, < and > as \u0026, \u003c and \u003e, as
// Next.js does.
//
// A product holds id, sku, name, slug, url (/p/<slug>), brand {name} or
// null, price {value, currency, formatted}, salePrice (null, or as
// price), rating {average, count} or null, badges, image {src, alt} (the
// src a /_next/image URL) and inStock.
//
// Quirks: brand is null on n%7 == 4; a sale price on n%5 == 1; no rating
// on n%6 == 2; badges are empty on n%3 == 0; out of stock on n%8 == 3;
// prices are JSON numbers such as 1234.5.
//
// Default 38 products, 10 per page; at least 1.
type nextjsShop struct {
	opts     *Options
	products []nextjsProduct
}

type nextjsProduct struct {
	n       int
	sku     string
	name    string
	slug    string
	brand   string // "": null
	price   int64  // cents
	sale    int64  // cents; 0: null
	rating  int    // tenths; 0: null
	reviews int
	badges  []string
	inStock bool
}

func newNextJS(opts *Options) *nextjsShop {
	opts.Products = defaultProducts(opts.Products, 38, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 10
	}
	s := &nextjsShop{opts: opts}
	for n := 1; n <= opts.Products; n++ {
		r := newRNG(n, 0x6e6578746a73)
		p := nextjsProduct{n: n, sku: code("NX", n), name: productName(n, r), brand: pick(r, brands), price: cents(r, 5, 1900),
			rating: r.between(10, 50), reviews: r.between(1, 300), badges: []string{pick(r, []string{"new", "bestseller", "eco"})},
			inStock: n%8 != 3}
		p.slug = slug(p.name, n)
		if n%7 == 4 {
			p.brand = ""
		}
		if n%5 == 1 {
			p.sale = p.price * 85 / 100
		}
		if n%6 == 2 {
			p.rating, p.reviews = 0, 0
		}
		if n%3 == 0 {
			p.badges = []string{}
		}
		s.products = append(s.products, p)
	}
	return s
}

func (s *nextjsShop) robots(*http.Request) string { return defaultRobots }

// object returns p as __NEXT_DATA__ holds it.
func (s *nextjsShop) object(p *nextjsProduct) map[string]any {
	price := func(c int64) map[string]any {
		return map[string]any{"value": money(c), "currency": "EUR", "formatted": euros(c)}
	}
	var brand, sale, rating any
	if p.brand != "" {
		brand = map[string]any{"name": p.brand}
	}
	if p.sale > 0 {
		sale = price(p.sale)
	}
	if p.rating > 0 {
		rating = map[string]any{"average": float64(p.rating) / 10, "count": p.reviews}
	}
	return map[string]any{"id": 5000 + p.n, "sku": p.sku, "name": p.name, "slug": p.slug, "url": "/p/" + p.slug,
		"brand": brand, "price": price(p.price), "salePrice": sale, "rating": rating, "badges": p.badges,
		"image": map[string]any{"src": s.imageSrc(p), "alt": p.name}, "inStock": p.inStock}
}

func (s *nextjsShop) imageSrc(p *nextjsProduct) string {
	return "/_next/image?url=%2Fimages%2F" + lower(p.sku) + ".jpg&w=640&q=75"
}

// nextData returns a script#__NEXT_DATA__ element holding pageProps.
func nextData(route, query string, pageProps map[string]any) string {
	doc := map[string]any{"props": map[string]any{"pageProps": pageProps, "__N_SSP": true}, "page": route,
		"query": map[string]any{"slug": query}, "buildId": "k3Xb9_Qw2LmT7vY1", "isFallback": false, "gssp": true,
		"scriptLoader": []any{}}
	return "<script id=\"__NEXT_DATA__\" type=\"application/json\">" + encodeJSON(doc, false, false) + "</script>\n"
}

// navigation is the site menu every page's pageProps carry.
var navigation = []any{
	map[string]any{"label": "Wohnen", "href": "/category/wohnen"}, map[string]any{"label": "Küche", "href": "/category/kueche"},
	map[string]any{"label": "Sale", "href": "/category/sale"}, map[string]any{"label": "Alle Produkte", "href": "/category/all"},
}

func (s *nextjsShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	path := r.URL.Path
	switch {
	case path == "/category/all":
		s.serveListing(w, r)
	case strings.HasPrefix(path, "/p/"):
		for i := range s.products {
			if p := &s.products[i]; path == "/p/"+p.slug {
				body := "<div id=\"__next\"><main class=\"pdp\"><h1>" + esc(p.name) + "</h1></main></div>\n" +
					nextData("/p/[slug]", p.slug, map[string]any{"product": s.object(p), "navigation": navigation}) +
					"<script src=\"/_next/static/chunks/pages/p/[slug]-3f2a.js\" defer></script>\n"
				writeHTML(w, r, http.StatusOK, page(p.name, "", body))
				return
			}
		}
		writeError(w, r, http.StatusNotFound)
	default:
		writeError(w, r, http.StatusNotFound)
	}
}

func (s *nextjsShop) serveListing(w http.ResponseWriter, r *http.Request) {
	n, total, ok := listingPage(w, r, "page", len(s.products), s.opts.PerPage)
	if !ok {
		return
	}
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	products := make([]any, 0, last-first+1)
	var b strings.Builder
	b.WriteString("<div id=\"__next\"><h1>Alle Produkte</h1>\n<div class=\"grid\">\n")
	for i := first - 1; i < last; i++ {
		p := &s.products[i]
		products = append(products, s.object(p))
		if i-first+1 < 4 {
			b.WriteString("<a class=\"product-card\" href=\"/p/" + p.slug + "\"><span class=\"product-card__name\">" + esc(p.name) +
				"</span> <span class=\"product-card__price\">" + euros(p.price) + "</span></a>\n")
		} else {
			b.WriteString("<div class=\"product-card product-card--skeleton\" aria-busy=\"true\"></div>\n")
		}
	}
	b.WriteString("</div>\n<nav class=\"pagination\">")
	if n > 1 {
		b.WriteString("<a rel=\"prev\" href=\"/category/all?page=" + strconv.Itoa(n-1) + "\">Zurück</a> ")
	}
	b.WriteString("<span>Seite " + strconv.Itoa(n) + " von " + strconv.Itoa(total) + "</span>")
	if n < total {
		b.WriteString(" <a rel=\"next\" href=\"/category/all?page=" + strconv.Itoa(n+1) + "\">Weiter</a>")
	}
	b.WriteString("</nav></div>\n")
	b.WriteString(nextData("/category/[slug]", "all", map[string]any{"navigation": navigation, "initialData": map[string]any{
		"category":   map[string]any{"slug": "all", "name": "Alle Produkte"},
		"products":   products,
		"pagination": map[string]any{"page": n, "totalPages": total, "perPage": s.opts.PerPage, "total": len(s.products)},
	}}))
	b.WriteString("<script src=\"/_next/static/chunks/pages/category/[slug]-9c1e.js\" defer></script>\n")
	writeHTML(w, r, http.StatusOK, page("Alle Produkte", "", b.String()))
}

func (s *nextjsShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		url := base + "/p/" + p.slug
		v := map[string]any{"sku": p.sku, "name": p.name, "url": url, "brand": nil, "price": money(p.price),
			"regular_price": money(p.price), "rating": nil, "reviews": nil, "in_stock": p.inStock,
			"image": base + s.imageSrc(p), "badges": nil}
		if p.brand != "" {
			v["brand"] = p.brand
		}
		if p.sale > 0 {
			v["price"] = money(p.sale)
		}
		if p.rating > 0 {
			v["rating"], v["reviews"] = float64(p.rating)/10, int64(p.reviews)
		}
		if len(p.badges) > 0 {
			v["badges"] = append([]string(nil), p.badges...)
		}
		out = append(out, Product{Key: p.sku, URL: url, Values: v})
	}
	return out
}

func (s *nextjsShop) columns() []Column {
	return []Column{{Name: "sku", Type: "string"}, {Name: "name", Type: "string"}, {Name: "url", Type: "string"},
		{Name: "brand", Type: "string"}, {Name: "price", Type: "float64"}, {Name: "regular_price", Type: "float64"},
		{Name: "rating", Type: "float64"}, {Name: "reviews", Type: "int64"}, {Name: "in_stock", Type: "bool"},
		{Name: "image", Type: "string"}, {Name: "badges", Type: "string", Multiple: true}}
}

func (s *nextjsShop) config(base string) string {
	return render(base, configHead("shop-nextjs", "{base}/category/all"), `
[listing]
items     = { css = "script#__NEXT_DATA__", json = "props.pageProps.initialData.products" }
next_page = "nav.pagination a[rel=next]"

[item]
key = "sku"

[item.fields]
sku           = { json = "sku", required = true }
name          = { json = "name", required = true }
url           = { json = "url", url = true }
brand         = { json = "brand.name" }
price         = { json = "salePrice.value || price.value", type = "float64", required = true }
regular_price = { json = "price.value", type = "float64" }
rating        = { json = "rating.average", type = "float64" }
reviews       = { json = "rating.count", type = "int64" }
in_stock      = { json = "inStock", type = "bool" }
image         = { json = "image.src", url = true }
badges        = { json = "badges", multiple = true }
`)
}
