package stage

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// sitemapSite serves, in front of the catalog site, a robots.txt naming a
// sitemap index whose children list the catalog's item pages: one plain,
// one a .xml.gz file, one gzipped in transit, with other pages among them.
func sitemapSite(t *testing.T, f *fixture, items int) {
	t.Helper()
	f.site.SetRobots("User-agent: *\nDisallow: /cart\nSitemap: " + f.srv.URL + "/sitemap_index.xml\n")
	loc := func(path string) string { return "<url><loc>" + f.srv.URL + path + "</loc></url>\n" }
	children := make([]strings.Builder, 3)
	for i := 1; i <= items; i++ {
		children[i%3].WriteString(loc(fmt.Sprintf("/catalogue/item-%d.html", i)))
		children[i%3].WriteString(loc(fmt.Sprintf("/blog/post-%d.html", i)))
	}
	urlset := func(b *strings.Builder) []byte {
		return []byte(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + b.String() + "</urlset>")
	}
	index := `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
		"<sitemap><loc>" + f.srv.URL + "/sitemaps/a.xml</loc></sitemap>" +
		"<sitemap><loc>" + f.srv.URL + "/sitemaps/b.xml.gz</loc></sitemap>" +
		"<sitemap><loc>" + f.srv.URL + "/sitemaps/c.xml</loc></sitemap></sitemapindex>"
	gz := func(b []byte) []byte {
		var out bytes.Buffer
		zw := gzip.NewWriter(&out)
		_, _ = zw.Write(b)
		_ = zw.Close()
		return out.Bytes()
	}
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		switch r.URL.Path {
		case "/sitemap_index.xml":
			w.Header().Set("Content-Type", "application/xml")
			_, _ = w.Write([]byte(index))
		case "/sitemaps/a.xml":
			w.Header().Set("Content-Type", "application/xml")
			_, _ = w.Write(urlset(&children[0]))
		case "/sitemaps/b.xml.gz": // a gzip file
			w.Header().Set("Content-Type", "application/gzip")
			_, _ = w.Write(gz(urlset(&children[1])))
		case "/sitemaps/c.xml": // gzipped in transit
			w.Header().Set("Content-Type", "application/xml")
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(gz(urlset(&children[2])))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

const sitemapsOnly = `
[listing]
sitemaps = ["robots"]
sitemap_match = '/catalogue/item-'

[item]
key = "upc"

[item.fields]
title = { css = "div.product_main h1", required = true }
price = { css = "div.product_main p.price_color", type = "float64", regex = '[0-9]+\.[0-9]+', required = true }
upc   = { css = "table tr:nth-child(1) td", required = true }
`

func TestSitemaps_ItemPagesFromRobotsThroughAnIndex(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	sitemapSite(t, f, 30)
	cfg := f.sitemapConfig(nil, "")
	rep := f.run(cfg, Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	// robots.txt, the index, 3 sitemaps and 30 item pages; no listing page,
	// no blog post.
	if rep.Items.New != 30 || rep.Requests.Total != 35 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, requests %+v, gaps %+v", rep.Items, rep.Requests, rep.Gaps)
	}
	if n := f.site.PageRequests(catalogsite.StartURL(f.srv.URL)[len(f.srv.URL):]); n != 0 {
		t.Fatalf("the start URL was fetched %d times as a listing page", n)
	}
	assertItemsMatchSite(t, f, 30)
	// An item whose page now answers 404 is removed after a clean
	// traversal.
	f.site.Remove(7)
	sitemapSite(t, f, 30)
	cfg = f.sitemapConfig(nil, "\n[export]\ntombstones = true\n")
	rep = f.run(cfg, Options{})
	if rep.Items.Removed != 1 {
		t.Fatalf("removed %d, want item 7 (its page answers 404)", rep.Items.Removed)
	}
}

func TestSitemaps_ABrokenSitemapIsAFailureAndNoRemoval(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	sitemapSite(t, f, 30)
	cfg := f.sitemapConfig(map[string]string{"retries": "0"}, "\n[export]\ntombstones = true\n")
	f.run(cfg, Options{})
	// The gzip child now answers an HTML error page under a 200.
	inner := f.srv.Config.Handler
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sitemaps/b.xml.gz" {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html><body>" + strings.Repeat("<p>We are down for maintenance</p>", 30) + "</body></html>"))
			return
		}
		inner.ServeHTTP(w, r)
	})
	rep := f.run(cfg, Options{})
	if rep.Requests.Failed != 2 || rep.Items.Removed != 0 || !hasGap(rep, f.srv.URL+"/sitemaps/b.xml.gz") {
		t.Fatalf("requests %+v, removed %d, gaps %+v: want the sitemap a failure (and its retry pass), nothing removed",
			rep.Requests, rep.Items.Removed, rep.Gaps)
	}
}

// sitemapConfig is a config that reads the site's sitemaps only.
func (f *fixture) sitemapConfig(policy map[string]string, extra string) config.Config {
	f.t.Helper()
	return f.configOf(sitemapsOnly, policy, extra)
}
