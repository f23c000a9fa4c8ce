package stage

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// scopeSitemaps serves two sitemaps in front of the catalog site, a.xml
// listing items 1-15 and b.xml items 16-30, named by robots.txt or by an
// index. Each host name (127.0.0.1, which the config's start URL names,
// or localhost, the same server under a name outside allowed_domains) is
// chosen per reference, so a test moves a sitemap to "another host"
// between runs.
type scopeSitemaps struct {
	f  *fixture
	mu sync.Mutex
	// robotsB and indexB are the hosts robots.txt and the index name b.xml
	// at; locHost the host of b.xml's <loc>s; index says robots.txt names
	// the index rather than the sitemaps.
	robotsB, indexB, locHost string
	index                    bool
}

func newScopeSitemaps(f *fixture) *scopeSitemaps {
	s := &scopeSitemaps{f: f, robotsB: "127.0.0.1", indexB: "127.0.0.1", locHost: "127.0.0.1"}
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		s.mu.Lock()
		defer s.mu.Unlock()
		port := f.srv.URL[strings.LastIndex(f.srv.URL, ":"):]
		at := func(host, path string) string { return "http://" + host + port + path }
		w.Header().Set("Content-Type", "application/xml")
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			if s.index {
				fmt.Fprintf(w, "User-agent: *\nSitemap: %s\n", at("127.0.0.1", "/index.xml"))
				return
			}
			fmt.Fprintf(w, "User-agent: *\nSitemap: %s\nSitemap: %s\n", at("127.0.0.1", "/a.xml"), at(s.robotsB, "/b.xml"))
		case "/index.xml":
			fmt.Fprintf(w, `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>%s</loc></sitemap><sitemap><loc>%s</loc></sitemap></sitemapindex>`,
				at("127.0.0.1", "/a.xml"), at(s.indexB, "/b.xml"))
		case "/a.xml", "/b.xml":
			from, host := 1, "127.0.0.1"
			if r.URL.Path == "/b.xml" {
				from, host = 16, s.locHost
			}
			var b strings.Builder
			for id := from; id < from+15; id++ {
				fmt.Fprintf(&b, "<url><loc>%s</loc></url>", at(host, fmt.Sprintf("/catalogue/item-%d.html", id)))
			}
			fmt.Fprintf(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">%s</urlset>`, b.String())
		default:
			next.ServeHTTP(w, r)
		}
	})
	return s
}

func (s *scopeSitemaps) set(fn func(s *scopeSitemaps)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s)
}

func TestSitemapScope_ASitemapOrLocOutsideAllowedDomainsIsAGapAndRemovesNothing(t *testing.T) {
	cases := []struct {
		name, gapPath string
		move          func(s *scopeSitemaps)
	}{
		{"a robots.txt Sitemap line", "/b.xml", func(s *scopeSitemaps) { s.robotsB = "localhost" }},
		{"a child of an index", "/b.xml", func(s *scopeSitemaps) { s.index, s.indexB = true, "localhost" }},
		{"the locs of a sitemap", "/b.xml", func(s *scopeSitemaps) { s.locHost = "localhost" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 30})
			s := newScopeSitemaps(f)
			cfg := f.sitemapConfig(nil, tombstonesOn)
			rep := f.run(cfg, Options{})
			if rep.Items.New != 30 || rep.CoverageGaps != 0 {
				t.Fatalf("first run: items %+v, gaps %+v", rep.Items, rep.Gaps)
			}
			s.set(tc.move)
			rep = f.run(cfg, Options{})
			if rep.Items.Removed != 0 || rep.CoverageGaps == 0 {
				t.Fatalf("items %+v, gaps %+v: a sitemap the stage does not read must be a gap, and remove nothing", rep.Items, rep.Gaps)
			}
			found := false
			for _, g := range rep.Gaps {
				if strings.HasSuffix(g.URL, tc.gapPath) && strings.Contains(g.Reason, "allowed_domains") {
					found = true
				}
			}
			if !found {
				t.Fatalf("gaps %+v: none names %s and allowed_domains", rep.Gaps, tc.gapPath)
			}
		})
	}
}

func TestSitemapScope_AnAllowedSitemapHostIsRead(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	s := newScopeSitemaps(f)
	s.set(func(s *scopeSitemaps) { s.robotsB = "localhost" })
	cfg := f.sitemapConfig(nil, "")
	cfg.AllowedDomains = []string{"127.0.0.1", "localhost"}
	rep := f.run(cfg, Options{})
	if rep.Items.New != 30 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, gaps %+v; want b.xml read from the allowed host", rep.Items, rep.Gaps)
	}
}

func TestSitemapScope_AConfiguredSitemapOutsideAllowedDomainsIsAConfigError(t *testing.T) {
	raw := `name = "books"
start_urls = ["http://127.0.0.1:8390/"]

[listing]
sitemaps = ["robots", "http://cdn.example.net/sitemap.xml"]

[item.fields]
title = { css = "h1" }
`
	_, err := config.Parse("books.toml", []byte(raw))
	if err == nil || !strings.Contains(err.Error(), "books.toml:5: listing.sitemaps") || !strings.Contains(err.Error(), "allowed_domains") {
		t.Fatalf("err = %v; want a config error naming books.toml:5, listing.sitemaps and allowed_domains", err)
	}
}

func TestSitemapScope_ASitemapLineThatIsNoHTTPURLIsAGapAndALoopEnds(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	newScopeSitemaps(f)
	inner := f.srv.Config.Handler
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nSitemap: ftp://127.0.0.1/b.xml\nSitemap: %s/loop.xml\n", f.srv.URL)
		case "/loop.xml": // an index that lists itself and a.xml
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>%[1]s/loop.xml</loc></sitemap><sitemap><loc>%[1]s/a.xml</loc></sitemap></sitemapindex>`, f.srv.URL)
		default:
			inner.ServeHTTP(w, r)
		}
	})
	rep := f.run(f.sitemapConfig(nil, tombstonesOn), Options{})
	if rep.Items.New != 15 || rep.CoverageGaps != 1 || !strings.HasPrefix(rep.Gaps[0].URL, "ftp://") || !strings.Contains(rep.Gaps[0].Reason, "not an http or https URL") {
		t.Fatalf("items %+v, gaps %+v; want a.xml's 15 items and the ftp sitemap a gap", rep.Items, rep.Gaps)
	}
}

func TestSitemapScope_ASitemapThatEmptiesIsAGapOnce(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	newScopeSitemaps(f)
	cfg := f.sitemapConfig(nil, tombstonesOn)
	if rep := f.run(cfg, Options{}); rep.Items.New != 30 {
		t.Fatalf("first run: items %+v", rep.Items)
	}
	// b.xml answers an empty urlset, as a sitemap generator does while it
	// rebuilds: its 15 items may well be there.
	inner := f.srv.Config.Handler
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/b.xml" {
			w.Header().Set("Content-Type", "application/xml")
			_, _ = w.Write([]byte(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"></urlset>`))
			return
		}
		inner.ServeHTTP(w, r)
	})
	rep := f.run(cfg, Options{})
	if rep.Items.Removed != 0 || !hasGap(rep, f.srv.URL+"/b.xml") {
		t.Fatalf("items %+v, gaps %+v; want b.xml a gap and nothing removed", rep.Items, rep.Gaps)
	}
	// Empty again: the items are gone.
	if rep = f.run(cfg, Options{}); rep.Items.Removed != 15 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, gaps %+v; want the 15 items removed", rep.Items, rep.Gaps)
	}
}
