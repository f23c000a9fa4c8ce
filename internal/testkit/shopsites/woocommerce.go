package shopsites

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The WooCommerce shop is a WordPress shop's REST API, JSON written as
// WordPress writes it (\/ and \u00e9 escapes). It serves
//
//   - /wp-json/wc/store/v1/products?page=N&per_page=M (the Store API): a
//     JSON array of products, the next page only in a Link header (a
//     rel="prev" field first on pages after the first), X-WP-Total and
//     X-WP-TotalPages; an empty array past the last page. A product holds
//     id, name, slug, type, permalink (/product/<slug>/, absolute), sku,
//     on_sale, prices (minor units as strings: {"price": "1999",
//     "regular_price": "2499", "currency_minor_unit": 2, ...}),
//     average_rating ("4.50"), review_count, images, categories,
//     is_in_stock and low_stock_remaining;
//   - /wp-json/wp/v2/product?page=N&per_page=M (WordPress core): posts
//     with id, slug, link, title.rendered, modified_gmt (UTC without a
//     zone) and no price; past the last page it answers 400
//     rest_post_invalid_page_number, as WordPress does;
//   - /product/<slug>/: an HTML product page the configs never read.
//
// Options.API chooses the config: the Store API followed by its Link
// headers (WooStore), or WordPress core read with pages (WooCore).
//
// Quirks: every fourth product is on sale (n%4 == 1) and every fifth
// variable (n%5 == 3: a price_range, the price its minimum); sku is ""
// on n%7 == 6; a product without reviews (n%6 == 0) has average_rating
// "0.00"; low_stock_remaining is a number on n%8 == 2, else null; every
// ninth has no image (n%9 == 4) and is out of stock.
//
// Default 36 products, 12 per page; at least 1.
type wooShop struct {
	opts     *Options
	products []wooProduct
}

type wooProduct struct {
	id         int
	name, slug string
	sku        string
	price      int64 // cents
	regular    int64 // cents; above price when on sale
	high       int64 // cents; 0 unless variable
	rating     int   // hundredths; 0: no reviews
	reviews    int
	lowStock   int // 0: null
	image      bool
	categories []string
	modified   time.Time
}

const (
	wooStorePath = "/wp-json/wc/store/v1/products"
	wooCorePath  = "/wp-json/wp/v2/product"
)

func newWoo(opts *Options) *wooShop {
	opts.Products = defaultProducts(opts.Products, 36, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 12
	}
	s := &wooShop{opts: opts}
	for n := 1; n <= opts.Products; n++ {
		r := newRNG(n, 0x776f6f)
		p := wooProduct{id: 100 + 3*n, name: productName(n, r), sku: code("WC", n), price: cents(r, 2, 1800),
			rating: r.between(100, 500), reviews: r.between(1, 40), image: true,
			categories: []string{pick(r, []string{"Wohnen", "Küche", "Geschenke"})},
			modified:   time.Date(2025, time.January, 10, 7, 0, 0, 0, time.UTC).Add(time.Duration(n) * 31 * time.Hour)}
		p.slug = slug(p.name, n)
		p.regular = p.price
		if n%4 == 1 {
			p.regular = p.price + p.price/5
		}
		if n%5 == 3 {
			p.high = p.price + 1500
		}
		if n%7 == 6 {
			p.sku = ""
		}
		if n%6 == 0 {
			p.rating, p.reviews = 0, 0
		}
		if n%8 == 2 {
			p.lowStock = r.between(1, 3)
		}
		p.image = n%9 != 4
		if n%3 == 0 {
			p.categories = append(p.categories, "Sale")
		}
		s.products = append(s.products, p)
	}
	return s
}

func (s *wooShop) robots(*http.Request) string { return defaultRobots }

