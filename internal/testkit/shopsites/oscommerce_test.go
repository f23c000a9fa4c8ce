package shopsites

import (
	"bytes"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/text/encoding/charmap"
)

// oscPage fetches an osCommerce page, checks it is windows-1252 declared
// only in a meta tag, and parses its decoding.
func oscPage(t *testing.T, c *http.Client, u string) (*goquery.Document, string) {
	t.Helper()
	r := getOK(t, c, u)
	if ct := r.header.Get("Content-Type"); ct != "text/html" {
		t.Errorf("%s: Content-Type %q, want no charset", u, ct)
	}
	head := r.body[:min(len(r.body), 1024)]
	if !bytes.Contains(head, []byte(`<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">`)) {
		t.Errorf("%s: no charset meta in the first 1024 bytes", u)
	}
	if utf8.Valid(r.body) {
		t.Errorf("%s: the body is valid UTF-8, want windows-1252 bytes", u)
	}
	text, err := charmap.Windows1252.NewDecoder().Bytes(r.body)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, text), r.url
}

var oscModel = regexp.MustCompile(`^(.+?)\s*\[(.+)\]$`)

func TestOsCommercePagesInWindows1252WithSessionLinks(t *testing.T) {
	for _, param := range []string{"osCsid", "MODsid"} {
		t.Run(param, func(t *testing.T) {
			shop, srv := newServer(t, OsCommerce, Options{SessionParam: param})
			truth := shop.Truth(srv.URL)
			var items []string
			sessions := map[string]bool{}
			pages := 0
			for u := srv.URL + "/index.php?cPath=3"; u != ""; pages++ {
				doc, final := oscPage(t, srv.Client(), u)
				req, _ := url.Parse(u)
				doc.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
					l, err := url.Parse(resolve(t, final, a.AttrOr("href", "")))
					if err != nil || len(l.Query().Get(param)) != 32 {
						t.Errorf("%s: link %s carries no %s", u, a.AttrOr("href", ""), param)
						return
					}
					if had := req.Query().Get(param); had != "" && l.Query().Get(param) != had {
						t.Errorf("%s: link %s does not keep the session of the URL", u, l)
					}
					sessions[l.Query().Get(param)] = true
					if l.Path == "/product_info.php" {
						q := l.Query()
						q.Del(param)
						l.RawQuery = "cPath=" + q.Get("cPath") + "&products_id=" + q.Get("products_id")
						if len(items) == 0 || items[len(items)-1] != l.String() {
							items = append(items, l.String())
						}
					}
				})
				u = ""
				if href, ok := doc.Find(`a.pageResults[title=" Nächste Seite "]`).Attr("href"); ok {
					u = resolve(t, final, href)
				}
				if pages == 0 {
					u = strings.Split(u, "&"+param+"=")[0] // a crawler that drops it gets a new one
				}
			}
			if pages != 3 || !slices.Equal(items, truthURLs(truth)) {
				t.Fatalf("%d pages, item links %v;\nwant 3 and %v", pages, items, truthURLs(truth))
			}
			if len(sessions) != 2 {
				t.Errorf("%d session IDs, want one from page 1 and one from page 2 on", len(sessions))
			}
			euro, quotes := false, false
			for _, p := range truth {
				doc, _ := oscPage(t, srv.Client(), p.URL)
				m := oscModel.FindStringSubmatch(strings.TrimSpace(doc.Find("h1:not([style])").Text()))
				v := p.Values
				price, regular := doc.Find("h1[style] span.productSpecialPrice").Text(), doc.Find("h1[style] del").Text()
				if price == "" {
					price, regular = doc.Find("h1[style]").Text(), doc.Find("h1[style]").Text()
				}
				img, hasImg := doc.Find("#piGal img").Attr("src")
				wantImg, _ := v["image"].(string)
				if m == nil || m[1] != v["name"] || m[2] != p.Key || price != oscMoney(v["price"]) || regular != oscMoney(v["regular_price"]) ||
					hasImg != (wantImg != "") || hasImg && resolve(t, p.URL, img) != wantImg {
					t.Errorf("%s: name and model %q, price %q, regular %q, image %q; truth %v", p.Key, m, price, regular, img, v)
				}
				euro = euro || strings.Contains(m[1], "€")
				quotes = quotes || strings.Contains(m[1], "„")
			}
			if !euro || !quotes {
				t.Errorf("quirks: a name with € %v, with „“ %v", euro, quotes)
			}
		})
	}
}

// oscMoney writes a truth price as the shop does: "1.234,56€".
func oscMoney(v any) string {
	c := int64(v.(float64)*100 + 0.5)
	return groupThousands(c/100, ".") + "," + twoDigits(c%100) + "€"
}

func TestOsCommerceSetPrice(t *testing.T) {
	shop, srv := newServer(t, OsCommerce, Options{})
	p := shop.Truth(srv.URL)[1] // a special offer: n%5 == 2
	if p.Values["price"] == p.Values["regular_price"] {
		t.Fatalf("%s is no special offer", p.Key)
	}
	if err := shop.SetPrice(p.Key, 123456); err != nil {
		t.Fatal(err)
	}
	doc, _ := oscPage(t, srv.Client(), p.URL)
	if got := doc.Find("h1[style]").Text(); got != "1.234,56€" {
		t.Errorf("price %q after SetPrice, want 1.234,56€ and the special offer gone", got)
	}
	if v := shop.Truth(srv.URL)[1].Values; v["price"] != 1234.56 || v["regular_price"] != 1234.56 {
		t.Errorf("truth %v after SetPrice", v)
	}
	if err := shop.SetPrice("OS-9999", 100); err == nil {
		t.Error("SetPrice of an unknown product succeeded")
	}
	other, _ := New(Shopify, Options{})
	if err := other.SetPrice(strconv.Itoa(1), 100); err == nil {
		t.Error("SetPrice on a shop whose prices do not change succeeded")
	}
}
