package shopsites

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/text/encoding/charmap"
)

// The OsCommerce shop is a German osCommerce 2.3 shop. Every page is
// written in windows-1252 (umlauts, „quotes“, – and € as single bytes, €
// as 0x80), declared only by <meta http-equiv="Content-Type"
// content="text/html; charset=iso-8859-1"> as the shop's language file
// says, which browsers read as windows-1252; the Content-Type header
// names no charset. It sets no cookie: every link carries the session ID
// in the parameter Options.SessionParam (osCsid by default), that of the
// request's URL, or a fresh one (32 hex digits) when the URL has none, so
// a crawler that drops the parameter sees a new one on every page.
//
// Listing pages /index.php?cPath=3 (and &page=N) show a
// table.productListing whose rows link to
// /product_info.php?cPath=3&products_id=<id> twice (image and name) and
// once to a buy-now URL; links are absolute, as osCommerce writes them.
// The next page is a.pageResults[title=" Nächste Seite "], absent on the
// last page. Product pages show the price in h1[style] (a special offer
// as <del>regular</del> <span class="productSpecialPrice">special</span>),
// the name and [model] in the other h1, and the image in #piGal.
// Prices read "1.234,56€".
//
// Quirks: every twelfth product is a gift voucher whose name holds "€"
// (n%12 == 0), every tenth a teapot named with „“ quotes (n%10 == 7); a
// special offer on n%5 == 2; no image on n%8 == 6. SetPrice changes a
// product's price (a special offer on it ends).
//
// Default 36 products, 12 per page; at least 1.
type oscShop struct {
	opts     *Options
	mu       sync.RWMutex // guards the products' prices
	products []oscProduct
}

type oscProduct struct {
	id      int
	model   string
	name    string
	price   int64 // cents
	special int64 // cents; 0: none
	image   bool
}

var (
	oscGoods  = []string{"Müslischale", "Kaffeebecher", "Wolldecke", "Blumenvase", "Kräuterschere", "Brotkörbchen", "Öllampe", "Sitzkissen"}
	oscSeries = []string{"Nordlicht", "Bergblick", "Seeufer", "Fjäll", "Größe L", "Grün–Weiß"}
)

func newOsCommerce(opts *Options) *oscShop {
	opts.Products = defaultProducts(opts.Products, 36, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 12
	}
	s := &oscShop{opts: opts}
	for n := 1; n <= opts.Products; n++ {
		r := newRNG(n, 0x6f73632d736964)
		p := oscProduct{id: 40 + n, model: code("OS", n), name: pick(r, oscGoods) + " " + pick(r, oscSeries),
			price: cents(r, 3, 1900), image: n%8 != 6}
		switch {
		case n%12 == 0:
			p.name, p.price = "Geschenkgutschein "+strconv.Itoa(25*(1+n/12))+" €", int64(2500*(1+n/12))
		case n%10 == 7:
			p.name = "Teekanne „Klassiker“ " + pick(r, oscSeries)
		}
		if n%5 == 2 {
			p.special = p.price * 4 / 5
		}
		s.products = append(s.products, p)
	}
	return s
}

func (s *oscShop) robots(*http.Request) string { return defaultRobots }

// oscEuros writes cents as the shop's currency format: "1.234,56€".
func oscEuros(c int64) string { return groupThousands(c/100, ".") + "," + twoDigits(c%100) + "€" }

// session returns the session ID of r's URL, or a fresh one for request n.
func (s *oscShop) session(r *http.Request, n int64) string {
	if sid := r.URL.Query().Get(s.opts.SessionParam); sid != "" {
		return sid
	}
	return sessionID(n)
}

// link returns the absolute URL of pathQuery with the session ID added.
func (s *oscShop) link(o, pathQuery, sid string) string {
	sep := "&"
	if !strings.Contains(pathQuery, "?") {
		sep = "?"
	}
	return o + pathQuery + sep + s.opts.SessionParam + "=" + sid
}

func (s *oscShop) setPrice(key string, cents int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.products {
		if p := &s.products[i]; p.model == key {
			p.price, p.special = cents, 0
			return true
		}
	}
	return false
}

