package shopsites

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// ldBlocks parses every JSON-LD block of doc with encoding/json, numbers
// kept as json.Number.
func ldBlocks(t *testing.T, doc *goquery.Document) []any {
	t.Helper()
	var blocks []any
	doc.Find(`script[type="application/ld+json"]`).Each(func(_ int, s *goquery.Selection) {
		dec := json.NewDecoder(strings.NewReader(s.Text()))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("JSON-LD block does not parse: %v\n%s", err, s.Text())
		}
		blocks = append(blocks, v)
	})
	return blocks
}

// firstOfType returns the first object of @type typ among blocks, also
// inside top-level arrays and @graph, and where it was found.
func firstOfType(blocks []any, typ string) (obj map[string]any, where string) {
	var walk func(v any, where string) (map[string]any, string)
	walk = func(v any, where string) (map[string]any, string) {
		switch v := v.(type) {
		case []any:
			if where == "block" {
				where = "array"
			}
			for _, e := range v {
				if m, w := walk(e, where); m != nil {
					return m, w
				}
			}
		case map[string]any:
			if v["@type"] == typ {
				return v, where
			}
			if g, ok := v["@graph"]; ok {
				return walk(g, "@graph")
			}
		}
		return nil, ""
	}
	for _, b := range blocks {
		if m, w := walk(b, "block"); m != nil {
			return m, w
		}
	}
	return nil, ""
}

// ldNumber reads a JSON-LD number written as a JSON number or a string,
// and says which.
func ldNumber(v any) (float64, string, error) {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		return f, "number", err
	case string:
		f, err := strconv.ParseFloat(v, 64)
		return f, "string", err
	}
	return 0, "", fmt.Errorf("%T %v is no number", v, v)
}

func TestJSONLDProductPagesHoldTheTruth(t *testing.T) {
	shop, srv := newServer(t, JSONLD, Options{})
	c := srv.Client()
	seen := map[string]bool{}
	for _, p := range shop.Truth(srv.URL) {
		r := getOK(t, c, p.URL)
		doc := parse(t, r.body)
		blocks := ldBlocks(t, doc)
		if len(blocks) < 2 {
			t.Errorf("%s: %d JSON-LD blocks, want several", p.Key, len(blocks))
		}
		if org, _ := firstOfType(blocks[:1], "Organization"); org == nil {
			t.Errorf("%s: the first block is no Organization", p.Key)
		}
		if crumbs, _ := firstOfType(blocks, "BreadcrumbList"); crumbs == nil && !strings.Contains(string(r.body), "@graph") {
			t.Errorf("%s: no BreadcrumbList", p.Key)
		}
		prod, where := firstOfType(blocks, "Product")
		if prod == nil {
			t.Fatalf("%s: no Product", p.Key)
		}
		seen[where] = true
		v := p.Values
		if prod["sku"] != v["sku"] || prod["name"] != v["name"] {
			t.Errorf("%s: sku, name = %v, %v; truth %v, %v", p.Key, prod["sku"], prod["name"], v["sku"], v["name"])
		}
		brand := prod["brand"]
		if b, ok := brand.(map[string]any); ok {
			brand = b["name"]
			seen["brand object"] = true
		} else {
			seen["brand string"] = true
		}
		if brand != v["brand"] {
			t.Errorf("%s: brand %v, truth %v", p.Key, brand, v["brand"])
		}

		var offer map[string]any
		switch o := prod["offers"].(type) {
		case map[string]any:
			offer = o
		case []any:
			offer = o[0].(map[string]any)
			seen["offers array"] = true
		}
		priceKey := "price"
		if offer["@type"] == "AggregateOffer" {
			priceKey = "lowPrice"
			high, _, err := ldNumber(offer["highPrice"])
			if err != nil || high != v["high_price"] {
				t.Errorf("%s: highPrice %v (%v), truth %v", p.Key, offer["highPrice"], err, v["high_price"])
			}
		} else if v["high_price"] != nil {
			t.Errorf("%s: high_price %v without an AggregateOffer", p.Key, v["high_price"])
		}
		seen[fmt.Sprint(offer["@type"])] = true
		price, kind, err := ldNumber(offer[priceKey])
		if err != nil || price != v["price"] {
			t.Errorf("%s: %s %v (%v), truth %v", p.Key, priceKey, offer[priceKey], err, v["price"])
		}
		seen["price "+kind] = true
		if offer["priceCurrency"] != v["currency"] {
			t.Errorf("%s: currency %v, truth %v", p.Key, offer["priceCurrency"], v["currency"])
		}
		var inStock any
		if a, ok := offer["availability"].(string); ok {
			inStock = strings.HasSuffix(a, "/InStock")
		}
		if inStock != v["in_stock"] {
			t.Errorf("%s: availability %v, truth in_stock %v", p.Key, offer["availability"], v["in_stock"])
		}

		var rating, reviews any
		if ar, ok := prod["aggregateRating"].(map[string]any); ok {
			f, _, err := ldNumber(ar["ratingValue"])
			n, _, err2 := ldNumber(ar["reviewCount"])
			if err != nil || err2 != nil {
				t.Errorf("%s: aggregateRating %v: %v, %v", p.Key, ar, err, err2)
			}
			rating, reviews = f, int64(n)
		}
		if rating != v["rating"] || reviews != v["review_count"] {
			t.Errorf("%s: rating %v/%v, truth %v/%v", p.Key, rating, reviews, v["rating"], v["review_count"])
		}
		image := prod["image"]
		if l, ok := image.([]any); ok {
			image = l[0]
			seen["image array"] = true
		}
		if img, _ := image.(string); resolve(t, p.URL, img) != v["image"] {
			t.Errorf("%s: image %v, truth %v", p.Key, image, v["image"])
		}
		if og := doc.Find(`meta[property="og:title"]`).AttrOr("content", ""); og != v["og_title"] {
			t.Errorf("%s: og:title %q, truth %q", p.Key, og, v["og_title"])
		}

		// The visible page is a shell: the product's name is only in the
		// head.
		if name := v["name"].(string); strings.Contains(doc.Find("body").Text(), name) {
			t.Errorf("%s: the body shows the name %q", p.Key, name)
		}
		for _, esc := range []string{`\u00`, `\/`, `\u0026`, `&amp;`} {
			if bytes.Contains(r.body, []byte(esc)) {
				seen[esc] = true
			}
		}
	}
	for _, want := range []string{"block", "@graph", "array", "Offer", "AggregateOffer", "offers array",
		"price number", "price string", "brand object", "brand string", "image array",
		`\u00`, `\/`, `\u0026`, `&amp;`} {
		if !seen[want] {
			t.Errorf("no product page has %s; seen %v", want, seen)
		}
	}
}

