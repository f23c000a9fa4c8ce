package shopsites

import (
	"net/http"
	"strconv"
	"strings"
)

// The Vue shop is a Vue Storefront shop whose server writes the store's
// state into each page as a JavaScript object literal, not JSON (see
// jsLiteral: unquoted keys, single-quoted strings, \u002F for every /,
// trailing commas, undefined), followed by the code that removes the
// script:
//
//	window.__INITIAL_STATE__={...};(function(){var s;...}());
//
// Listing pages /c/wohnen?page=N (page 1 also at /c/wohnen) render their
// product tiles without links (a click handler routes to the product)
// and hold the page's products at 'category-next'.searchedProducts.items
// (sku, name, url_path); the next page is an
// a.sf-pagination__item--next, absent on the last page. Product pages
// /p/<slug> first run a script that assigns window.__INITIAL_STATE__ an
// expression that is no literal (window.__INITIAL_STATE__ || {}), then
// one whose object has a __INITIAL_STATE__ member (no assignment), then
// the state, whose product.current holds sku, name, brand, ean, price
// {regular, special}, stock {qty, is_in_stock}, rating, image and
// categories.
//
// Quirks: brand is "L'Atelier du Bois" (a quote in a single-quoted
// string) on n%6 == 1; special is undefined but on n%4 == 2; rating is
// undefined on n%5 == 3; out of stock (qty 0) on n%7 == 5; every ninth
// product has one category (n%9 == 0), the others two.
//
// Default 36 products, 12 per page; at least 1.
type vueShop struct {
	opts     *Options
	products []vueProduct
}

type vueProduct struct {
	n          int
	sku        string
	name       string
	slug       string
	brand      string
	ean        string
	price      int64 // cents
	special    int64 // cents; 0: undefined
	qty        int
	rating     int // tenths; 0: undefined
	categories []string
}

func newVue(opts *Options) *vueShop {
	opts.Products = defaultProducts(opts.Products, 36, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 12
	}
	s := &vueShop{opts: opts}
	for n := 1; n <= opts.Products; n++ {
		r := newRNG(n, 0x767565)
		p := vueProduct{n: n, sku: code("VS", n), name: productName(n, r), brand: pick(r, brands),
			ean: "400" + strconv.FormatInt(int64(1_000_000_000+r.intn(999_999_999)), 10), price: cents(r, 3, 1200),
			qty: r.between(1, 60), rating: r.between(10, 50), categories: []string{"Wohnen", pick(r, []string{"Leuchten", "Textilien", "Deko"})}}
		p.slug = slug(p.name, n)
		if n%6 == 1 {
			p.brand = "L'Atelier du Bois"
		}
		if n%4 == 2 {
			p.special = p.price * 9 / 10
		}
		if n%5 == 3 {
			p.rating = 0
		}
		if n%7 == 5 {
			p.qty = 0
		}
		if n%9 == 0 {
			p.categories = p.categories[:1]
		}
		s.products = append(s.products, p)
	}
	return s
}

func (s *vueShop) robots(*http.Request) string { return defaultRobots }

// stateScript returns the script that writes state and removes itself.
func stateScript(state map[string]any) string {
	return "<script>window.__INITIAL_STATE__=" + jsLiteral(state) +
		";(function(){var s;(s=document.currentScript||document.scripts[document.scripts.length-1]).parentNode.removeChild(s);}());</script>\n"
}

// current returns p as the state's product.current.
func (s *vueShop) current(p *vueProduct) map[string]any {
	var special, rating any = jsUndefined{}, jsUndefined{}
	if p.special > 0 {
		special = money(p.special)
	}
	if p.rating > 0 {
		rating = float64(p.rating) / 10
	}
	return map[string]any{"sku": p.sku, "name": p.name, "brand": p.brand, "ean": p.ean, "url_path": "/p/" + p.slug,
		"price": map[string]any{"regular": money(p.price), "special": special, "currency": "EUR"},
		"stock": map[string]any{"qty": p.qty, "is_in_stock": p.qty > 0}, "rating": rating,
		"image": s.image(p), "categories": p.categories,
		"description": "<p>" + p.name + " von " + p.brand + ".</p>"}
}

func (s *vueShop) image(p *vueProduct) string {
	return "/media/catalog/product/" + lower(p.sku[:1]) + "/" + lower(p.sku[1:2]) + "/" + lower(p.sku) + ".jpg"
}

