package shopsites

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// linkRel matches one Link header field: <target>; rel="name".
var linkRel = regexp.MustCompile(`^<([^>]+)>; rel="([a-z]+)"$`)

// links returns the Link header fields of h by rel, failing on a field of
// another shape; order lists the rels as they come.
func links(t *testing.T, h http.Header) (byRel map[string]string, order []string) {
	t.Helper()
	byRel = map[string]string{}
	for _, f := range h.Values("Link") {
		m := linkRel.FindStringSubmatch(f)
		if m == nil {
			t.Fatalf("Link field %q", f)
		}
		byRel[m[2]] = m[1]
		order = append(order, m[2])
	}
	return byRel, order
}

// wooStoreJSON is what the test reads of a Store API product.
type wooStoreJSON struct {
	ID        int    `json:"id"`
	Name      string `json:"name"`
	Permalink string `json:"permalink"`
	SKU       string `json:"sku"`
	OnSale    bool   `json:"on_sale"`
	Prices    struct {
		Price      string `json:"price"`
		Regular    string `json:"regular_price"`
		Currency   string `json:"currency_code"`
		MinorUnit  int    `json:"currency_minor_unit"`
		PriceRange any    `json:"price_range"`
	} `json:"prices"`
	Rating     string `json:"average_rating"`
	Reviews    int64  `json:"review_count"`
	InStock    bool   `json:"is_in_stock"`
	LowStock   *int64 `json:"low_stock_remaining"`
	Images     []struct{ Src string }
	Categories []struct{ Name string }
}

func TestWooStoreAPIPagesByLinkHeaders(t *testing.T) {
	shop, srv := newServer(t, WooCommerce, Options{})
	c := srv.Client()
	var products []wooStoreJSON
	pages := 0
	for u := srv.URL + wooStorePath + "?per_page=12"; u != ""; pages++ {
		r := getOK(t, c, u)
		if !bytes.Contains(r.body, []byte(`\/`)) {
			t.Errorf("%s: / not escaped as WordPress writes it", u)
		}
		var page []wooStoreJSON
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		products = append(products, page...)
		rels, order := links(t, r.header)
		if pages > 0 && (len(order) == 0 || order[0] != "prev") {
			t.Errorf("%s: Link fields %v, want prev first", u, order)
		}
		if r.header.Get("X-WP-Total") != "36" || r.header.Get("X-WP-TotalPages") != "3" {
			t.Errorf("%s: X-WP-Total %q, X-WP-TotalPages %q", u, r.header.Get("X-WP-Total"), r.header.Get("X-WP-TotalPages"))
		}
		u = rels["next"]
	}
	if pages != 3 {
		t.Errorf("%d pages, want 3", pages)
	}
	truth := shop.Truth(srv.URL)
	if len(products) != len(truth) {
		t.Fatalf("%d products, want %d", len(products), len(truth))
	}
	variable := false
	for i, p := range truth {
		got, v := products[i], p.Values
		price, _ := strconv.ParseInt(got.Prices.Price, 10, 64)
		regular, _ := strconv.ParseInt(got.Prices.Regular, 10, 64)
		rating, err := strconv.ParseFloat(got.Rating, 64)
		if strconv.Itoa(got.ID) != p.Key || got.Permalink != p.URL || got.Name != v["name"] || got.Prices.MinorUnit != 2 ||
			money(price) != v["price"] || money(regular) != v["regular_price"] || got.Prices.Currency != v["currency"] ||
			got.OnSale != v["on_sale"] || got.InStock != v["in_stock"] || err != nil || rating != v["rating"] || got.Reviews != v["reviews"] {
			t.Errorf("%s: served %+v, truth %v", p.Key, got, v)
		}
		if sku, _ := v["sku"].(string); got.SKU != sku {
			t.Errorf("%s: sku %q, truth %v", p.Key, got.SKU, v["sku"])
		}
		if low, _ := v["low_stock"].(int64); got.LowStock == nil && low != 0 || got.LowStock != nil && *got.LowStock != low {
			t.Errorf("%s: low_stock_remaining %v, truth %v", p.Key, got.LowStock, v["low_stock"])
		}
		if img, _ := v["image"].(string); len(got.Images) == 0 && img != "" || len(got.Images) > 0 && got.Images[0].Src != img {
			t.Errorf("%s: images %v, truth %v", p.Key, got.Images, v["image"])
		}
		var cats []string
		for _, cat := range got.Categories {
			cats = append(cats, cat.Name)
		}
		if !slices.Equal(cats, v["categories"].([]string)) {
			t.Errorf("%s: categories %v, truth %v", p.Key, cats, v["categories"])
		}
		variable = variable || got.Prices.PriceRange != nil
	}
	if !variable {
		t.Error("no variable product with a price range")
	}
	r := getOK(t, c, srv.URL+wooStorePath+"?per_page=12&page=4")
	if rels, _ := links(t, r.header); string(r.body) != "[]" || rels["next"] != "" {
		t.Errorf("past the last page: %s, Link %v; want an empty array and no next", r.body, r.header.Values("Link"))
	}
}

// wpPost is what the test reads of a WordPress core post.
type wpPost struct {
	ID          int    `json:"id"`
	Slug        string `json:"slug"`
	Link        string `json:"link"`
	ModifiedGMT string `json:"modified_gmt"`
	Title       struct{ Rendered string }
}

func TestWooCoreAnswers400PastTheLastPage(t *testing.T) {
	shop, srv := newServer(t, WooCommerce, Options{API: WooCore})
	c := srv.Client()
	var posts []wpPost
	for n := 1; n <= 3; n++ {
		var page []wpPost
		if err := json.Unmarshal(getOK(t, c, srv.URL+wooCorePath+"?per_page=12&page="+strconv.Itoa(n)).body, &page); err != nil {
			t.Fatal(err)
		}
		posts = append(posts, page...)
	}
	truth := shop.Truth(srv.URL)
	if len(posts) != len(truth) {
		t.Fatalf("%d posts, want %d", len(posts), len(truth))
	}
	for i, p := range truth {
		got, v := posts[i], p.Values
		mod, err := time.Parse("2006-01-02T15:04:05", got.ModifiedGMT)
		if strconv.Itoa(got.ID) != p.Key || got.Link != p.URL || got.Title.Rendered != v["name"] || got.Slug != v["slug"] ||
			err != nil || !mod.Equal(v["modified"].(time.Time)) || strings.ContainsAny(got.ModifiedGMT, "Z+") {
			t.Errorf("%s: served %+v, truth %v", p.Key, got, v)
		}
	}
	r := get(t, c, srv.URL+wooCorePath+"?per_page=12&page=4")
	if r.status != http.StatusBadRequest || !bytes.Contains(r.body, []byte("rest_post_invalid_page_number")) {
		t.Errorf("page 4: status %d, %s; want WordPress's 400", r.status, r.body)
	}
}
