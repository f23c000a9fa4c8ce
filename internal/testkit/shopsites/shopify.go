package shopsites

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Shopify shop answers /products.json?page=N&limit=M as a Shopify
// store does: {"products": [...]} in id order, limit products a page
// (default 30, at most 250; the config asks for Options.PerPage), and
// {"products": []} past the last page; a page or limit that is no
// positive number answers 400. A product holds id (a 13-digit number),
// title, handle, body_html, vendor, product_type, tags (an array),
// created_at and updated_at (in the shop's time zone, +01:00 or +02:00),
// variants (id, title, sku, price and compare_at_price as strings such as
// "19.99", available, ...) and images (src on the shop's CDN). Product
// pages /products/<handle> exist; the config reads the JSON only.
//
// Quirks: product_type is "" on every sixth product (n%6 == 4);
// compare_at_price is null except on the sale products (n%4 == 0); every
// fifth product has three variants (n%5 == 2), the first sold out, and
// every seventh has one, sold out (n%7 == 3); every eighth has no image
// (n%8 == 5) and every ninth an empty sku (n%9 == 1); tags are empty on
// n%10 == 6; prices reach 1234.00 and more, written without grouping.
//
// Default 34 products, 12 per page; at least 1.
type shopifyShop struct {
	opts     *Options
	products []shopifyProduct
}

type shopifyProduct struct {
	id          int64
	handle      string
	title       string
	vendor      string
	productType string // "": none
	price       int64  // cents, of every variant
	compareAt   int64  // cents; 0: null
	variants    []bool // available, per variant
	sku         string // of the first variant; "": empty
	image       bool
	tags        []string
	updated     time.Time
}

// shopifyZone is the shop's time zone, written as its UTC offset.
var shopifyZone = time.FixedZone("CET", 3600)

func newShopify(opts *Options) *shopifyShop {
	opts.Products = defaultProducts(opts.Products, 34, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 12
	}
	s := &shopifyShop{opts: opts}
	for n := 1; n <= opts.Products; n++ {
		r := newRNG(n, 0x73686f70696679)
		title := productName(n, r)
		p := shopifyProduct{id: 7_712_345_600_000 + int64(n)*37, title: title, vendor: pick(r, brands),
			productType: pick(r, []string{"Lighting", "Kitchen", "Textiles", "Furniture"}), price: cents(r, 3, 1600),
			variants: []bool{true}, sku: code("SH", n), image: true, tags: pickTags(r, 3),
			updated: time.Date(2025, time.March, 1, 9, 30, 0, 0, time.UTC).Add(time.Duration(n) * 53 * time.Hour)}
		p.handle = slug(title, n)
		if n%6 == 4 {
			p.productType = ""
		}
		if n%4 == 0 {
			p.compareAt = p.price + p.price/4
		}
		switch {
		case n%5 == 2:
			p.variants = []bool{false, true, true}
		case n%7 == 3:
			p.variants = []bool{false}
		}
		p.image = n%8 != 5
		if n%9 == 1 {
			p.sku = ""
		}
		if n%10 == 6 {
			p.tags = []string{}
		}
		s.products = append(s.products, p)
	}
	return s
}

func (s *shopifyShop) robots(*http.Request) string { return defaultRobots }

// zoned returns t in the shop's time zone: +02:00 in summer time.
func zoned(t time.Time) time.Time {
	if t.Month() > time.March && t.Month() < time.November {
		return t.In(time.FixedZone("CEST", 7200))
	}
	return t.In(shopifyZone)
}

// object returns p as /products.json writes it.
func (s *shopifyShop) object(p *shopifyProduct) map[string]any {
	created := zoned(p.updated.AddDate(0, -2, 0)).Format(time.RFC3339)
	updated := zoned(p.updated).Format(time.RFC3339)
	sizes := []string{"Default Title"}
	if len(p.variants) > 1 {
		sizes = []string{"S", "M", "L"}
	}
	variants := make([]any, len(p.variants))
	for i, avail := range p.variants {
		var compare any
		if p.compareAt > 0 {
			compare = shopifyMoney(p.compareAt)
		}
		sku := p.sku
		if i > 0 && sku != "" {
			sku += "-" + sizes[i]
		}
		variants[i] = map[string]any{"id": p.id*10 + int64(i), "title": sizes[i], "option1": sizes[i], "option2": nil,
			"option3": nil, "sku": sku, "requires_shipping": true, "taxable": true, "featured_image": nil,
			"available": avail, "price": shopifyMoney(p.price), "grams": 400 + 50*i, "compare_at_price": compare,
			"position": i + 1, "product_id": p.id, "created_at": created, "updated_at": updated}
	}
	images := []any{}
	if p.image {
		images = append(images, map[string]any{"id": p.id*7 + 1, "position": 1, "product_id": p.id, "variant_ids": []any{},
			"src": s.imageURL(p), "width": 1200, "height": 1200, "created_at": created, "updated_at": updated})
	}
	return map[string]any{"id": p.id, "title": p.title, "handle": p.handle,
		"body_html": "<p>The " + esc(p.title) + " from " + esc(p.vendor) + ".</p>", "published_at": created,
		"created_at": created, "updated_at": updated, "vendor": p.vendor, "product_type": p.productType,
		"tags": p.tags, "variants": variants, "images": images,
		"options": []any{map[string]any{"name": "Title", "position": 1, "values": sizes}}}
}

