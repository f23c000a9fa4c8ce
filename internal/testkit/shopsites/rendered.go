package shopsites

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The Rendered shop (s17) is a single-page-application shop: its listing
// pages (/shop/page-N.html) and product pages (/shop/p/N.html) are shells
// — a <main id="app"> with the page's kind, number and a nonce issued for
// that response — and /static/app.js builds the page from the JSON API
// /api/v1/products?page=N and /api/v1/products/N. Each API request must
// carry the nonce its page was served with (once) and a signature the
// script computes from it (FNV-1a over a key the script assembles and the
// request's path and query): no plain crawler can forge it, so only a
// browser sees a product. Prices render in Swiss typography
// ("CHF 1’234.50"). Pages also ask for a stylesheet, a preloaded font and
// an image (blocked by [render]'s default), and for /static/tracking.js,
// which robots.txt disallows; with Options.ThirdParty, every page loads
// that script from another host too. robots.txt names /sitemap.xml, which
// lists the product pages.
//
// With Options.ServerSide the same shop renders on the server: every page
// holds the markup the script would build, and no script is served.
//
// Default 12 products, 6 per page; at least 1.
type renderedShop struct {
	opts     *Options
	products []renderedProduct
	nonces   sync.Map // nonce -> true, until an API request uses it
	issued   atomic.Int64
}

type renderedProduct struct {
	id    int
	sku   string
	name  string
	price int64 // cents
	stock int
	tags  []string
}

// renderedKey is what app.js signs API requests with, and assembles from
// pieces so that it appears nowhere in one piece.
const renderedKey = "s17-sign"

func newRendered(opts *Options) *renderedShop {
	opts.Products = defaultProducts(opts.Products, 12, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 6
	}
	s := &renderedShop{opts: opts}
	for id := 1; id <= opts.Products; id++ {
		r := newRNG(id, 0x7331372d7370)
		s.products = append(s.products, renderedProduct{id: id, sku: code("S17", id), name: productName(id, r),
			price: cents(r, 5, 4000), stock: r.between(0, 40), tags: pickTags(r, 3)})
	}
	return s
}

func (s *renderedShop) robots(r *http.Request) string {
	return "User-agent: *\nDisallow: /checkout/\nDisallow: /static/tracking.js\n\nSitemap: " + origin(r) + "/sitemap.xml\n"
}

func (s *renderedShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	path := r.URL.Path
	switch {
	case path == "/static/app.js" && !s.opts.ServerSide:
		writeText(w, r, http.StatusOK, "text/javascript; charset=utf-8", renderedScript)
	case path == "/static/site.css":
		writeText(w, r, http.StatusOK, "text/css; charset=utf-8", "main{max-width:60em}\n")
	case path == "/static/tracking.js":
		writeText(w, r, http.StatusOK, "text/javascript; charset=utf-8", "window.tracked = true;\n")
	case path == "/sitemap.xml":
		s.serveSitemap(w, r)
	case strings.HasPrefix(path, "/api/v1/products") && !s.opts.ServerSide:
		s.serveAPI(w, r)
	case strings.HasPrefix(path, "/shop/"):
		s.servePage(w, r)
	default:
		writeError(w, r, http.StatusNotFound)
	}
}

// servePage serves a listing or product page: a shell, or with
// ServerSide the page as the script would build it.
func (s *renderedShop) servePage(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/shop/")
	total := pages(len(s.products), s.opts.PerPage)
	if n, ok := numbered(name, "page-"); ok && n <= total {
		s.writePage(w, r, "listing", n, func() string { return s.listingMarkup(n) })
		return
	}
	if n, ok := numbered(strings.TrimPrefix(name, "p/"), ""); ok && strings.HasPrefix(name, "p/") && n <= len(s.products) {
		s.writePage(w, r, "item", n, func() string { return s.itemMarkup(&s.products[n-1]) })
		return
	}
	writeError(w, r, http.StatusNotFound)
}

