package shopsites

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Sitemaps shop has no listing pages: robots.txt names the sitemap
// index /sitemap_index.xml, whose children are
//
//   - /sitemaps/products-1.xml, plain XML with xhtml:link alternates and
//     image:image entries whose image:loc is not a page;
//   - /sitemaps/products-2.xml.gz, a gzip file served as
//     Content-Type: application/gzip;
//   - /sitemaps/products-3.xml.gz, XML served with Content-Encoding: gzip
//     (whatever the request's Accept-Encoding);
//   - /sitemaps/new-arrivals.xml, the last two products only: a legitimate
//     document of about 300 bytes, well under min_body_bytes.
//
// The first three also list /blog/ and /category/ pages (served as HTML),
// which sitemap_match = '/product/' must drop. Product pages are HTML at
// /product/<sku>; every seventh one (n%7 == 3) is listed with a query
// string whose & is written &amp; in the XML. Prices are US notation
// ("$1,234.50").
//
// Default 22 products; at least 6 (each child sitemap lists one).
type sitemapsShop struct {
	opts     *Options
	products []sitemapProduct
}

type sitemapProduct struct {
	id       int
	sku      string
	name     string
	category string
	price    int64 // cents
	updated  time.Time
}

var categories = []string{"Kitchen", "Living", "Garden", "Lighting"}

func newSitemaps(opts *Options) *sitemapsShop {
	opts.Products = defaultProducts(opts.Products, 22, 6)
	s := &sitemapsShop{opts: opts}
	for id := 1; id <= opts.Products; id++ {
		r := newRNG(id, 0x736974656d6170)
		s.products = append(s.products, sitemapProduct{id: id, sku: code("SM", id), name: productName(id, r),
			category: pick(r, categories), price: cents(r, 3, 2500),
			updated: time.Date(2025, time.March, 3, 10, 15, 0, 0, time.UTC).Add(time.Duration(id) * 7 * time.Hour)})
	}
	return s
}

func (s *sitemapsShop) robots(r *http.Request) string {
	return "User-agent: *\nDisallow: /checkout/\n\nSitemap: " + origin(r) + "/sitemap_index.xml\n"
}

func (s *sitemapsShop) path(p *sitemapProduct) string { return "/product/" + lower(p.sku) }

// loc returns p's URL path as the sitemaps list it, query included.
func (s *sitemapsShop) loc(p *sitemapProduct) string {
	if p.id%7 == 3 {
		return s.path(p) + "?colour=red&size=m"
	}
	return s.path(p)
}

// children returns the products each child sitemap lists, in index
// order.
func (s *sitemapsShop) children() [4][]sitemapProduct {
	n := len(s.products)
	rest := n - 2
	c1 := (rest + 1) / 2
	c2 := (rest - c1 + 1) / 2
	return [4][]sitemapProduct{s.products[:c1], s.products[c1 : c1+c2], s.products[c1+c2 : rest], s.products[rest:]}
}

// childPaths are the child sitemaps, in index order.
var childPaths = [4]string{"/sitemaps/products-1.xml", "/sitemaps/products-2.xml.gz", "/sitemaps/products-3.xml.gz", "/sitemaps/new-arrivals.xml"}

