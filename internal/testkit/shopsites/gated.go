package shopsites

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
)

// The Gated shop keeps its catalog (listing pages /catalog/page-N.html,
// product pages /catalog/item-N.html, and / which redirects to page 1)
// behind a gate; robots.txt is open.
//
// By default the gate is a consent cookie: without cc_consent=1 every
// catalog page answers 403 with a cookie wall. GET /consent?accept=1
// answers 302 to /catalog/page-1.html and sets cc_consent=1 (and a
// session cookie), so a crawler starting there must keep the cookie
// across the redirect; /consent without accept=1 shows the consent page.
//
// With Options.Token set the gate is "Authorization: Bearer <Token>":
// without it, or with another token, catalog pages answer 401 with a
// WWW-Authenticate header, and /consent answers 404. The config reads the
// token from ${SHOP_TOKEN} (TokenEnv).
//
// Default 20 products, 8 per page; at least 1.
type gatedShop struct {
	opts     *Options
	products []gatedProduct
}

type gatedProduct struct {
	id    int
	sku   string
	name  string
	price int64 // cents
	stock int
}

func newGated(opts *Options) *gatedShop {
	opts.Products = defaultProducts(opts.Products, 20, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 8
	}
	s := &gatedShop{opts: opts}
	for id := 1; id <= opts.Products; id++ {
		r := newRNG(id, 0x6761746564)
		s.products = append(s.products, gatedProduct{id: id, sku: code("GT", id), name: productName(id, r),
			price: cents(r, 1, 300), stock: r.between(0, 25)})
	}
	return s
}

func (s *gatedShop) robots(*http.Request) string { return defaultRobots }

func (s *gatedShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	path := r.URL.Path
	if path == "/consent" && s.opts.Token == "" {
		s.serveConsent(w, r)
		return
	}
	if path != "/" && !strings.HasPrefix(path, "/catalog/") {
		writeError(w, r, http.StatusNotFound)
		return
	}
	if !s.admitted(w, r) {
		return
	}
	if path == "/" {
		w.Header().Set("Location", "/catalog/page-1.html")
		writeText(w, r, http.StatusFound, ctHTML, "")
		return
	}
	name := strings.TrimPrefix(path, "/catalog/")
	if n, ok := numbered(name, "page-"); ok && n <= pages(len(s.products), s.opts.PerPage) {
		writeHTML(w, r, http.StatusOK, s.listingPage(n))
		return
	}
	if n, ok := numbered(name, "item-"); ok && n <= len(s.products) {
		writeHTML(w, r, http.StatusOK, s.productPage(&s.products[n-1]))
		return
	}
	writeError(w, r, http.StatusNotFound)
}

// admitted reports whether r passes the gate; if not, it has answered.
func (s *gatedShop) admitted(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Token != "" {
		want := "Bearer " + s.opts.Token
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) == 1 {
			return true
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="catalog"`)
		writeHTML(w, r, http.StatusUnauthorized, page("Sign in", "", "<h1>Sign in required</h1>\n<p>This catalog is for registered partners only.</p>\n"))
		return false
	}
	if c, err := r.Cookie(ConsentCookie); err == nil && c.Value == "1" {
		return true
	}
	writeHTML(w, r, http.StatusForbidden, page("Cookies", "", "<h1>Before you continue</h1>\n<p>We use cookies to run this shop.</p>\n"+
		"<p><a class=\"accept\" href=\"/consent?accept=1\">Accept all</a></p>\n"))
	return false
}

func (s *gatedShop) serveConsent(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("accept") != "1" {
		writeHTML(w, r, http.StatusOK, page("Cookies", "", "<h1>Cookie settings</h1>\n<p>We use cookies to run this shop.</p>\n"+
			"<p><a class=\"accept\" href=\"/consent?accept=1\">Accept all</a></p>\n"))
		return
	}
	h := w.Header()
	h.Add("Set-Cookie", ConsentCookie+"=1; Path=/; Max-Age=31536000; SameSite=Lax")
	h.Add("Set-Cookie", "session=7f3c9a01; Path=/; HttpOnly")
	h.Set("Location", "/catalog/page-1.html")
	writeText(w, r, http.StatusFound, ctHTML, "")
}

// numbered parses name as prefix + a canonical positive number + ".html".
func numbered(name, prefix string) (int, bool) {
	digits, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	if digits, ok = strings.CutSuffix(digits, ".html"); !ok {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 || strconv.Itoa(n) != digits {
		return 0, false
	}
	return n, true
}

func (s *gatedShop) listingPage(n int) string {
	total := pages(len(s.products), s.opts.PerPage)
	var b strings.Builder
	b.WriteString("<h1>Catalog</h1>\n<ul class=\"products\">\n")
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	for i := first - 1; i < last; i++ {
		p := &s.products[i]
		b.WriteString("<li><a class=\"product\" href=\"/catalog/item-" + strconv.Itoa(p.id) + ".html\">" + esc(p.name) + "</a></li>\n")
	}
	b.WriteString("</ul>\n")
	if n < total {
		b.WriteString("<p class=\"pager\"><a class=\"next\" href=\"/catalog/page-" + strconv.Itoa(n+1) + ".html\">Next page</a></p>\n")
	}
	return page("Catalog", "", b.String())
}

func (s *gatedShop) productPage(p *gatedProduct) string {
	return page(p.name, "", "<div class=\"product\">\n<h1>"+esc(p.name)+"</h1>\n<p class=\"price\">€"+
		strconv.FormatFloat(money(p.price), 'f', 2, 64)+"</p>\n<p class=\"stock\">In stock ("+strconv.Itoa(p.stock)+
		" available)</p>\n<table><tr><th>SKU</th><td class=\"sku\">"+p.sku+"</td></tr></table>\n</div>\n")
}

func (s *gatedShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		out = append(out, Product{Key: p.sku, URL: base + "/catalog/item-" + strconv.Itoa(p.id) + ".html", Values: map[string]any{
			"sku": p.sku, "name": p.name, "price": money(p.price), "stock": int64(p.stock)}})
	}
	return out
}

func (s *gatedShop) columns() []Column {
	return []Column{{Name: "sku", Type: "string"}, {Name: "name", Type: "string"}, {Name: "price", Type: "float64"},
		{Name: "stock", Type: "int64"}}
}

const gatedFields = `
[listing]
item_links = "ul.products a.product"
next_page  = "a.next"

[item]
key = "sku"

[item.fields]
sku   = { css = "td.sku", required = true }
name  = { css = "div.product h1", required = true }
price = { css = "p.price", type = "float64", required = true }
stock = { css = "p.stock", type = "int64", regex = '([0-9]+) available' }
`

func (s *gatedShop) config(base string) string {
	if s.opts.Token != "" {
		return render(base, configHead("shop-gated", "{base}/catalog/page-1.html"), `
[request]
headers = { Authorization = "Bearer ${`+TokenEnv+`}" }
`+gatedFields)
	}
	return render(base, configHead("shop-gated", "{base}/consent?accept=1"), `
[request]
cookie_jar = true
`+gatedFields)
}