func (s *renderedShop) writePage(w http.ResponseWriter, r *http.Request, kind string, n int, markup func() string) {
	head := "<link rel=\"stylesheet\" href=\"/static/site.css\">\n<link rel=\"preload\" as=\"font\" href=\"/static/shop.woff2\" crossorigin>\n"
	tail := "<img class=\"banner\" src=\"/static/banner.png\" alt=\"\">\n<script async src=\"/static/tracking.js\"></script>\n"
	if s.opts.ThirdParty != "" {
		tail += "<script async src=\"" + esc(s.opts.ThirdParty) + "\"></script>\n"
	}
	var app string
	if s.opts.ServerSide {
		app = "<main id=\"app\">" + markup() + "</main>\n"
	} else {
		nonce := strconv.FormatInt(s.issued.Add(1), 36) + "x" + strconv.FormatUint(uint64(fnvOf(r.URL.Path))%9973, 36)
		s.nonces.Store(nonce, true)
		app = "<main id=\"app\" data-kind=\"" + kind + "\" data-n=\"" + strconv.Itoa(n) + "\" data-nonce=\"" + nonce + "\"></main>\n" +
			"<noscript>This shop needs JavaScript.</noscript>\n<script src=\"/static/app.js\"></script>\n"
	}
	writeHTML(w, r, http.StatusOK, page("Shop", head, app+tail))
}

// serveAPI answers a signed API request once per nonce.
func (s *renderedShop) serveAPI(w http.ResponseWriter, r *http.Request) {
	q := r.URL.RawQuery
	i := strings.LastIndex(q, "&sig=")
	if i < 0 {
		writeText(w, r, http.StatusForbidden, ctJSON, `{"error":"unsigned"}`)
		return
	}
	signed, sig := r.URL.Path+"?"+q[:i], q[i+len("&sig="):]
	nonce := r.URL.Query().Get("nonce")
	if _, issued := s.nonces.LoadAndDelete(nonce); !issued || sig != strconv.FormatUint(uint64(fnvOf(renderedKey+":"+signed)), 16) {
		writeText(w, r, http.StatusForbidden, ctJSON, `{"error":"bad signature"}`)
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/api/v1/products/"); ok {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 1 || n > len(s.products) {
			writeText(w, r, http.StatusNotFound, ctJSON, `{"error":"no such product"}`)
			return
		}
		p := &s.products[n-1]
		b, _ := json.Marshal(map[string]any{"sku": p.sku, "name": p.name, "price": money(p.price), "stock": p.stock, "tags": p.tags})
		writeBytes(w, r, http.StatusOK, ctJSON, b)
		return
	}
	n, ok := pageNumber(r, "page")
	if !ok {
		writeText(w, r, http.StatusBadRequest, ctJSON, `{"error":"bad page"}`)
		return
	}
	cards := []map[string]any{}
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	for i := first - 1; i < last && i < len(s.products); i++ {
		cards = append(cards, map[string]any{"id": s.products[i].id, "name": s.products[i].name})
	}
	var next any
	if n < pages(len(s.products), s.opts.PerPage) {
		next = "/shop/page-" + strconv.Itoa(n+1) + ".html"
	}
	b, _ := json.Marshal(map[string]any{"products": cards, "next": next})
	writeBytes(w, r, http.StatusOK, ctJSON, b)
}

func (s *renderedShop) serveSitemap(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n")
	for _, p := range s.products {
		b.WriteString("<url><loc>" + origin(r) + "/shop/p/" + strconv.Itoa(p.id) + ".html</loc></url>\n")
	}
	b.WriteString("</urlset>\n")
	writeText(w, r, http.StatusOK, ctXML, b.String())
}

// listingMarkup and itemMarkup are what app.js builds, for ServerSide.
func (s *renderedShop) listingMarkup(n int) string {
	var b strings.Builder
	b.WriteString("<h1>Catalog</h1><ul class=\"grid\">")
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	for i := first - 1; i < last && i < len(s.products); i++ {
		p := &s.products[i]
		b.WriteString("<li class=\"card\"><a class=\"product\" href=\"/shop/p/" + strconv.Itoa(p.id) + ".html\">" + esc(p.name) + "</a></li>")
	}
	b.WriteString("</ul>")
	if n < pages(len(s.products), s.opts.PerPage) {
		b.WriteString("<a class=\"next\" href=\"/shop/page-" + strconv.Itoa(n+1) + ".html\">Next</a>")
	}
	return b.String()
}

