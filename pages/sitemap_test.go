package pages

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
)

func sitemapPage(t *testing.T, body []byte) crawl.Page {
	t.Helper()
	u, _ := url.Parse("http://shop.example/sitemaps/index.xml")
	return crawl.Page{URL: u, Status: 200, ContentType: "application/xml", Body: body}
}

func TestSitemapIndexListsSitemaps(t *testing.T) {
	body := `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>http://shop.example/sitemaps/products-1.xml</loc><lastmod>2026-11-01</lastmod></sitemap>
  <sitemap><loc> products-2.xml.gz </loc></sitemap>
</sitemapindex>`
	y, err := Sitemap{}.Read(sitemapPage(t, []byte(body)))
	want := []crawl.Link{{URL: "http://shop.example/sitemaps/products-1.xml", Kind: crawl.KindSitemap},
		{URL: "http://shop.example/sitemaps/products-2.xml.gz", Kind: crawl.KindSitemap}}
	if err != nil || fmt.Sprint(y.Links) != fmt.Sprint(want) {
		t.Fatalf("links = %v, %v; want %v", y.Links, err, want)
	}
}

func TestSitemapListsTheItemPagesMatchKeeps(t *testing.T) {
	// A legitimate sitemap of two URLs is 300 bytes: not a stub.
	body := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>http://shop.example/product/1</loc></url>
<url><loc>http://shop.example/blog/why-we-sell</loc></url>
<url><loc>http://shop.example/product/2?colour=r&amp;size=m</loc></url>
</urlset>`
	y, err := Sitemap{Match: regexp.MustCompile(`/product/`)}.Read(sitemapPage(t, []byte(body)))
	want := []crawl.Link{{URL: "http://shop.example/product/1", Kind: crawl.KindItem},
		{URL: "http://shop.example/product/2?colour=r&size=m", Kind: crawl.KindItem}}
	if err != nil || fmt.Sprint(y.Links) != fmt.Sprint(want) {
		t.Fatalf("links = %v, %v; want %v", y.Links, err, want)
	}
	// Without a match every <loc> is an item page.
	if y, _ := (Sitemap{}).Read(sitemapPage(t, []byte(body))); len(y.Links) != 3 {
		t.Fatalf("links without a match = %v", y.Links)
	}
}

func TestSitemapGzipFileAndCharset(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	fmt.Fprint(zw, `<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>http://shop.example/product/caf`+"\xe9"+`</loc></url></urlset>`)
	zw.Close()
	y, err := Sitemap{MaxBytes: 1 << 20}.Read(sitemapPage(t, zipped.Bytes()))
	if err != nil || len(y.Links) != 1 || y.Links[0].URL != "http://shop.example/product/caf%C3%A9" {
		t.Fatalf("links = %v, %v", y.Links, err)
	}
	// A bomb is cut at MaxBytes: an unusable page, not a failure.
	zipped.Reset()
	zw = gzip.NewWriter(&zipped)
	zw.Write([]byte("<urlset>"))
	zw.Write(make([]byte, 2<<20))
	zw.Close()
	_, err = Sitemap{MaxBytes: 1 << 20}.Read(sitemapPage(t, zipped.Bytes()))
	if pe, ok := err.(*crawl.PageError); !ok || pe.Failure || !strings.Contains(pe.Reason, "max_body_bytes") {
		t.Fatalf("a gzip bomb: %v", err)
	}
}

func TestWhatIsNotASitemapIsAFailure(t *testing.T) {
	for name, body := range map[string]string{
		"an HTML stub":  "<html><body>Service unavailable</body></html>",
		"cut short":     "<urlset><url><loc>http://shop.example/p",
		"cut at a tag":  "<urlset><url><loc>http://shop.example/p</loc></url>",
		"mismatched":    "<urlset><url><loc>http://shop.example/p</url></loc></urlset>",
		"another root":  "<rss><channel></channel></rss>",
		"empty":         "",
		"a broken gzip": "\x1f\x8b\x08\x00garbage",
	} {
		_, err := Sitemap{}.Read(sitemapPage(t, []byte(body)))
		if pe, ok := err.(*crawl.PageError); !ok || !pe.Failure {
			t.Errorf("%s: %v, want a failure", name, err)
		}
	}
}

func TestSitemapTakesAtMostWhatTheProtocolAllows(t *testing.T) {
	var b strings.Builder
	b.WriteString("<urlset>")
	for i := range MaxSitemapURLs + 3 {
		fmt.Fprintf(&b, "<url><loc>http://shop.example/product/%d</loc></url>", i)
	}
	b.WriteString("</urlset>")
	y, err := Sitemap{}.Read(sitemapPage(t, []byte(b.String())))
	if err != nil || len(y.Links) != MaxSitemapURLs || !strings.Contains(y.Truncated, "3 more URLs") {
		t.Fatalf("%d links, truncated %q, %v", len(y.Links), y.Truncated, err)
	}
}

func TestRobotsNamesSitemaps(t *testing.T) {
	u, _ := url.Parse("http://shop.example/robots.txt")
	y, err := Robots{}.Read(crawl.Page{URL: u, Status: 200, Body: []byte("User-agent: *\nDisallow: /cart\nSitemap: http://shop.example/sitemap_index.xml\nSitemap: /more.xml\n")})
	want := []crawl.Link{{URL: "http://shop.example/sitemap_index.xml", Kind: crawl.KindSitemap}, {URL: "http://shop.example/more.xml", Kind: crawl.KindSitemap}}
	if err != nil || fmt.Sprint(y.Links) != fmt.Sprint(want) {
		t.Fatalf("links = %v, %v; want %v", y.Links, err, want)
	}
	if _, err := (Robots{}).Read(crawl.Page{URL: u, Status: 200, Body: []byte("User-agent: *\nDisallow:\n")}); err == nil {
		t.Fatal("a robots.txt without a sitemap must be an unusable page")
	}
}
