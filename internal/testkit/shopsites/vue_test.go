package shopsites

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/databrew/databrew-stage/extract/jsliteral"
)

// vueState reads the window.__INITIAL_STATE__ a page assigns into v with
// the stage's JavaScript literal reader, after checking that it is no
// JSON but a literal as a Vue storefront writes it.
func vueState(t *testing.T, url string, body []byte, v any) {
	t.Helper()
	var scripts []string
	parse(t, body).Find("script:not([src])").Each(func(_ int, s *goquery.Selection) { scripts = append(scripts, s.Text()) })
	last := scripts[len(scripts)-1]
	literal, _, _ := strings.Cut(strings.TrimPrefix(last, "window.__INITIAL_STATE__="), ";(function(){")
	if json.Valid([]byte(literal)) || !strings.Contains(literal, `\u002F`) || !strings.Contains(literal, ",}") ||
		!strings.Contains(literal, "{current:") || !strings.HasSuffix(last, "}());") {
		t.Fatalf("%s: the state is not written as a Vue storefront writes it:\n%s", url, last)
	}
	name, err := jsliteral.Canonical("window.__INITIAL_STATE__")
	if err != nil {
		t.Fatal(err)
	}
	text, found, err := jsliteral.Find(scripts, name)
	if !found || err != nil {
		t.Fatalf("%s: state found %v: %v", url, found, err)
	}
	if err := json.Unmarshal(text, v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

func TestVueStateHoldsLinksAndProducts(t *testing.T) {
	shop, srv := newServer(t, Vue, Options{})
	c := srv.Client()
	truth := shop.Truth(srv.URL)
	var links []string
	pages := 0
	for u := srv.URL + "/c/wohnen"; u != ""; pages++ {
		r := getOK(t, c, u)
		doc := parse(t, r.body)
		if n := doc.Find(`a[href^="/p/"]`).Length(); n != 0 {
			t.Errorf("%s: %d product links in the HTML, want none", u, n)
		}
		var state struct {
			CategoryNext struct {
				SearchedProducts struct {
					Items []struct {
						URLPath string `json:"url_path"`
					}
				}
			} `json:"category-next"`
		}
		vueState(t, u, r.body, &state)
		for _, it := range state.CategoryNext.SearchedProducts.Items {
			links = append(links, resolve(t, r.url, it.URLPath))
		}
		u = ""
		if href, ok := doc.Find("a.sf-pagination__item--next").Attr("href"); ok {
			u = resolve(t, r.url, href)
		}
	}
	if pages != 3 || !slices.Equal(links, truthURLs(truth)) {
		t.Fatalf("%d pages, links %v;\nwant 3 and %v", pages, links, truthURLs(truth))
	}
	quote := false
	for _, p := range truth {
		r := getOK(t, c, p.URL)
		if !strings.Contains(string(r.body), "window.__INITIAL_STATE__ = window.__INITIAL_STATE__ || {};") {
			t.Errorf("%s: no assignment before the state's that is no literal", p.URL)
		}
		var state struct {
			Product struct {
				Current struct {
					SKU, Name, Brand, EAN string
					Price                 struct{ Regular, Special *float64 }
					Stock                 struct {
						Qty       int64
						IsInStock bool `json:"is_in_stock"`
					}
					Rating     *float64
					Image      string
					Categories []string
				}
			}
		}
		vueState(t, p.URL, r.body, &state)
		got, v := state.Product.Current, p.Values
		price := *got.Price.Regular
		if got.Price.Special != nil {
			price = *got.Price.Special
		}
		if got.SKU != p.Key || got.Name != v["name"] || got.Brand != v["brand"] || got.EAN != v["ean"] || price != v["price"] ||
			*got.Price.Regular != v["regular_price"] || got.Stock.Qty != v["qty"] || got.Stock.IsInStock != v["in_stock"] ||
			resolve(t, p.URL, got.Image) != v["image"] || !slices.Equal(got.Categories, v["categories"].([]string)) {
			t.Errorf("%s: served %+v, truth %v", p.Key, got, v)
		}
		if got.Rating == nil && v["rating"] != nil || got.Rating != nil && *got.Rating != v["rating"] {
			t.Errorf("%s: rating %v, truth %v", p.Key, got.Rating, v["rating"])
		}
		quote = quote || strings.Contains(string(r.body), `'L\'Atelier du Bois'`)
	}
	if !quote {
		t.Error("no brand with a quote in a single-quoted string")
	}
}