func (s *renderedShop) itemMarkup(p *renderedProduct) string {
	var b strings.Builder
	b.WriteString("<div class=\"pdp\"><h1>" + esc(p.name) + "</h1><span class=\"sku\">" + p.sku + "</span><span class=\"price\">" +
		swissFrancs(p.price) + "</span><span class=\"stock\">" + strconv.Itoa(p.stock) + "</span><ul class=\"tags\">")
	for _, t := range p.tags {
		b.WriteString("<li>" + esc(t) + "</li>")
	}
	b.WriteString("</ul></div>")
	return b.String()
}

// swissFrancs writes cents as "CHF 1’234.50".
func swissFrancs(c int64) string {
	return "CHF " + groupThousands(c/100, "’") + "." + twoDigits(c%100)
}

func fnvOf(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}

func (s *renderedShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		var tags any
		if len(p.tags) > 0 {
			tags = p.tags
		}
		out = append(out, Product{Key: p.sku, URL: base + "/shop/p/" + strconv.Itoa(p.id) + ".html", Values: map[string]any{
			"sku": p.sku, "name": p.name, "price": money(p.price), "stock": int64(p.stock), "tags": tags}})
	}
	return out
}

func (s *renderedShop) columns() []Column {
	return []Column{{Name: "sku", Type: "string"}, {Name: "name", Type: "string"}, {Name: "price", Type: "float64"},
		{Name: "stock", Type: "int64"}, {Name: "tags", Type: "string", Multiple: true}}
}

const renderedFields = `
[item]
key = "sku"

[item.fields]
sku   = { css = "div.pdp .sku", required = true }
name  = { css = "div.pdp h1", required = true }
price = { css = "div.pdp .price", type = "float64", required = true }
stock = { css = "div.pdp .stock", type = "int64" }
tags  = { css = "div.pdp ul.tags li", multiple = true }
`

const renderedListing = `
[listing]
item_links = "ul.grid a.product"
next_page  = "a.next"
`

func (s *renderedShop) config(base string) string {
	return render(base, configHead("shop-rendered", "{base}/shop/page-1.html"), renderedListing+renderedFields+`
[render]
pages = "all"
wait_for = { listing = "ul.grid", item = "div.pdp h1" }
`)
}

// plainConfig is the config of a user without a browser: the listing's
// links and the sitemap's item pages, read as plain HTML.
func (s *renderedShop) plainConfig(base string) string {
	return render(base, configHead("shop-rendered", "{base}/shop/page-1.html"), renderedListing+"sitemaps = [\"robots\"]\n"+renderedFields)
}

// renderedScript is /static/app.js: it signs the API request of its page
// with the nonce the page carries, and builds the page from the answer.
const renderedScript = `(function () {
  var app = document.getElementById("app");
  var key = ["s17", "sign"].join("-");
  function sign(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619) >>> 0; }
    return h.toString(16);
  }
  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&#34;").replace(/'/g, "&#39;");
  }
  function chf(p) {
    var parts = p.toFixed(2).split(".");
    return "CHF " + parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, "\u2019") + "." + parts[1];
  }
  function api(path, build) {
    var q = path + "&nonce=" + app.getAttribute("data-nonce");
    return fetch(q + "&sig=" + sign(key + ":" + q)).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.json();
    }).then(function (d) { app.innerHTML = build(d); });
  }
  var n = app.getAttribute("data-n");
  if (app.getAttribute("data-kind") === "listing") {
    api("/api/v1/products?page=" + n, function (d) {
      var h = "<h1>Catalog</h1><ul class=\"grid\">";
      d.products.forEach(function (p) {
        h += "<li class=\"card\"><a class=\"product\" href=\"/shop/p/" + p.id + ".html\">" + esc(p.name) + "</a></li>";
      });
      h += "</ul>";
      if (d.next) { h += "<a class=\"next\" href=\"" + esc(d.next) + "\">Next</a>"; }
      return h;
    });
  } else {
    api("/api/v1/products/" + n + "?v=1", function (p) {
      var h = "<div class=\"pdp\"><h1>" + esc(p.name) + "</h1><span class=\"sku\">" + esc(p.sku) + "</span><span class=\"price\">" +
        chf(p.price) + "</span><span class=\"stock\">" + p.stock + "</span><ul class=\"tags\">";
      p.tags.forEach(function (t) { h += "<li>" + esc(t) + "</li>"; });
      return h + "</ul></div>";
    });
  }
})();
`
