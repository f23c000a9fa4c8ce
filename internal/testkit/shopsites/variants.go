package shopsites

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The Variants shop sells apparel: listing pages
// /collections/outerwear?page=N (page 1 also without the parameter) link
// through a.next-page to product pages /products/<code>, each with a
// table.variants of 1, 4, 3 or 2 tr.variant rows (n%4 == 1, 2, 3, 0),
// after a header row and before a tr.variant-note row that is not a
// variant. Each row is one item, keyed by its data-sku attribute, with
// cells td.v-colour (empty on every product with n%4 == 0), td.v-size
// (empty when n%5 == 1), td.v-stock (a number, "Sold out", or empty on
// the last row when n%3 == 0) and td.v-price ("$49.00"). The product name
// (h1 .name), brand (h1 .brand, missing when n%6 == 5) and product code
// (data-product-id) are page-level values repeated on every row.
//
// Default 12 product pages (VariantRows(12) = 30 rows), 5 per page; at
// least 1.
type variantsShop struct {
	opts     *Options
	products []variantProduct
}

type variantProduct struct {
	id    int
	code  string
	name  string
	brand string // "": no brand
	rows  []variantRow
}

type variantRow struct {
	sku    string
	colour string
	size   string
	stock  int   // -1: empty cell
	price  int64 // cents
}

var (
	apparel     = []string{"Trail Jacket", "Hoodie", "Parka", "Beanie", "Fleece", "Rain Shell", "Gilet"}
	apparelHues = []string{"Red", "Forest", "Navy", "Sand", "Black"}
	sizes       = []string{"S", "M", "L", "XL"}
)

func newVariants(opts *Options) *variantsShop {
	opts.Products = defaultProducts(opts.Products, 12, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 5
	}
	s := &variantsShop{opts: opts}
	for id := 1; id <= opts.Products; id++ {
		r := newRNG(id, 0x76617269616e74)
		p := variantProduct{id: id, code: code("VR", id), name: pick(r, apparel), brand: pick(r, brands)}
		if id%5 == 0 {
			p.name = pick(r, accented) + " " + p.name
		}
		if id%6 == 5 {
			p.brand = ""
		}
		base := cents(r, 20, 400)
		n := variantRowCount(id)
		for i := range n {
			row := variantRow{sku: fmt.Sprintf("%s-%02d", p.code, i+1), colour: pick(r, apparelHues), size: sizes[i],
				stock: r.between(0, 20), price: base + int64(i)*500}
			if id%4 == 0 {
				row.colour = ""
			}
			if id%5 == 1 {
				row.size = ""
			}
			if row.stock < 3 {
				row.stock = 0
			}
			if id%3 == 0 && i == n-1 {
				row.stock = -1
			}
			p.rows = append(p.rows, row)
		}
		s.products = append(s.products, p)
	}
	return s
}

// variantRowCount returns the number of variant rows of product n: 1, 4,
// 3, 2 for n%4 == 1, 2, 3, 0.
func variantRowCount(n int) int { return 1 + (n*3+1)%4 }

// VariantRows returns the number of items (variant rows) of a Variants
// shop with the given number of product pages.
func VariantRows(products int) int {
	total := 0
	for n := 1; n <= products; n++ {
		total += variantRowCount(n)
	}
	return total
}

func (s *variantsShop) robots(*http.Request) string { return defaultRobots }

func (s *variantsShop) path(p *variantProduct) string { return "/products/" + lower(p.code) }

