package shopsites

import (
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func TestMicrodataCardsHoldTheTruth(t *testing.T) {
	shop, srv := newServer(t, Microdata, Options{})
	c := srv.Client()
	truth := shop.Truth(srv.URL)
	var cards []*goquery.Selection
	var pageURLs []string
	pages := 0
	for u := srv.URL + "/shop"; u != ""; pages++ {
		r := getOK(t, c, u)
		doc := parse(t, r.body)
		if n := doc.Find("body a[rel=next], body a.next, body [rel=next]").Length(); n != 0 {
			t.Errorf("%s: %d next links in the body; the only one must be in head", u, n)
		}
		doc.Find("ul.products li.card").Each(func(_ int, s *goquery.Selection) {
			cards = append(cards, s)
			pageURLs = append(pageURLs, r.url)
		})
		u = ""
		if href, ok := doc.Find("head link[rel=next]").Attr("href"); ok {
			u = resolve(t, r.url, href)
		}
	}
	if pages != 4 {
		t.Errorf("%d listing pages, want 4", pages)
	}
	if len(cards) != len(truth) {
		t.Fatalf("%d cards, want %d", len(cards), len(truth))
	}
	shortPrice, noGTIN, noRating := false, false, false
	for i, p := range truth {
		card, v := cards[i], p.Values
		attr := func(sel, name string) any {
			if s := card.Find(sel); s.Length() > 0 {
				return s.AttrOr(name, "")
			}
			return nil
		}
		price := card.AttrOr("data-price", "")
		f, err := strconv.ParseFloat(price, 64)
		if card.AttrOr("data-pid", "") != p.Key || err != nil || f != v["price"] {
			t.Errorf("card %d: data-pid %q data-price %q, truth %s %v", i, card.AttrOr("data-pid", ""), price, p.Key, v["price"])
		}
		shortPrice = shortPrice || !strings.Contains(price, ".") || len(price)-strings.Index(price, ".") != 3
		if name := card.Find("[itemprop=name]").Text(); name != v["name"] {
			t.Errorf("%s: name %q, truth %q", p.Key, name, v["name"])
		}
		if got := attr("meta[itemprop=priceCurrency]", "content"); got != v["currency"] {
			t.Errorf("%s: currency %v, truth %v", p.Key, got, v["currency"])
		}
		if got := attr("meta[itemprop=brand]", "content"); got != v["brand"] {
			t.Errorf("%s: brand %v, truth %v", p.Key, got, v["brand"])
		}
		if got := attr("meta[itemprop=gtin13]", "content"); got != v["gtin"] {
			t.Errorf("%s: gtin %v, truth %v", p.Key, got, v["gtin"])
		}
		noGTIN = noGTIN || v["gtin"] == nil
		avail, _ := attr("link[itemprop=availability]", "href").(string)
		if strings.HasSuffix(avail, "/InStock") != v["in_stock"] {
			t.Errorf("%s: availability %q, truth in_stock %v", p.Key, avail, v["in_stock"])
		}
		var rating any
		if s, ok := attr("[itemprop=ratingValue]", "content").(string); ok {
			rating, err = strconv.ParseFloat(s, 64)
			if err != nil {
				t.Errorf("%s: rating %q: %v", p.Key, s, err)
			}
			if text := card.Find("[itemprop=ratingValue]").Text(); !strings.Contains(text, ",") {
				t.Errorf("%s: visible rating %q is not in European notation", p.Key, text)
			}
		}
		if rating != v["rating"] {
			t.Errorf("%s: rating %v, truth %v", p.Key, rating, v["rating"])
		}
		noRating = noRating || v["rating"] == nil
		href, _ := attr("a[itemprop=url]", "href").(string)
		if u := resolve(t, pageURLs[i], href); u != v["url"] || u != p.URL {
			t.Errorf("%s: url %q, truth %v and %s", p.Key, u, v["url"], p.URL)
		}
	}
	if !shortPrice || !noGTIN || !noRating {
		t.Errorf("a quirk is missing: data-price without two decimals %v, a card without gtin %v, without rating %v", shortPrice, noGTIN, noRating)
	}
	if r := get(t, c, srv.URL+"/shop/page/5"); r.status != 404 {
		t.Errorf("page 5: status %d, want 404", r.status)
	}
}
