package shopsites

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// nextjsCard is what the test reads of a product in __NEXT_DATA__.
type nextjsCard struct {
	SKU   string `json:"sku"`
	Name  string `json:"name"`
	URL   string `json:"url"`
	Brand *struct {
		Name string `json:"name"`
	} `json:"brand"`
	Price     struct{ Value float64 }  `json:"price"`
	SalePrice *struct{ Value float64 } `json:"salePrice"`
	Rating    *struct {
		Average float64 `json:"average"`
		Count   int64   `json:"count"`
	} `json:"rating"`
	Badges  []string             `json:"badges"`
	Image   struct{ Src string } `json:"image"`
	InStock bool                 `json:"inStock"`
}

// decodeNextData decodes the page's script#__NEXT_DATA__ into v.
func decodeNextData(t *testing.T, url string, body []byte, v any) {
	t.Helper()
	text := parse(t, body).Find("script#__NEXT_DATA__").Text()
	if err := json.Unmarshal([]byte(text), v); err != nil {
		t.Fatalf("%s: __NEXT_DATA__: %v", url, err)
	}
}

func TestNextJSListingsCarryEveryProductInNextData(t *testing.T) {
	shop, srv := newServer(t, NextJS, Options{})
	c := srv.Client()
	truth := shop.Truth(srv.URL)
	var cards []nextjsCard
	var htmlLinks []string
	pages, escaped := 0, false
	for u := srv.URL + "/category/all"; u != ""; pages++ {
		r := getOK(t, c, u)
		doc := parse(t, r.body)
		linked := doc.Find("a.product-card").Length()
		if linked != 4 && doc.Find("a[rel=next]").Length() > 0 {
			t.Errorf("%s: %d product links in the HTML, want the first 4", u, linked)
		}
		doc.Find("a.product-card").Each(func(_ int, a *goquery.Selection) {
			htmlLinks = append(htmlLinks, resolve(t, r.url, a.AttrOr("href", "")))
		})
		var next struct {
			Props struct {
				PageProps struct {
					InitialData struct{ Products []nextjsCard }
				}
			}
		}
		decodeNextData(t, u, r.body, &next)
		cards = append(cards, next.Props.PageProps.InitialData.Products...)
		escaped = escaped || bytes.Contains(r.body, []byte(`\u0026`))
		u = ""
		if href, ok := doc.Find("nav.pagination a[rel=next]").Attr("href"); ok {
			u = resolve(t, r.url, href)
		}
	}
	if pages != 4 || len(cards) != len(truth) || len(htmlLinks) >= len(truth) {
		t.Fatalf("%d pages, %d cards, %d links in HTML; want 4, %d and fewer links", pages, len(cards), len(htmlLinks), len(truth))
	}
	if !escaped {
		t.Error("no & written as \\u0026 in __NEXT_DATA__")
	}
	for i, p := range truth {
		got, v := cards[i], p.Values
		price := got.Price.Value
		if got.SalePrice != nil {
			price = got.SalePrice.Value
		}
		if got.SKU != p.Key || resolve(t, srv.URL+"/category/all", got.URL) != p.URL || got.Name != v["name"] ||
			price != v["price"] || got.Price.Value != v["regular_price"] || got.InStock != v["in_stock"] ||
			resolve(t, srv.URL+"/category/all", got.Image.Src) != v["image"] {
			t.Errorf("%s: served %+v, truth %v", p.Key, got, v)
		}
		if brand, _ := v["brand"].(string); got.Brand == nil && brand != "" || got.Brand != nil && got.Brand.Name != brand {
			t.Errorf("%s: brand %v, truth %v", p.Key, got.Brand, v["brand"])
		}
		if got.Rating == nil && v["rating"] != nil || got.Rating != nil && (got.Rating.Average != v["rating"] || got.Rating.Count != v["reviews"]) {
			t.Errorf("%s: rating %v, truth %v %v", p.Key, got.Rating, v["rating"], v["reviews"])
		}
		if badges, _ := v["badges"].([]string); !slices.Equal(got.Badges, badges) && len(got.Badges)+len(badges) > 0 {
			t.Errorf("%s: badges %v, truth %v", p.Key, got.Badges, badges)
		}
		var page struct {
			Props struct{ PageProps struct{ Product nextjsCard } }
		}
		decodeNextData(t, p.URL, getOK(t, c, p.URL).body, &page)
		if page.Props.PageProps.Product.SKU != p.Key {
			t.Errorf("%s: the product page's __NEXT_DATA__ holds %q", p.URL, page.Props.PageProps.Product.SKU)
		}
	}
}