// storeObject returns p as the Store API writes it, links under o.
func (s *wooShop) storeObject(o string, p *wooProduct) map[string]any {
	minor := func(c int64) string { return strconv.FormatInt(c, 10) }
	prices := map[string]any{"price": minor(p.price), "regular_price": minor(p.regular), "sale_price": minor(p.price),
		"price_range": nil, "currency_code": "EUR", "currency_symbol": "€", "currency_minor_unit": 2,
		"currency_decimal_separator": ",", "currency_thousand_separator": ".", "currency_prefix": "", "currency_suffix": " €"}
	typ := "simple"
	if p.high > 0 {
		typ = "variable"
		prices["price_range"] = map[string]any{"min_amount": minor(p.price), "max_amount": minor(p.high)}
	}
	images := []any{}
	if p.image {
		src := o + "/wp-content/uploads/2025/01/" + p.slug + ".jpg"
		images = append(images, map[string]any{"id": p.id + 1, "src": src, "thumbnail": strings.TrimSuffix(src, ".jpg") + "-300x300.jpg",
			"srcset": src + " 1200w", "sizes": "(max-width: 1200px) 100vw, 1200px", "name": p.slug + ".jpg", "alt": ""})
	}
	cats := make([]any, len(p.categories))
	for i, c := range p.categories {
		cats[i] = map[string]any{"id": 15 + i, "name": c, "slug": lower(c), "link": o + "/product-category/" + lower(c) + "/"}
	}
	var low any
	if p.lowStock > 0 {
		low = p.lowStock
	}
	return map[string]any{"id": p.id, "name": p.name, "slug": p.slug, "parent": 0, "type": typ, "variation": "",
		"permalink": o + "/product/" + p.slug + "/", "sku": p.sku, "short_description": "<p>" + esc(p.name) + "</p>",
		"on_sale": p.regular > p.price, "prices": prices, "price_html": "<span class=\"amount\">" + euros(p.price) + "</span>",
		"average_rating": strconv.Itoa(p.rating/100) + "." + twoDigits(int64(p.rating%100)), "review_count": p.reviews,
		"images": images, "categories": cats, "tags": []any{}, "attributes": []any{}, "variations": []any{},
		"has_options": p.high > 0, "is_purchasable": true, "is_in_stock": p.image, "is_on_backorder": false,
		"low_stock_remaining": low, "sold_individually": false,
		"add_to_cart": map[string]any{"text": "In den Warenkorb", "url": "?add-to-cart=" + strconv.Itoa(p.id), "minimum": 1, "maximum": 9999}}
}

// euros writes cents as a German shop does: "1.234,56 €".
func euros(c int64) string { return groupThousands(c/100, ".") + "," + twoDigits(c%100) + "\u00a0€" }

// coreObject returns p as WordPress core's REST API writes the post.
func (s *wooShop) coreObject(o string, p *wooProduct) map[string]any {
	mod := p.modified.Format("2006-01-02T15:04:05")
	local := p.modified.Add(time.Hour).Format("2006-01-02T15:04:05")
	return map[string]any{"id": p.id, "date": local, "date_gmt": mod, "modified": local, "modified_gmt": mod,
		"guid": map[string]any{"rendered": o + "/?post_type=product&p=" + strconv.Itoa(p.id)}, "slug": p.slug,
		"status": "publish", "type": "product", "link": o + "/product/" + p.slug + "/",
		"title": map[string]any{"rendered": p.name}, "content": map[string]any{"rendered": "<p>" + esc(p.name) + "</p>\n", "protected": false},
		"featured_media": 0, "template": "", "meta": []any{}, "product_cat": []any{15}, "class_list": []any{"post-" + strconv.Itoa(p.id), "product"}}
}

func (s *wooShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	switch path := r.URL.Path; {
	case path == wooStorePath || path == wooCorePath:
		s.serveAPI(w, r, path)
	case strings.HasPrefix(path, "/product/"):
		for i := range s.products {
			if p := &s.products[i]; path == "/product/"+p.slug+"/" {
				writeHTML(w, r, http.StatusOK, page(p.name, "", "<div class=\"product\"><h1 class=\"product_title\">"+esc(p.name)+
					"</h1><p class=\"price\">"+euros(p.price)+"</p></div>\n"))
				return
			}
		}
		writeError(w, r, http.StatusNotFound)
	default:
		writeError(w, r, http.StatusNotFound)
	}
}

func (s *wooShop) serveAPI(w http.ResponseWriter, r *http.Request, path string) {
	n, ok := pageNumber(r, "page")
	per, perOK := pageNumber(r, "per_page")
	if !r.URL.Query().Has("per_page") {
		per = 10
	}
	if !ok || !perOK || per > 100 {
		writeText(w, r, http.StatusBadRequest, ctJSON, encodeJSON(map[string]any{"code": "rest_invalid_param",
			"message": "Invalid parameter(s): page", "data": map[string]any{"status": 400}}, true, false))
		return
	}
	total := pages(len(s.products), per)
	if path == wooCorePath && n > total {
		writeText(w, r, http.StatusBadRequest, ctJSON, encodeJSON(map[string]any{"code": "rest_post_invalid_page_number",
			"message": "The page number requested is larger than the number of pages available.", "data": map[string]any{"status": 400}}, true, false))
		return
	}
	o := origin(r)
	items := []any{}
	if n <= total {
		first, last := pageRange(n, len(s.products), per)
		for i := first - 1; i < last; i++ {
			if path == wooStorePath {
				items = append(items, s.storeObject(o, &s.products[i]))
			} else {
				items = append(items, s.coreObject(o, &s.products[i]))
			}
		}
	}
	h := w.Header()
	link := func(page int, rel string) {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(page))
		h.Add("Link", "<"+o+path+"?"+q.Encode()+">; rel=\""+rel+"\"")
	}
	if n > 1 && n <= total+1 {
		link(n-1, "prev")
	}
	if n < total {
		link(n+1, "next")
	}
	h.Set("X-WP-Total", strconv.Itoa(len(s.products)))
	h.Set("X-WP-TotalPages", strconv.Itoa(total))
	writeText(w, r, http.StatusOK, ctJSON, encodeJSON(items, true, false))
}