func TestJSONLDListingLinksEveryProductOnce(t *testing.T) {
	shop, srv := newServer(t, JSONLD, Options{})
	links, pages := walkListing(t, srv.Client(), srv.URL+"/collections/all", "ul.product-grid a.card__link", "a.pagination__next", "href")
	if want := truthURLs(shop.Truth(srv.URL)); !slices.Equal(links, want) {
		t.Errorf("listing links %v,\nwant %v", links, want)
	}
	if pages != 3 {
		t.Errorf("%d listing pages, want 3", pages)
	}
	if r := get(t, srv.Client(), srv.URL+"/collections/all?page=4"); r.status != 404 {
		t.Errorf("page 4: status %d, want 404", r.status)
	}
}

func TestJSONLDDriftDropsTheProductData(t *testing.T) {
	shop, srv := newServer(t, JSONLD, Options{DriftAfter: 2})
	c := srv.Client()
	truth := shop.Truth(srv.URL)
	for i := range 2 {
		if shop.Drifted() {
			t.Fatalf("drifted after %d requests", i)
		}
		if prod, _ := firstOfType(ldBlocks(t, parse(t, getOK(t, c, truth[i].URL).body)), "Product"); prod == nil {
			t.Errorf("request %d, before the drift: no Product", i+1)
		}
	}
	if !shop.Drifted() {
		t.Fatal("not drifted after DriftAfter requests")
	}
	for _, p := range truth[:5] {
		r := getOK(t, c, p.URL)
		if prod, _ := firstOfType(ldBlocks(t, parse(t, r.body)), "Product"); prod != nil {
			t.Errorf("%s after the drift: still a Product", p.Key)
		}
		if len(r.body) < 512 {
			t.Errorf("%s after the drift: %d bytes, not a usable-looking page", p.Key, len(r.body))
		}
	}
	links, _ := walkListing(t, c, srv.URL+"/collections/all", "ul.product-grid a.card__link", "a.pagination__next", "href")
	if len(links) != len(truth) {
		t.Errorf("after the drift the listing links %d products, want %d", len(links), len(truth))
	}
}
