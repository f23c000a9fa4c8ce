package shopsites

import (
	"net/http"
	"strconv"
	"strings"
)

// The JSONLD shop is built like a headless storefront: listing pages
// /collections/all?page=N (page 1 also at /collections/all) link to
// product pages /products/<sku> whose visible body is a JavaScript shell;
// the product's data is only in <script type="application/ld+json">
// blocks. Every product page has an Organization block first; then, by
// product number, the Product is a block of its own after a BreadcrumbList
// (n%3 == 0), inside an @graph (n%3 == 1), or in a top-level array after
// a BreadcrumbList (n%3 == 2). Its offers are an Offer object with a JSON
// number price (n%4 == 0) or a string price (n%4 == 3), an array of two
// Offers (n%4 == 1, the first one counts), or an AggregateOffer with
// lowPrice and highPrice and no availability (n%4 == 2). Odd products are
// encoded like PHP's json_encode (\/ and \u00e9 escapes), even ones
// pretty-printed in UTF-8; every & is \u0026. Prices and ratings not
// fixed by the offer shape are JSON numbers when n/4 is even, strings
// ("19.99") when it is odd; review counts are strings on odd products. The brand is a Brand object
// or (n%5 == 2) a plain string, the image a URL or (n%4 == 1) an array of
// URLs, the rating a number or a string or (n%3 == 2) missing. The
// og:title meta tag holds HTML entities (&amp;, &eacute;).
//
// Default 24 products, 10 per page; at least 4.
type jsonldShop struct {
	opts     *Options
	products []jsonldProduct
}

type jsonldProduct struct {
	id       int
	sku      string
	name     string
	brand    string
	price    int64 // cents; lowPrice for an AggregateOffer
	high     int64 // highPrice in cents, AggregateOffer only
	currency string
	inStock  bool
	rating   int // tenths of a star; 0: no rating
	reviews  int64
}

func newJSONLD(opts *Options) *jsonldShop {
	opts.Products = defaultProducts(opts.Products, 24, 4)
	if opts.PerPage == 0 {
		opts.PerPage = 10
	}
	s := &jsonldShop{opts: opts}
	for id := 1; id <= opts.Products; id++ {
		r := newRNG(id, 0x6a736f6e6c64)
		p := jsonldProduct{id: id, sku: code("JL", id), name: productName(id, r), brand: pick(r, brands),
			price: cents(r, 5, 1500), currency: pick(r, []string{"EUR", "USD"}), inStock: r.intn(4) != 0}
		p.high = p.price + cents(r, 1, 80)
		if id%3 != 2 {
			p.rating, p.reviews = r.between(10, 50), int64(r.between(1, 900))
		}
		s.products = append(s.products, p)
	}
	return s
}

func (s *jsonldShop) robots(*http.Request) string { return defaultRobots }

func (s *jsonldShop) path(p *jsonldProduct) string { return "/products/" + lower(p.sku) }

func (s *jsonldShop) serve(w http.ResponseWriter, r *http.Request, n int64) {
	switch path := r.URL.Path; {
	case path == "/collections/all":
		s.serveListing(w, r)
	case strings.HasPrefix(path, "/products/"):
		for i := range s.products {
			if p := &s.products[i]; path == s.path(p) {
				drifted := s.opts.DriftAfter > 0 && n > s.opts.DriftAfter
				writeHTML(w, r, http.StatusOK, s.productPage(r, p, drifted))
				return
			}
		}
		writeError(w, r, http.StatusNotFound)
	default:
		writeError(w, r, http.StatusNotFound)
	}
}