func (s *oscShop) serve(w http.ResponseWriter, r *http.Request, n int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sid, o := s.session(r, n), origin(r)
	switch r.URL.Path {
	case "/index.php":
		page, ok := pageNumber(r, "page")
		if !ok || r.URL.Query().Get("cPath") != "3" || page > pages(len(s.products), s.opts.PerPage) {
			s.write(w, r, http.StatusNotFound, "Seite nicht gefunden", "<p>Die angeforderte Seite wurde nicht gefunden.</p>", o, sid)
			return
		}
		s.write(w, r, http.StatusOK, "Wohnen & Küche", s.listing(o, sid, page), o, sid)
	case "/product_info.php":
		id, err := strconv.Atoi(r.URL.Query().Get("products_id"))
		if err == nil && id > 40 && id <= 40+len(s.products) {
			p := &s.products[id-41]
			s.write(w, r, http.StatusOK, p.name, s.productInfo(o, p), o, sid)
			return
		}
		s.write(w, r, http.StatusNotFound, "Artikel nicht gefunden", "<p>Artikel wurde nicht gefunden!</p>", o, sid)
	default:
		writeError(w, r, http.StatusNotFound)
	}
}

// oscPrice writes a product's price as osCommerce does.
func oscPrice(p *oscProduct) string {
	if p.special > 0 {
		return "<del>" + oscEuros(p.price) + "</del> <span class=\"productSpecialPrice\">" + oscEuros(p.special) + "</span>"
	}
	return oscEuros(p.price)
}

func (s *oscShop) listing(o, sid string, n int) string {
	var b strings.Builder
	b.WriteString("<h1>Wohnen &amp; Küche</h1>\n<table border=\"0\" width=\"100%\" cellspacing=\"0\" cellpadding=\"2\" class=\"productListing\">\n" +
		"<tr><td class=\"productListing-heading\">&nbsp;</td><td class=\"productListing-heading\">Artikelname</td>" +
		"<td class=\"productListing-heading\" align=\"right\">Preis</td><td class=\"productListing-heading\">&nbsp;</td></tr>\n")
	first, last := pageRange(n, len(s.products), s.opts.PerPage)
	for i := first - 1; i < last; i++ {
		p := &s.products[i]
		href := esc(s.link(o, "/product_info.php?cPath=3&products_id="+strconv.Itoa(p.id), sid))
		b.WriteString("<tr class=\"productListing-odd\"><td align=\"center\" class=\"productListing-data\"><a href=\"" + href +
			"\"><img src=\"images/" + lower(p.model) + "_s.jpg\" alt=\"" + esc(p.name) + "\"></a></td><td class=\"productListing-data\"><a href=\"" +
			href + "\">" + esc(p.name) + "</a></td><td align=\"right\" class=\"productListing-data\">&nbsp;" + oscPrice(p) +
			"&nbsp;</td><td align=\"center\" class=\"productListing-data\"><a href=\"" +
			esc(s.link(o, "/index.php?cPath=3&sort=2a&action=buy_now&products_id="+strconv.Itoa(p.id), sid)) + "\">Jetzt kaufen</a></td></tr>\n")
	}
	b.WriteString("</table>\n<div class=\"listingNav\">Zeige <b>" + strconv.Itoa(first) + "</b> bis <b>" + strconv.Itoa(last) +
		"</b> (von <b>" + strconv.Itoa(len(s.products)) + "</b> Artikeln) Seiten: ")
	if n > 1 {
		b.WriteString("<a href=\"" + esc(s.link(o, "/index.php?cPath=3&page="+strconv.Itoa(n-1), sid)) +
			"\" class=\"pageResults\" title=\" vorherige Seite \"><u>[&lt;&lt;&nbsp;vorherige]</u></a> ")
	}
	if n < pages(len(s.products), s.opts.PerPage) {
		b.WriteString("<a href=\"" + esc(s.link(o, "/index.php?cPath=3&page="+strconv.Itoa(n+1), sid)) +
			"\" class=\"pageResults\" title=\" Nächste Seite \"><u>[nächste&nbsp;&gt;&gt;]</u></a>")
	}
	b.WriteString("</div>\n")
	return b.String()
}

