package shopsites

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// jsessionPath matches a link with a ;jsessionid= path parameter.
var jsessionPath = regexp.MustCompile(`^(/de/[a-z/0-9]+);jsessionid=([0-9A-F]{32}\.node[12])(\?.*)?$`)

// swissCHF parses "CHF 1'234.50" or "CHF 1’234.50".
func swissCHF(s string) (float64, bool) {
	num, ok := strings.CutPrefix(s, "CHF ")
	f, err := strconv.ParseFloat(strings.NewReplacer("'", "", "’", "").Replace(num), 64)
	return f, ok && err == nil
}

func TestSwissLinksCarryTheSessionInThePath(t *testing.T) {
	shop, srv := newServer(t, Swiss, Options{})
	c := srv.Client()
	truth := shop.Truth(srv.URL)
	var items []string
	sessions := map[string]bool{}
	pages := 0
	for u := srv.URL + "/de/c/wohnen"; u != ""; pages++ {
		r := getOK(t, c, u)
		doc := parse(t, r.body)
		doc.Find("div.product-item a.name").Each(func(_ int, a *goquery.Selection) {
			m := jsessionPath.FindStringSubmatch(a.AttrOr("href", ""))
			if m == nil {
				t.Fatalf("%s: product link %q has no ;jsessionid=", u, a.AttrOr("href", ""))
			}
			sessions[m[2]] = true
			items = append(items, srv.URL+m[1])
		})
		u = ""
		if href, ok := doc.Find("li.pagination-next a").Attr("href"); ok {
			m := jsessionPath.FindStringSubmatch(href)
			if m == nil || m[3] != "?q=%3Arelevance&page="+strconv.Itoa(pages+1) {
				t.Fatalf("%s: next link %q", u, href)
			}
			u = srv.URL + m[1] + m[3] // dropped: the next page starts a new session
		}
	}
	if pages != 4 || !slices.Equal(items, truthURLs(truth)) || len(sessions) != 4 {
		t.Fatalf("%d pages, %d sessions, item links %v;\nwant 4, 4 and %v", pages, len(sessions), items, truthURLs(truth))
	}
	kept := parse(t, getOK(t, c, srv.URL+"/de/c/wohnen;jsessionid=0123456789ABCDEF0123456789ABCDEF.node1?page=1").body)
	if href := kept.Find("div.product-item a.name").First().AttrOr("href", ""); !strings.Contains(href, ";jsessionid=0123456789ABCDEF0123456789ABCDEF.node1") {
		t.Errorf("a page requested with a session links with another: %s", href)
	}
	var typographic, plain, onRequest bool
	for _, p := range truth {
		doc := parse(t, getOK(t, c, p.URL).body)
		v := p.Values
		text := doc.Find("p.price:not(.price--old)").Text()
		price, ok := swissCHF(text)
		if !ok && (text != "Preis auf Anfrage" || v["price"] != nil) || ok && price != v["price"] {
			t.Errorf("%s: price %q, truth %v", p.Key, text, v["price"])
		}
		old, hasOld := strings.CutPrefix(doc.Find("p.price--old").Text(), "statt ")
		if oldPrice, ok := swissCHF(old); hasOld != (v["old_price"] != nil) || hasOld && (!ok || oldPrice != v["old_price"]) {
			t.Errorf("%s: old price %q, truth %v", p.Key, old, v["old_price"])
		}
		brand, _ := v["brand"].(string)
		stock := doc.Find("div.stock-status").Text()
		if doc.Find("div.product-details").AttrOr("data-product-code", "") != p.Key || doc.Find("div.product-details h1").Text() != v["name"] ||
			doc.Find("div.brand").Text() != brand || (stock != "Ausverkauft") != v["in_stock"] {
			t.Errorf("%s: page does not hold the truth %v", p.Key, v)
		}
		typographic = typographic || strings.Contains(text, "’")
		plain = plain || strings.Contains(text, "'")
		onRequest = onRequest || text == "Preis auf Anfrage"
	}
	if !typographic || !plain || !onRequest {
		t.Errorf("quirks: CHF 1’234.50 %v, CHF 1'234.50 %v, Preis auf Anfrage %v", typographic, plain, onRequest)
	}
}

func TestSwissTypeErrorsFollowThePrices(t *testing.T) {
	shop, err := New(Swiss, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := shop.TypeErrors(); len(got) != 1 || got["price"] != 1 {
		t.Fatalf("TypeErrors = %v, want price: 1", got)
	}
	if err := shop.SetPrice("300113", 99_00); err != nil {
		t.Fatal(err)
	}
	if got := shop.TypeErrors(); len(got) != 0 {
		t.Errorf("TypeErrors = %v once product 13 has a price", got)
	}
	if v := shop.Truth("http://h")[12].Values; v["price"] != 99.0 {
		t.Errorf("truth %v after SetPrice", v)
	}
	if small, _ := New(Swiss, Options{Products: 12}); len(small.TypeErrors()) != 0 {
		t.Errorf("a shop of 12 products has type errors %v", small.TypeErrors())
	}
}
