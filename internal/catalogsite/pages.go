package catalogsite

import (
	"net/http"
	"strconv"
	"strings"
)

// needsEscape reports whether s contains a character appendEscaped
// replaces.
func needsEscape(s string) bool { return strings.ContainsAny(s, `&<>"'`) }

// appendEscaped appends s to b, escaped for HTML text and attribute values.
func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		default:
			continue
		}
		b = append(b, s[last:i]...)
		b = append(b, esc...)
		last = i + 1
	}
	return append(b, s[last:]...)
}

func appendStock(b []byte, n int) []byte {
	if n > 0 {
		b = append(b, "In stock ("...)
	} else {
		b = append(b, "Out of stock ("...)
	}
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, " available)"...)
}

// appendHead appends the document start up to the opening of the main
// content; crumb is the last breadcrumb entry. Both are already escaped.
func (s *Site) appendHead(b []byte, title, crumb string) []byte {
	b = append(b, "<!DOCTYPE html>\n<html lang=\"en-us\">\n<head>\n<meta charset=\""...)
	b = append(b, s.charset.name...)
	b = append(b, "\">\n<title>"...)
	b = append(b, title...)
	b = append(b, ` | Books to Scrape - Sandbox</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="A sandbox catalog of books for practising web crawling.">
<link rel="stylesheet" href="/static/css/styles.css">
</head>
<body class="default">
<header class="header"><div class="page_inner"><a href="/catalogue/page-1.html">Books to Scrape</a> <small>We love being scraped!</small></div></header>
<div class="container page"><div class="page_inner">
<ul class="breadcrumb"><li><a href="/catalogue/page-1.html">Home</a></li><li><a href="/catalogue/page-1.html">Books</a></li><li class="active">`...)
	b = append(b, crumb...)
	return append(b, "</li></ul>\n"...)
}

// appendFoot closes what appendHead opened.
func appendFoot(b []byte) []byte {
	return append(b, `</div></div>
<footer class="footer"><p class="copyright">This is a demo catalog for testing web crawlers. Prices, stock levels and titles are generated and have no real meaning.</p></footer>
</body>
</html>
`...)
}

// appendItemPage appends the full page of it.
func (s *Site) appendItemPage(b []byte, it *record) []byte {
	b = s.appendHead(b, it.titleHTML, it.titleHTML)
	b = append(b, "<article class=\"product_page\">\n<div class=\"row\">\n<div class=\"item\"><img src=\""...)
	b = appendEscaped(b, it.Image)
	b = append(b, "\" alt=\"\"></div>\n<div class=\"product_main\"><h1>"...)
	b = append(b, it.titleHTML...)
	b = append(b, "</h1><p class=\"price_color\">"...)
	b = append(b, it.priceHTML...)
	b = append(b, "</p><p class=\"instock availability\">"...)
	b = appendStock(b, it.Stock)
	b = append(b, "</p></div>\n</div>\n<div class=\"sub-header\"><h2>Product Description</h2></div>\n<p>A generated sample book, item "...)
	b = strconv.AppendInt(b, int64(it.ID), 10)
	b = append(b, " of the catalog, kept here so crawlers have something to read.</p>\n<div class=\"sub-header\"><h2>Product Information</h2></div>\n<table class=\"table table-striped\"><tr><th>UPC</th><td>"...)
	b = appendEscaped(b, it.UPC)
	b = append(b, "</td></tr><tr><th>Product Type</th><td>Books</td></tr><tr><th>Price (incl. tax)</th><td>"...)
	b = append(b, it.priceHTML...)
	b = append(b, "</td></tr></table>\n<ul class=\"tags\">"...)
	for _, t := range it.Tags {
		b = append(b, "<li>"...)
		b = appendEscaped(b, t)
		b = append(b, "</li>"...)
	}
	b = append(b, "</ul>\n</article>\n"...)
	return appendFoot(b)
}

// appendCard appends it as a listing card.
func appendCard(b []byte, it *record) []byte {
	b = append(b, "<li><article class=\"product_pod\"><h3><a href=\"item-"...)
	b = strconv.AppendInt(b, int64(it.ID), 10)
	b = append(b, ".html\" title=\""...)
	b = append(b, it.titleHTML...)
	b = append(b, "\">"...)
	b = append(b, it.titleHTML...)
	b = append(b, "</a></h3><div class=\"product_main\"><h1>"...)
	b = append(b, it.titleHTML...)
	b = append(b, "</h1><p class=\"price_color\">"...)
	b = append(b, it.priceHTML...)
	b = append(b, "</p></div><table><tr><th>UPC</th><td>"...)
	b = appendEscaped(b, it.UPC)
	return append(b, "</td></tr></table></article></li>\n"...)
}

// appendListingPage appends listing page n (1-based) of total non-empty
// pages, showing items[i] for each i in cards; next says whether it links
// to page n+1.
func (s *Site) appendListingPage(b []byte, n, total int, items []record, cards []int32, next bool) []byte {
	b = s.appendHead(b, "All products", "All products")
	b = append(b, "<div class=\"page-header\"><h1>All products</h1></div>\n"...)
	if len(cards) == 0 {
		b = append(b, "<div class=\"alert alert-warning\">There are no more products on this page. Browse the earlier pages of the catalogue instead.</div>\n"...)
	}
	b = append(b, "<section><ol class=\"row\">\n"...)
	for _, i := range cards {
		b = appendCard(b, &items[i])
	}
	b = append(b, "</ol>\n<ul class=\"pager\">"...)
	if n > 1 {
		b = append(b, "<li class=\"previous\"><a href=\"page-"...)
		b = strconv.AppendInt(b, int64(n-1), 10)
		b = append(b, ".html\">previous</a></li>"...)
	}
	b = append(b, "<li class=\"current\">Page "...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, " of "...)
	b = strconv.AppendInt(b, int64(max(total, n)), 10)
	b = append(b, "</li>"...)
	if next {
		b = append(b, "<li class=\"next\"><a href=\"page-"...)
		b = strconv.AppendInt(b, int64(n+1), 10)
		b = append(b, ".html\">next</a></li>"...)
	}
	b = append(b, "</ul>\n</section>\n"...)
	return appendFoot(b)
}

// appendPrivatePage appends the page served under /private/.
func (s *Site) appendPrivatePage(b []byte, path string) []byte {
	b = s.appendHead(b, "Private", "Private")
	b = append(b, "<div class=\"page-header\"><h1>Private area</h1></div>\n<p>This page lives at <code>"...)
	b = appendEscaped(b, path)
	b = append(b, "</code>. robots.txt disallows it, so a polite crawler never fetches it.</p>\n"...)
	return appendFoot(b)
}

// appendErrorPage appends a short error page for status.
func appendErrorPage(b []byte, status int) []byte {
	b = append(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	b = append(b, "</title></head><body><h1>"...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(status)...)
	return append(b, "</h1></body></html>\n"...)
}
