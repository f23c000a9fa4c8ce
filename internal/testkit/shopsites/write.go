package shopsites

import (
	"html"
	"net/http"
	"strconv"
	"strings"
)

// Content types the shops answer with.
const (
	ctHTML = "text/html; charset=utf-8"
	ctJSON = "application/json; charset=utf-8"
	ctXML  = "application/xml; charset=utf-8"
	ctGzip = "application/gzip"
)

// writeBytes writes body with status and Content-Type ctype, without the
// body for a HEAD request.
func writeBytes(w http.ResponseWriter, r *http.Request, status int, ctype string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// writeText is writeBytes for a string body.
func writeText(w http.ResponseWriter, r *http.Request, status int, ctype, body string) {
	writeBytes(w, r, status, ctype, []byte(body))
}

// writeHTML writes an HTML page.
func writeHTML(w http.ResponseWriter, r *http.Request, status int, body string) {
	writeText(w, r, status, ctHTML, body)
}

// writeError writes a short error page with status.
func writeError(w http.ResponseWriter, r *http.Request, status int) {
	msg := strconv.Itoa(status) + " " + http.StatusText(status)
	writeHTML(w, r, status, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"+msg+
		"</title></head><body><h1>"+msg+"</h1></body></html>\n")
}

// esc escapes s for HTML text and attribute values.
func esc(s string) string { return html.EscapeString(s) }

// entities writes some accented letters of escaped text as named
// entities, as many content management systems do.
var entities = strings.NewReplacer("é", "&eacute;", "è", "&egrave;", "É", "&Eacute;", "ç", "&ccedil;")

// page returns a whole HTML document: title is text, head and body are
// markup. The shop's header and footer make every page longer than the
// 512 bytes min_body_bytes asks of a usable page by default.
func page(title, head, body string) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
	b.WriteString(esc(title))
	b.WriteString(" | Shop</title>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString(head)
	b.WriteString("</head>\n<body>\n<header class=\"site-header\"><a class=\"logo\" href=\"/\">Shop</a> <a href=\"/cart\">Cart (0)</a></header>\n<main>\n")
	b.WriteString(body)
	b.WriteString("</main>\n<footer class=\"site-footer\"><p>Free shipping on orders over 50 €. Prices include VAT. " +
		"This shop is a test fixture: its products, prices and stock levels are generated and mean nothing.</p>" +
		"<p><a href=\"/pages/contact\">Contact</a> · <a href=\"/pages/imprint\">Imprint</a></p></footer>\n</body>\n</html>\n")
	return b.String()
}

// pageNumber parses the query parameter name of r as a listing page
// number: missing means 1; ok is false for anything but a canonical
// positive number.
func pageNumber(r *http.Request, name string) (n int, ok bool) {
	v := r.URL.Query().Get(name)
	if v == "" && !r.URL.Query().Has(name) {
		return 1, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || strconv.Itoa(n) != v {
		return 0, false
	}
	return n, true
}

// listingPage reads listing page param of a shop of count products, per
// to a page; it answers 404 and reports false for a page the shop does
// not have.
func listingPage(w http.ResponseWriter, r *http.Request, param string, count, per int) (n, total int, ok bool) {
	n, ok = pageNumber(r, param)
	total = pages(count, per)
	if !ok || n > total {
		writeError(w, r, http.StatusNotFound)
		return 0, total, false
	}
	return n, total, true
}

// origin returns the scheme and host the request was sent to, for the
// absolute URLs sitemaps and JSON-LD carry.
func origin(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}