func (s *wooShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		url := base + "/product/" + p.slug + "/"
		v := map[string]any{"id": int64(p.id), "url": url, "name": p.name}
		if s.opts.API == WooCore {
			v["slug"], v["modified"] = p.slug, p.modified
			out = append(out, Product{Key: strconv.Itoa(p.id), URL: url, Values: v})
			continue
		}
		v["sku"], v["price"], v["regular_price"], v["currency"] = nil, money(p.price), money(p.regular), "EUR"
		v["on_sale"], v["in_stock"], v["low_stock"] = p.regular > p.price, p.image, nil
		v["rating"], v["reviews"], v["image"] = float64(p.rating)/100, int64(p.reviews), nil
		v["categories"] = append([]string(nil), p.categories...)
		if p.sku != "" {
			v["sku"] = p.sku
		}
		if p.lowStock > 0 {
			v["low_stock"] = int64(p.lowStock)
		}
		if p.image {
			v["image"] = base + "/wp-content/uploads/2025/01/" + p.slug + ".jpg"
		}
		out = append(out, Product{Key: strconv.Itoa(p.id), URL: url, Values: v})
	}
	return out
}

func (s *wooShop) columns() []Column {
	if s.opts.API == WooCore {
		return []Column{{Name: "id", Type: "int64"}, {Name: "url", Type: "string"}, {Name: "name", Type: "string"},
			{Name: "slug", Type: "string"}, {Name: "modified", Type: "timestamp"}}
	}
	return []Column{{Name: "id", Type: "int64"}, {Name: "url", Type: "string"}, {Name: "name", Type: "string"},
		{Name: "sku", Type: "string"}, {Name: "price", Type: "float64"}, {Name: "regular_price", Type: "float64"},
		{Name: "currency", Type: "string"}, {Name: "on_sale", Type: "bool"}, {Name: "in_stock", Type: "bool"},
		{Name: "low_stock", Type: "int64"}, {Name: "rating", Type: "float64"}, {Name: "reviews", Type: "int64"},
		{Name: "image", Type: "string"}, {Name: "categories", Type: "string", Multiple: true}}
}

func (s *wooShop) config(base string) string {
	per := strconv.Itoa(s.opts.PerPage)
	if s.opts.API == WooCore {
		return render(base, configHead("shop-woocommerce", "{base}"+wooCorePath+"?per_page="+per), `
[listing]
format = "json"
items  = "@"
pages  = { param = "page", start = 1 }

[item]
key = "id"

[item.fields]
id       = { json = "id", type = "int64", required = true }
url      = { json = "link", url = true }
name     = { json = "title.rendered", required = true }
slug     = { json = "slug" }
modified = { json = "modified_gmt", type = "timestamp", format = "2006-01-02T15:04:05" }
`)
	}
	return render(base, configHead("shop-woocommerce", "{base}"+wooStorePath+"?per_page="+per), `
[listing]
format    = "json"
items     = "@"
next_page = { header = "link" }

[item]
key = "id"

[item.fields]
id            = { json = "id", type = "int64", required = true }
url           = { json = "permalink", url = true }
name          = { json = "name", required = true }
sku           = { json = "sku" }
price         = { json = "to_number(prices.price) / `+"`100`"+`", type = "float64", required = true }
regular_price = { json = "to_number(prices.regular_price) / `+"`100`"+`", type = "float64" }
currency      = { json = "prices.currency_code" }
on_sale       = { json = "on_sale", type = "bool" }
in_stock      = { json = "is_in_stock", type = "bool" }
low_stock     = { json = "low_stock_remaining", type = "int64" }
rating        = { json = "average_rating", type = "float64" }
reviews       = { json = "review_count", type = "int64" }
image         = { json = "images[0].src", url = true }
categories    = { json = "categories[].name", multiple = true }
`)
}
