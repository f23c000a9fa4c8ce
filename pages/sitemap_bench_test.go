package pages

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
)

// BenchmarkSitemap50000URLs reads a sitemap of the 50,000 URLs the
// protocol allows, each with a lastmod, as real product sitemaps are. The
// decoder streams tokens, so the memory a read costs is about the links it
// keeps, not a tree of the document (B/op counts the decoder's
// short-lived garbage as well).
func BenchmarkSitemap50000URLs(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := range MaxSitemapURLs {
		fmt.Fprintf(&sb, "<url><loc>https://shop.example/product/p-%06d</loc><lastmod>2026-11-%02d</lastmod></url>\n", i, i%28+1)
	}
	sb.WriteString("</urlset>\n")
	body := []byte(sb.String())
	u, _ := url.Parse("https://shop.example/sitemap-products.xml")
	page := crawl.Page{URL: u, Status: 200, ContentType: "application/xml", Body: body}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		y, err := Sitemap{}.Read(page)
		if err != nil || len(y.Links) != MaxSitemapURLs {
			b.Fatalf("%d links, %v", len(y.Links), err)
		}
	}
	b.ReportMetric(float64(len(body))/(1<<20), "body-MiB")
}