// shopifyMoney writes cents as Shopify writes a price: "19.99".
func shopifyMoney(c int64) string { return strconv.FormatInt(c/100, 10) + "." + twoDigits(c%100) }

func (s *shopifyShop) imageURL(p *shopifyProduct) string {
	return "https://cdn.shop.example/s/files/1/0601/2345/products/" + p.handle + ".jpg?v=" + strconv.FormatInt(p.updated.Unix(), 10)
}

func (s *shopifyShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	switch {
	case r.URL.Path == "/products.json":
		s.serveProducts(w, r)
	case strings.HasPrefix(r.URL.Path, "/products/"):
		for i := range s.products {
			if p := &s.products[i]; "/products/"+p.handle == r.URL.Path {
				writeHTML(w, r, http.StatusOK, page(p.title, "", "<div class=\"product\"><h1>"+esc(p.title)+
					"</h1><p class=\"price\">€"+shopifyMoney(p.price)+"</p></div>\n"))
				return
			}
		}
		writeError(w, r, http.StatusNotFound)
	default:
		writeError(w, r, http.StatusNotFound)
	}
}

func (s *shopifyShop) serveProducts(w http.ResponseWriter, r *http.Request) {
	n, ok := pageNumber(r, "page")
	limit, limitOK := pageNumber(r, "limit")
	if !r.URL.Query().Has("limit") {
		limit = 30
	}
	if !ok || !limitOK || limit > 250 {
		writeText(w, r, http.StatusBadRequest, ctJSON, `{"errors":{"page":"must be a positive number, limit at most 250"}}`)
		return
	}
	products := []any{}
	first, last := pageRange(n, len(s.products), limit)
	for i := first - 1; i < last; i++ {
		products = append(products, s.object(&s.products[i]))
	}
	writeText(w, r, http.StatusOK, ctJSON, encodeJSON(map[string]any{"products": products}, false, false))
}

func (s *shopifyShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		available := false
		for _, a := range p.variants {
			available = available || a
		}
		v := map[string]any{"id": p.id, "url": base + "/products/" + p.handle, "title": p.title, "vendor": p.vendor,
			"product_type": nil, "price": money(p.price), "compare_at": nil, "available": available, "sku": nil,
			"variants": int64(len(p.variants)), "image": nil, "tags": nil, "updated_at": p.updated}
		if p.productType != "" {
			v["product_type"] = p.productType
		}
		if p.compareAt > 0 {
			v["compare_at"] = money(p.compareAt)
		}
		if p.sku != "" {
			v["sku"] = p.sku
		}
		if p.image {
			v["image"] = s.imageURL(p)
		}
		if len(p.tags) > 0 {
			v["tags"] = append([]string(nil), p.tags...)
		}
		out = append(out, Product{Key: strconv.FormatInt(p.id, 10), URL: base + "/products/" + p.handle, Values: v})
	}
	return out
}

func (s *shopifyShop) columns() []Column {
	return []Column{{Name: "id", Type: "int64"}, {Name: "url", Type: "string"}, {Name: "title", Type: "string"},
		{Name: "vendor", Type: "string"}, {Name: "product_type", Type: "string"}, {Name: "price", Type: "float64"},
		{Name: "compare_at", Type: "float64"}, {Name: "available", Type: "bool"}, {Name: "sku", Type: "string"},
		{Name: "variants", Type: "int64"}, {Name: "image", Type: "string"}, {Name: "tags", Type: "string", Multiple: true},
		{Name: "updated_at", Type: "timestamp"}}
}

func (s *shopifyShop) config(base string) string {
	return render(base, configHead("shop-shopify", "{base}/products.json?limit="+strconv.Itoa(s.opts.PerPage)), `
[listing]
format = "json"
items  = "products"
pages  = { param = "page", start = 1 }

[item]
key = "id"

[item.fields]
id           = { json = "id", type = "int64", required = true }
url          = { json = "join('', ['/products/', handle])", url = true }
title        = { json = "title", required = true }
vendor       = { json = "vendor" }
product_type = { json = "product_type" }
price        = { json = "variants[0].price", type = "float64", required = true }
compare_at   = { json = "variants[0].compare_at_price", type = "float64" }
available    = { json = "length(variants[?available]) > `+"`0`"+`", type = "bool" }
sku          = { json = "variants[0].sku" }
variants     = { json = "length(variants)", type = "int64" }
image        = { json = "images[0].src", url = true }
tags         = { json = "tags", multiple = true }
updated_at   = { json = "updated_at", type = "timestamp" }
`)
}