func (s *sitemapsShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	o, path := origin(r), r.URL.Path
	kids := s.children()
	switch path {
	case "/":
		writeHTML(w, r, http.StatusOK, page("Welcome", "", "<h1>Welcome</h1>\n<p>Our products are found through search engines.</p>\n"))
		return
	case "/sitemap_index.xml":
		var b strings.Builder
		b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n")
		for i, c := range childPaths {
			b.WriteString("  <sitemap>\n    <loc>" + o + c + "</loc>\n")
			if i < 2 {
				b.WriteString("    <lastmod>2025-03-03T10:15:00+00:00</lastmod>\n")
			}
			b.WriteString("  </sitemap>\n")
		}
		b.WriteString("</sitemapindex>\n")
		writeText(w, r, http.StatusOK, ctXML, b.String())
		return
	case childPaths[0]:
		writeText(w, r, http.StatusOK, ctXML, s.urlset(o, kids[0], 1, true))
		return
	case childPaths[1]:
		writeBytes(w, r, http.StatusOK, ctGzip, gzipped(s.urlset(o, kids[1], 2, false)))
		return
	case childPaths[2]:
		w.Header().Set("Content-Encoding", "gzip")
		writeBytes(w, r, http.StatusOK, ctXML, gzipped(s.urlset(o, kids[2], 3, false)))
		return
	case childPaths[3]:
		var b strings.Builder
		b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n")
		for _, p := range kids[3] {
			b.WriteString("<url><loc>" + o + xmlEscape(s.loc(&p)) + "</loc><lastmod>" + p.updated.Format(time.DateOnly) + "</lastmod></url>\n")
		}
		b.WriteString("</urlset>\n")
		writeText(w, r, http.StatusOK, "text/xml; charset=utf-8", b.String())
		return
	}
	if strings.HasPrefix(path, "/blog/") || strings.HasPrefix(path, "/category/") {
		title := strings.ReplaceAll(path[strings.LastIndexByte(path, '/')+1:], "-", " ")
		writeHTML(w, r, http.StatusOK, page(title, "", "<h1>"+esc(title)+"</h1>\n<p>Stories and ideas from our team.</p>\n"))
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

// urlset renders child sitemap number n listing products, and a blog and
// a category page; rich adds xhtml:link alternates and image:image
// entries.
func (s *sitemapsShop) urlset(o string, products []sitemapProduct, n int, rich bool) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"")
	if rich {
		b.WriteString(" xmlns:xhtml=\"http://www.w3.org/1999/xhtml\" xmlns:image=\"http://www.google.com/schemas/sitemap-image/1.1\"")
	}
	b.WriteString(">\n")
	entry := func(loc, lastmod string) {
		b.WriteString("  <url>\n    <loc>" + o + xmlEscape(loc) + "</loc>\n")
		if lastmod != "" {
			b.WriteString("    <lastmod>" + lastmod + "</lastmod>\n")
		}
	}
	entry("/blog/how-to-choose-a-kettle-"+strconv.Itoa(n), "2025-01-15")
	b.WriteString("  </url>\n")
	for i := range products {
		p := &products[i]
		entry(s.loc(p), p.updated.Format(time.RFC3339))
		if rich {
			b.WriteString("    <xhtml:link rel=\"alternate\" hreflang=\"de\" href=\"" + o + "/de" + s.path(p) + "\"/>\n")
			b.WriteString("    <image:image><image:loc>" + o + "/cdn/product/" + lower(p.sku) + ".jpg</image:loc></image:image>\n")
		}
		b.WriteString("    <changefreq>weekly</changefreq>\n  </url>\n")
	}
	entry("/category/"+lower(categories[n%len(categories)]), "")
	b.WriteString("  </url>\n</urlset>\n")
	return b.String()
}

func (s *sitemapsShop) productPage(p *sitemapProduct) string {
	price := "$" + groupThousands(p.price/100, ",") + "." + twoDigits(p.price%100)
	body := "<nav class=\"breadcrumb\"><ol><li><a href=\"/\">Home</a></li><li><a href=\"/category/" + lower(p.category) + "\">" +
		p.category + "</a></li></ol></nav>\n<div class=\"product\">\n<h1 class=\"product-title\">" + esc(p.name) + "</h1>\n" +
		"<p class=\"sku\">SKU: " + p.sku + "</p>\n<div class=\"price\"><span class=\"amount\">" + price + "</span></div>\n" +
		"<p class=\"updated\">Updated <time datetime=\"" + p.updated.Format(time.RFC3339) + "\">" + p.updated.Format("2 January 2006") +
		"</time></p>\n</div>\n"
	return page(p.name, "", body)
}

// xmlEscape escapes the XML special characters of a URL.
var xmlEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "'", "&apos;", "\"", "&quot;").Replace

// gzipped returns s compressed with gzip.
func gzipped(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(s)) // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	return b.Bytes()
}

func (s *sitemapsShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		out = append(out, Product{Key: p.sku, URL: base + s.loc(p), Values: map[string]any{
			"sku": p.sku, "name": p.name, "price": money(p.price), "category": p.category, "updated": p.updated}})
	}
	return out
}

func (s *sitemapsShop) columns() []Column {
	return []Column{{Name: "sku", Type: "string"}, {Name: "name", Type: "string"}, {Name: "price", Type: "float64"},
		{Name: "category", Type: "string"}, {Name: "updated", Type: "timestamp"}}
}

func (s *sitemapsShop) config(base string) string {
	return render(base, configHead("shop-sitemaps", "{base}/"), `
[listing]
sitemaps      = ["robots"]
sitemap_match = '/product/'

[item]
key = "sku"

[item.fields]
sku      = { css = "p.sku", regex = 'SKU:\s*(\S+)', required = true }
name     = { css = "h1.product-title", required = true }
price    = { css = "div.price .amount", type = "float64", required = true }
category = { css = "nav.breadcrumb li:last-child a" }
updated  = { css = "time[datetime]", attr = "datetime", type = "timestamp" }
`)
}