func (s *vueShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	path := r.URL.Path
	switch {
	case path == "/c/wohnen":
		s.serveListing(w, r)
	case strings.HasPrefix(path, "/p/"):
		for i := range s.products {
			if p := &s.products[i]; path == "/p/"+p.slug {
				body := "<div id=\"app\"><div class=\"product\"><h1 class=\"sf-heading\">" + esc(p.name) + "</h1></div></div>\n" +
					"<script>window.__INITIAL_STATE__ = window.__INITIAL_STATE__ || {};</script>\n" +
					"<script>var vsfConfig = {ssr: true, __INITIAL_STATE__: 'inline', api: '\\u002Fapi'};</script>\n" +
					stateScript(map[string]any{"product": map[string]any{"current": s.current(p), "breadcrumbs": []any{}},
						"user": map[string]any{"current": nil}, "cart": map[string]any{"items": []any{}}}) +
					"<script src=\"/dist/app.4f1c.js\" defer></script>\n"
				writeHTML(w, r, http.StatusOK, page(p.name, "", body))
				return
			}
		}
		writeError(w, r, http.StatusNotFound)
	default:
		writeError(w, r, http.StatusNotFound)
	}
}

func (s *vueShop) serveListing(w http.ResponseWriter, r *http.Request) {
	n, total, ok := listingPage(w, r, "page", len(s.products), s.opts.PerPage)
	if !ok {
		return
	}
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	items := make([]any, 0, last-first+1)
	var b strings.Builder
	b.WriteString("<div id=\"app\"><h1 class=\"sf-heading\">Wohnen</h1>\n<div class=\"products\">\n")
	for i := first - 1; i < last; i++ {
		p := &s.products[i]
		items = append(items, map[string]any{"sku": p.sku, "name": p.name, "url_path": "/p/" + p.slug, "price": money(p.price)})
		b.WriteString("<div class=\"sf-product-card\" role=\"link\" tabindex=\"0\"><span class=\"sf-product-card__title\">" +
			esc(p.name) + "</span></div>\n")
	}
	b.WriteString("</div>\n<nav class=\"sf-pagination\">")
	if n < total {
		b.WriteString("<a class=\"sf-pagination__item sf-pagination__item--next\" href=\"/c/wohnen?page=" + strconv.Itoa(n+1) + "\">›</a>")
	}
	b.WriteString("</nav></div>\n")
	b.WriteString(stateScript(map[string]any{
		"category":      map[string]any{"current": map[string]any{"name": "Wohnen", "url_path": "/c/wohnen"}},
		"category-next": map[string]any{"searchedProducts": map[string]any{"items": items, "start": first - 1, "perPage": s.opts.PerPage, "total": len(s.products)}},
		"product":       map[string]any{"current": jsUndefined{}},
		"user":          map[string]any{"current": nil},
	}))
	writeHTML(w, r, http.StatusOK, page("Wohnen", "", b.String()))
}

func (s *vueShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		v := map[string]any{"sku": p.sku, "name": p.name, "brand": p.brand, "ean": p.ean, "price": money(p.price),
			"regular_price": money(p.price), "in_stock": p.qty > 0, "qty": int64(p.qty), "rating": nil,
			"image": base + s.image(p), "categories": append([]string(nil), p.categories...)}
		if p.special > 0 {
			v["price"] = money(p.special)
		}
		if p.rating > 0 {
			v["rating"] = float64(p.rating) / 10
		}
		out = append(out, Product{Key: p.sku, URL: base + "/p/" + p.slug, Values: v})
	}
	return out
}

func (s *vueShop) columns() []Column {
	return []Column{{Name: "sku", Type: "string"}, {Name: "name", Type: "string"}, {Name: "brand", Type: "string"},
		{Name: "ean", Type: "string"}, {Name: "price", Type: "float64"}, {Name: "regular_price", Type: "float64"},
		{Name: "in_stock", Type: "bool"}, {Name: "qty", Type: "int64"}, {Name: "rating", Type: "float64"},
		{Name: "image", Type: "string"}, {Name: "categories", Type: "string", Multiple: true}}
}

func (s *vueShop) config(base string) string {
	return render(base, configHead("shop-vue", "{base}/c/wohnen"), `
[listing]
item_links = { js = "window.__INITIAL_STATE__", json = '"category-next".searchedProducts.items[].url_path' }
next_page  = "a.sf-pagination__item--next"

[item]
key = "sku"

[item.fields]
sku           = { js = "window.__INITIAL_STATE__", json = "product.current.sku", required = true }
name          = { js = "window.__INITIAL_STATE__", json = "product.current.name", required = true }
brand         = { js = "window.__INITIAL_STATE__", json = "product.current.brand" }
ean           = { js = "window.__INITIAL_STATE__", json = "product.current.ean" }
price         = { js = "window.__INITIAL_STATE__", json = "product.current.price.special || product.current.price.regular", type = "float64", required = true }
regular_price = { js = "window.__INITIAL_STATE__", json = "product.current.price.regular", type = "float64" }
in_stock      = { js = "window.__INITIAL_STATE__", json = "product.current.stock.is_in_stock", type = "bool" }
qty           = { js = "window.__INITIAL_STATE__", json = "product.current.stock.qty", type = "int64" }
rating        = { js = "window.__INITIAL_STATE__", json = "product.current.rating", type = "float64" }
image         = { js = "window.__INITIAL_STATE__", json = "product.current.image", url = true }
categories    = { js = "window.__INITIAL_STATE__", json = "product.current.categories", multiple = true }
`)
}