func (s *jsonldShop) serveListing(w http.ResponseWriter, r *http.Request) {
	n, total, ok := listingPage(w, r, "page", len(s.products), s.opts.PerPage)
	if !ok {
		return
	}
	var b strings.Builder
	b.WriteString("<h1>All products</h1>\n<ul class=\"product-grid\">\n")
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	for _, p := range s.products[first-1 : last] {
		b.WriteString("<li class=\"grid__item\"><a class=\"card__link\" href=\"" + s.path(&p) + "\"><span class=\"card__title\">" +
			esc(p.name) + "</span></a> <span class=\"card__brand\">" + esc(p.brand) + "</span></li>\n")
	}
	b.WriteString("</ul>\n<nav class=\"pagination\">")
	if n > 1 {
		b.WriteString("<a class=\"pagination__prev\" href=\"/collections/all?page=" + strconv.Itoa(n-1) + "\">Previous</a> ")
	}
	b.WriteString("<span>Page " + strconv.Itoa(n) + " of " + strconv.Itoa(total) + "</span>")
	if n < total {
		b.WriteString(" <a class=\"pagination__next\" href=\"/collections/all?page=" + strconv.Itoa(n+1) + "\">Next</a>")
	}
	b.WriteString("</nav>\n")
	writeHTML(w, r, http.StatusOK, page("All products", "", b.String()))
}

// productPage renders p's page; drifted leaves out the Product JSON-LD
// and moves the data into a __NEXT_DATA__ script no config reads.
func (s *jsonldShop) productPage(r *http.Request, p *jsonldProduct, drifted bool) string {
	o := origin(r)
	url := o + s.path(p)
	php, pretty := p.id%2 == 1, p.id%2 == 0
	org := map[string]any{"@context": "https://schema.org", "@type": "Organization", "name": "Maison Élise & Co",
		"url": o + "/", "logo": o + "/cdn/shop/logo.png"}
	crumbs := map[string]any{"@context": "https://schema.org", "@type": "BreadcrumbList", "itemListElement": []any{
		map[string]any{"@type": "ListItem", "position": 1, "name": "Home", "item": o + "/"},
		map[string]any{"@type": "ListItem", "position": 2, "name": "All products", "item": o + "/collections/all"},
		map[string]any{"@type": "ListItem", "position": 3, "name": p.name, "item": url},
	}}
	blocks := []any{org}
	switch product := s.ldProduct(p, url); {
	case drifted:
		blocks = append(blocks, crumbs)
	case p.id%3 == 0:
		product["@context"] = "https://schema.org"
		blocks = append(blocks, crumbs, product)
	case p.id%3 == 1:
		page := map[string]any{"@type": "WebPage", "@id": url + "#webpage", "url": url, "name": p.name}
		blocks = append(blocks, map[string]any{"@context": "https://schema.org", "@graph": []any{page, product}})
	default:
		product["@context"] = "https://schema.org"
		blocks = append(blocks, []any{crumbs, product})
	}
	var head strings.Builder
	head.WriteString("<link rel=\"canonical\" href=\"" + url + "\">\n<meta property=\"og:type\" content=\"product\">\n")
	head.WriteString("<meta property=\"og:title\" content=\"" + entities.Replace(esc(p.name+" – "+p.brand)) + "\">\n")
	for _, blk := range blocks {
		head.WriteString("<script type=\"application/ld+json\">\n" + encodeJSON(blk, php, pretty) + "\n</script>\n")
	}
	body := "<div id=\"app\" data-handle=\"" + lower(p.sku) + "\"></div>\n<noscript>Please enable JavaScript to shop here.</noscript>\n" +
		"<script src=\"/cdn/shop/app.js\" defer></script>\n"
	if drifted {
		next := map[string]any{"props": map[string]any{"pageProps": map[string]any{"item": map[string]any{
			"title": p.name, "code": p.sku, "cost": money(p.price)}}}}
		body += "<script id=\"__NEXT_DATA__\" type=\"application/json\">" + encodeJSON(next, false, false) + "</script>\n"
	}
	return page(p.name, head.String(), body)
}