func (s *oscShop) productInfo(o string, p *oscProduct) string {
	var b strings.Builder
	b.WriteString("<div>\n<h1 style=\"float: right;\">" + oscPrice(p) + "</h1>\n<h1>" + esc(p.name) +
		"<br /><span class=\"smallText\">[" + p.model + "]</span></h1>\n</div>\n<div class=\"contentText\">\n")
	if p.image {
		b.WriteString("<div id=\"piGal\" style=\"float: right;\"><a href=\"images/" + lower(p.model) + ".jpg\" target=\"_blank\"><img src=\"images/" +
			lower(p.model) + ".jpg\" alt=\"" + esc(p.name) + "\" width=\"250\" height=\"250\"></a></div>\n")
	}
	b.WriteString("<p>Unser " + esc(p.name) + " – schön, praktisch und langlebig. Maße und Größe siehe Tabelle.</p>\n</div>\n")
	return b.String()
}

// write writes an osCommerce page in windows-1252.
func (s *oscShop) write(w http.ResponseWriter, r *http.Request, status int, title, body, o, sid string) {
	page := "<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\">\n<html dir=\"LTR\" lang=\"de\">\n<head>\n" +
		"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">\n<title>" + esc(title) + " | Heim & Hof</title>\n" +
		"<base href=\"" + o + "/\">\n<link rel=\"stylesheet\" type=\"text/css\" href=\"stylesheet.css\">\n</head>\n<body>\n" +
		"<div id=\"header\"><a href=\"" + esc(s.link(o, "/index.php", sid)) + "\">Heim &amp; Hof</a> " +
		"<a href=\"" + esc(s.link(o, "/shopping_cart.php", sid)) + "\">Warenkorb</a></div>\n" + body +
		"<div id=\"footer\">Copyright © 2025 Heim &amp; Hof – Alle Preise inkl. MwSt., zzgl. Versandkosten. " +
		"Powered by osCommerce. Ihre Daten werden gemäß Datenschutzerklärung verarbeitet.</div>\n</body>\n</html>\n"
	b, err := charmap.Windows1252.NewEncoder().String(page)
	if err != nil {
		writeError(w, r, http.StatusInternalServerError) // unreachable: every character has a windows-1252 byte
		return
	}
	writeText(w, r, status, "text/html", b)
}

func (s *oscShop) truth(base string) []Product {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		v := map[string]any{"model": p.model, "name": p.name, "price": money(p.price), "regular_price": money(p.price), "image": nil}
		if p.special > 0 {
			v["price"] = money(p.special)
		}
		if p.image {
			v["image"] = base + "/images/" + lower(p.model) + ".jpg"
		}
		out = append(out, Product{Key: p.model, URL: base + "/product_info.php?cPath=3&products_id=" + strconv.Itoa(p.id), Values: v})
	}
	return out
}

func (s *oscShop) columns() []Column {
	return []Column{{Name: "model", Type: "string"}, {Name: "name", Type: "string"}, {Name: "price", Type: "float64"},
		{Name: "regular_price", Type: "float64"}, {Name: "image", Type: "string"}}
}

func (s *oscShop) config(base string) string {
	return render(base, configHead("shop-oscommerce", "{base}/index.php?cPath=3"), `
[listing]
item_links = "table.productListing a[href*='product_info.php']"
next_page  = "a.pageResults[title*='Nächste']"

[item]
key = "model"

[item.fields]
model         = { css = "h1 span.smallText", regex = '\[(.+)\]', required = true }
name          = { css = "h1:not([style])", regex = '^(.+?)\s*\[', required = true }
price         = { css = ["h1[style] span.productSpecialPrice", "h1[style]"], type = "float64", decimal = ",", required = true }
regular_price = { css = ["h1[style] del", "h1[style]"], type = "float64", decimal = "," }
image         = { css = "#piGal img", attr = "src", url = true }
`)
}