func (s *variantsShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	path := r.URL.Path
	if path == "/collections/outerwear" {
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

func (s *variantsShop) serveListing(w http.ResponseWriter, r *http.Request) {
	n, total, ok := listingPage(w, r, "page", len(s.products), s.opts.PerPage)
	if !ok {
		return
	}
	var b strings.Builder
	b.WriteString("<h1>Outerwear</h1>\n<div class=\"collection\">\n")
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	for i := first - 1; i < last; i++ {
		p := &s.products[i]
		b.WriteString("<a class=\"product-tile\" href=\"" + s.path(p) + "\">" + esc(p.name) + "</a>\n")
	}
	b.WriteString("</div>\n")
	if n < total {
		b.WriteString("<a class=\"next-page\" href=\"/collections/outerwear?page=" + strconv.Itoa(n+1) + "\">More</a>\n")
	}
	writeHTML(w, r, http.StatusOK, page("Outerwear", "", b.String()))
}

func (s *variantsShop) productPage(p *variantProduct) string {
	var b strings.Builder
	b.WriteString("<div class=\"product\" data-product-id=\"" + p.code + "\">\n<h1 class=\"product-title\">")
	if p.brand != "" {
		b.WriteString("<span class=\"brand\">" + esc(p.brand) + "</span> ")
	}
	b.WriteString("<span class=\"name\">" + esc(p.name) + "</span></h1>\n<p class=\"from-price\">from " + dollars(p.rows[0].price) + "</p>\n")
	b.WriteString("<table class=\"variants\">\n<thead><tr><th>SKU</th><th>Colour</th><th>Size</th><th>Stock</th><th>Price</th></tr></thead>\n<tbody>\n")
	for _, row := range p.rows {
		stock := ""
		switch {
		case row.stock == 0:
			stock = "Sold out"
		case row.stock > 0:
			stock = strconv.Itoa(row.stock)
		}
		b.WriteString("<tr class=\"variant\" data-sku=\"" + row.sku + "\"><td class=\"v-sku\">" + row.sku + "</td><td class=\"v-colour\">" +
			row.colour + "</td><td class=\"v-size\">" + row.size + "</td><td class=\"v-stock\">" + stock +
			"</td><td class=\"v-price\">" + dollars(row.price) + "</td></tr>\n")
	}
	b.WriteString("<tr class=\"variant-note\"><td colspan=\"5\">Sizes run small; order one size up.</td></tr>\n</tbody>\n</table>\n</div>\n")
	return page(p.name, "", b.String())
}

// dollars writes cents as "$1,234.50".
func dollars(c int64) string { return "$" + groupThousands(c/100, ",") + "." + twoDigits(c%100) }

func (s *variantsShop) truth(base string) []Product {
	var out []Product
	for i := range s.products {
		p := &s.products[i]
		var brand any
		if p.brand != "" {
			brand = p.brand
		}
		for _, row := range p.rows {
			v := map[string]any{"sku": row.sku, "product": p.name, "brand": brand, "product_id": p.code,
				"colour": row.colour, "size": nil, "stock": nil, "price": money(row.price)}
			if row.size != "" {
				v["size"] = row.size
			}
			if row.stock >= 0 {
				v["stock"] = int64(row.stock)
			}
			out = append(out, Product{Key: row.sku, URL: base + s.path(p), Values: v})
		}
	}
	return out
}

func (s *variantsShop) columns() []Column {
	return []Column{{Name: "sku", Type: "string"}, {Name: "product", Type: "string"}, {Name: "brand", Type: "string"},
		{Name: "product_id", Type: "string"}, {Name: "colour", Type: "string"}, {Name: "size", Type: "string"},
		{Name: "stock", Type: "int64"}, {Name: "price", Type: "float64"}}
}

func (s *variantsShop) config(base string) string {
	return render(base, configHead("shop-variants", "{base}/collections/outerwear"), `
[listing]
item_links = "div.collection a.product-tile"
next_page  = "a.next-page"

[item]
key  = "sku"
rows = "table.variants tr.variant"

[item.fields]
sku        = { css = ":scope", attr = "data-sku", required = true }
product    = { css = "h1 .name", scope = "page", required = true }
brand      = { css = "h1 .brand", scope = "page" }
product_id = { css = "[data-product-id]", attr = "data-product-id", scope = "page" }
colour     = { css = "td.v-colour", default = "" }
size       = { css = "td.v-size" }
stock      = { css = "td.v-stock", type = "int64", map = { "Sold out" = 0 } }
price      = { css = "td.v-price", type = "float64", required = true }
`)
}