// ldProduct returns p's schema.org Product object.
func (s *jsonldShop) ldProduct(p *jsonldProduct, url string) map[string]any {
	num := func(c int64) any { // a JSON number or a string, by product
		if p.id/4%2 == 0 {
			return money(c)
		}
		return strconv.FormatFloat(money(c), 'f', 2, 64)
	}
	availability := "https://schema.org/OutOfStock"
	if p.inStock {
		availability = "https://schema.org/InStock"
	}
	image := "/cdn/shop/files/" + lower(p.sku) + ".jpg"
	product := map[string]any{"@type": "Product", "name": p.name, "sku": p.sku, "url": url, "image": image,
		"description": "A generated product for crawler tests: " + p.name + ".",
		"brand":       map[string]any{"@type": "Brand", "name": p.brand}}
	if p.id%5 == 2 {
		product["brand"] = p.brand
	}
	offer := map[string]any{"@type": "Offer", "price": num(p.price), "priceCurrency": p.currency,
		"availability": availability, "url": url}
	switch p.id % 4 {
	case 0:
		offer["price"] = money(p.price)
		product["offers"] = offer
	case 1:
		second := map[string]any{"@type": "Offer", "price": num(p.high), "priceCurrency": p.currency,
			"availability": "https://schema.org/PreOrder", "seller": map[string]any{"@type": "Organization", "name": "Marketplace"}}
		product["offers"] = []any{offer, second}
		product["image"] = []any{image, "/cdn/shop/files/" + lower(p.sku) + "-2.jpg"}
	case 2:
		product["offers"] = map[string]any{"@type": "AggregateOffer", "lowPrice": num(p.price), "highPrice": num(p.high),
			"priceCurrency": p.currency, "offerCount": 3}
	case 3:
		offer["price"] = strconv.FormatFloat(money(p.price), 'f', 2, 64)
		product["offers"] = offer
	}
	if p.rating > 0 {
		product["aggregateRating"] = map[string]any{"@type": "AggregateRating",
			"ratingValue": num(int64(p.rating) * 10), "reviewCount": p.reviews}
		if p.id%2 == 1 {
			product["aggregateRating"].(map[string]any)["reviewCount"] = strconv.FormatInt(p.reviews, 10)
		}
	}
	return product
}

func (s *jsonldShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		v := map[string]any{"sku": p.sku, "name": p.name, "brand": p.brand, "price": money(p.price),
			"high_price": nil, "currency": p.currency, "in_stock": p.inStock, "rating": nil, "review_count": nil,
			"image": base + "/cdn/shop/files/" + lower(p.sku) + ".jpg", "og_title": p.name + " – " + p.brand}
		if p.id%4 == 2 {
			v["high_price"], v["in_stock"] = money(p.high), nil
		}
		if p.rating > 0 {
			v["rating"], v["review_count"] = float64(p.rating)/10, p.reviews
		}
		out = append(out, Product{Key: p.sku, URL: base + s.path(p), Values: v})
	}
	return out
}

func (s *jsonldShop) columns() []Column {
	return []Column{{Name: "sku", Type: "string"}, {Name: "name", Type: "string"}, {Name: "brand", Type: "string"},
		{Name: "price", Type: "float64"}, {Name: "high_price", Type: "float64"}, {Name: "currency", Type: "string"},
		{Name: "in_stock", Type: "bool"}, {Name: "rating", Type: "float64"}, {Name: "review_count", Type: "int64"},
		{Name: "image", Type: "string"}, {Name: "og_title", Type: "string"}}
}

func (s *jsonldShop) config(base string) string {
	return render(base, configHead("shop-jsonld", "{base}/collections/all"), `
[listing]
item_links = "ul.product-grid a.card__link"
next_page  = "a.pagination__next"

[item]
key = "sku"

[item.fields]
sku          = { jsonld = "Product", json = "sku", required = true }
name         = { jsonld = "Product", json = "name", required = true }
brand        = { jsonld = "Product", json = "brand.name || brand" }
price        = { jsonld = "Product", json = "offers.price || offers[0].price || offers.lowPrice", type = "float64", required = true }
high_price   = { jsonld = "Product", json = "offers.highPrice", type = "float64" }
currency     = { jsonld = "Product", json = "offers.priceCurrency || offers[0].priceCurrency" }
in_stock     = { jsonld = "Product", json = "offers.availability || offers[0].availability", type = "bool", map = { "*/InStock" = true, "*" = false } }
rating       = { jsonld = "Product", json = "aggregateRating.ratingValue", type = "float64" }
review_count = { jsonld = "Product", json = "aggregateRating.reviewCount", type = "int64" }
image        = { jsonld = "Product", json = "image[0] || image", url = true }
og_title     = { css = "meta[property='og:title']", attr = "content" }
`)
}
