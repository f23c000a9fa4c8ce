package shopsites

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func TestParamsPagesEndWithNoResultsOr404(t *testing.T) {
	for _, end404 := range []bool{false, true} {
		t.Run(fmt.Sprintf("EndWith404=%v", end404), func(t *testing.T) {
			shop, srv := newServer(t, Params, Options{EndWith404: end404})
			c := srv.Client()
			var links []string
			for n := 1; n <= 3; n++ {
				u := srv.URL + "/search?page=" + strconv.Itoa(n)
				r := getOK(t, c, u)
				doc := parse(t, r.body)
				doc.Find("ol.results a.result__link").Each(func(_ int, a *goquery.Selection) {
					links = append(links, resolve(t, r.url, a.AttrOr("href", "")))
				})
				if n := doc.Find(`a[href*="page="], link[rel=next], a[rel=next]`).Length(); n != 0 {
					t.Errorf("%s: %d next links, want none", u, n)
				}
				if b := doc.Find("button.load-more"); n < 3 && (b.Length() != 1 || b.AttrOr("href", "") != "") {
					t.Errorf("%s: want a load-more button without href", u)
				}
			}
			if want := truthURLs(shop.Truth(srv.URL)); !slices.Equal(links, want) {
				t.Errorf("result links %v,\nwant %v", links, want)
			}
			for _, n := range []int{4, 5} {
				u := srv.URL + "/search?page=" + strconv.Itoa(n)
				r := get(t, c, u)
				switch {
				case end404 && r.status != http.StatusNotFound:
					t.Errorf("%s: status %d, want 404", u, r.status)
				case !end404 && r.status != http.StatusOK:
					t.Errorf("%s: status %d, want 200", u, r.status)
				case !end404:
					doc := parse(t, r.body)
					if !bytes.Contains(r.body, []byte("No results")) || doc.Find("a.result__link").Length() != 0 {
						t.Errorf("%s: not an empty results page", u)
					}
					if len(r.body) < 512 {
						t.Errorf("%s: %d bytes; an empty results page is a whole page", u, len(r.body))
					}
				}
			}
		})
	}
}

func TestParamsPageParameter(t *testing.T) {
	_, srv := newServer(t, Params, Options{})
	c := srv.Client()
	if a, b := getOK(t, c, srv.URL+"/search").body, getOK(t, c, srv.URL+"/search?page=1").body; !bytes.Equal(a, b) {
		t.Error("/search differs from page 1")
	}
	for _, q := range []string{"page=0", "page=x", "page=01", "page="} {
		if r := get(t, c, srv.URL+"/search?"+q); r.status != http.StatusBadRequest {
			t.Errorf("?%s: status %d, want 400", q, r.status)
		}
	}
}

func TestParamsProductPagesHoldTheTruth(t *testing.T) {
	shop, srv := newServer(t, Params, Options{})
	stockRe := regexp.MustCompile(`([0-9]+) in stock`)
	outOfStock := false
	for _, p := range shop.Truth(srv.URL) {
		doc := parse(t, getOK(t, srv.Client(), p.URL).body)
		v := p.Values
		price, err := strconv.ParseFloat(strings.TrimPrefix(doc.Find("span.price").Text(), "£"), 64)
		var stock int64
		if m := stockRe.FindStringSubmatch(doc.Find("p.stock").Text()); m != nil {
			stock, _ = strconv.ParseInt(m[1], 10, 64)
		} else {
			outOfStock = true
		}
		tags := doc.Find("ul.tags li").Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		if doc.Find("dd.code").Text() != p.Key || doc.Find("div.product h1").Text() != v["name"] ||
			err != nil || price != v["price"] || stock != v["stock"] || !slices.Equal(tags, v["tags"].([]string)) {
			t.Errorf("%s: page %q %q %q %q %v; truth %v", p.Key, doc.Find("dd.code").Text(), doc.Find("div.product h1").Text(),
				doc.Find("span.price").Text(), doc.Find("p.stock").Text(), tags, v)
		}
	}
	if !outOfStock {
		t.Error("no product is out of stock")
	}
}
