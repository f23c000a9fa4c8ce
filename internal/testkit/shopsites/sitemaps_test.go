package shopsites

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

type sitemapIndex struct {
	XMLName  xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemapindex"`
	Sitemaps []struct {
		Loc string `xml:"loc"`
	} `xml:"sitemap"`
}

type urlset struct {
	XMLName xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
	URLs    []struct {
		Loc string `xml:"loc"`
	} `xml:"url"`
}

// gunzip decompresses a gzip body, failing the test if it is not one.
func gunzip(t *testing.T, name string, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not gzip: %v", name, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: gunzip: %v", name, err)
	}
	return out
}

func TestSitemapsListEveryProductThroughRobots(t *testing.T) {
	shop, srv := newServer(t, Sitemaps, Options{})
	raw := rawClient()

	robots := string(getOK(t, raw, srv.URL+"/robots.txt").body)
	m := regexp.MustCompile(`(?m)^Sitemap: (\S+)$`).FindStringSubmatch(robots)
	if m == nil || m[1] != srv.URL+"/sitemap_index.xml" {
		t.Fatalf("robots.txt names no sitemap index:\n%s", robots)
	}
	r := getOK(t, raw, m[1])
	var index sitemapIndex
	if err := xml.Unmarshal(r.body, &index); err != nil {
		t.Fatalf("index: %v", err)
	}
	if len(index.Sitemaps) != 4 {
		t.Fatalf("index lists %d sitemaps, want 4", len(index.Sitemaps))
	}

	match := regexp.MustCompile(`/product/`)
	var products, others []string
	for i, s := range index.Sitemaps {
		r := getOK(t, raw, s.Loc)
		ct, ce := r.header.Get("Content-Type"), r.header.Get("Content-Encoding")
		body := r.body
		switch i {
		case 0:
			if !strings.HasPrefix(ct, "application/xml") || ce != "" {
				t.Errorf("%s: Content-Type %q, Content-Encoding %q", s.Loc, ct, ce)
			}
		case 1:
			if ct != "application/gzip" || ce != "" || !strings.HasSuffix(s.Loc, ".xml.gz") {
				t.Errorf("%s: Content-Type %q, Content-Encoding %q, want a gzip file", s.Loc, ct, ce)
			}
			body = gunzip(t, s.Loc, body)
		case 2:
			if !strings.HasPrefix(ct, "application/xml") || ce != "gzip" || !strings.HasSuffix(s.Loc, ".xml.gz") {
				t.Errorf("%s: Content-Type %q, Content-Encoding %q, want gzip-encoded XML", s.Loc, ct, ce)
			}
			body = gunzip(t, s.Loc, body)
			// A client that asks for gzip gets the XML decoded.
			if plain := getOK(t, srv.Client(), s.Loc).body; !bytes.Equal(plain, body) {
				t.Errorf("%s: the transport's decoding differs from gunzip", s.Loc)
			}
		case 3:
			if len(body) >= 512 || len(body) < 200 {
				t.Errorf("%s: %d bytes, want a legitimate sitemap of about 300", s.Loc, len(body))
			}
		}
		var set urlset
		if err := xml.Unmarshal(body, &set); err != nil {
			t.Fatalf("%s: %v", s.Loc, err)
		}
		if i == 3 && len(set.URLs) != 2 {
			t.Errorf("%s: %d URLs, want 2", s.Loc, len(set.URLs))
		}
		for _, u := range set.URLs {
			if match.MatchString(u.Loc) {
				products = append(products, u.Loc)
			} else {
				others = append(others, u.Loc)
			}
		}
	}
	if want := truthURLs(shop.Truth(srv.URL)); !slices.Equal(products, want) {
		t.Errorf("product locs %v,\nwant %v", products, want)
	}
	if !slices.ContainsFunc(products, func(u string) bool { return strings.Contains(u, "?colour=red&size=m") }) {
		t.Error("no product loc with an & in its query")
	}
	blog, category := false, false
	for _, u := range others {
		blog = blog || strings.Contains(u, "/blog/")
		category = category || strings.Contains(u, "/category/")
		if r := get(t, raw, u); r.status != http.StatusOK {
			t.Errorf("%s: status %d", u, r.status)
		}
	}
	if !blog || !category {
		t.Errorf("sitemaps list no /blog/ or /category/ page: %v", others)
	}
	if r := get(t, raw, srv.URL+"/"); r.status != http.StatusOK {
		t.Errorf("home page: status %d", r.status)
	}
}

func TestSitemapsProductPagesHoldTheTruth(t *testing.T) {
	shop, srv := newServer(t, Sitemaps, Options{})
	grouped := false
	for _, p := range shop.Truth(srv.URL) {
		doc := parse(t, getOK(t, srv.Client(), p.URL).body)
		v := p.Values
		sku := strings.TrimPrefix(doc.Find("p.sku").Text(), "SKU: ")
		text := doc.Find("div.price .amount").Text()
		price, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimPrefix(text, "$"), ",", ""), 64)
		grouped = grouped || strings.Contains(text, ",")
		updated, err2 := time.Parse(time.RFC3339, doc.Find("time[datetime]").AttrOr("datetime", ""))
		if sku != p.Key || sku != v["sku"] || doc.Find("h1.product-title").Text() != v["name"] ||
			err != nil || price != v["price"] || doc.Find("nav.breadcrumb li:last-child a").Text() != v["category"] ||
			err2 != nil || !updated.Equal(v["updated"].(time.Time)) {
			t.Errorf("%s: page says sku %q name %q price %q category %q updated %v; truth %v",
				p.Key, sku, doc.Find("h1.product-title").Text(), text, doc.Find("nav.breadcrumb li:last-child a").Text(), updated, v)
		}
	}
	if !grouped {
		t.Error("no price has a thousands separator")
	}
}
