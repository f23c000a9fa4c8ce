package shopsites

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"
)

// shopifyJSON is what the test reads of a /products.json product.
type shopifyJSON struct {
	ID          int64    `json:"id"`
	Title       string   `json:"title"`
	Handle      string   `json:"handle"`
	Vendor      string   `json:"vendor"`
	ProductType string   `json:"product_type"`
	Tags        []string `json:"tags"`
	UpdatedAt   string   `json:"updated_at"`
	Variants    []struct {
		SKU       string  `json:"sku"`
		Price     string  `json:"price"`
		CompareAt *string `json:"compare_at_price"`
		Available bool    `json:"available"`
	} `json:"variants"`
	Images []struct {
		Src string `json:"src"`
	} `json:"images"`
}

func TestShopifyProductsJSONPagesEndOnAnEmptyArray(t *testing.T) {
	shop, srv := newServer(t, Shopify, Options{})
	c := srv.Client()
	var products []shopifyJSON
	counts := []int{}
	for n := 1; n <= 5; n++ {
		r := getOK(t, c, srv.URL+"/products.json?limit=12&page="+strconv.Itoa(n))
		var doc struct {
			Products []shopifyJSON `json:"products"`
		}
		if err := json.Unmarshal(r.body, &doc); err != nil || doc.Products == nil {
			t.Fatalf("page %d: %v, products %v:\n%s", n, err, doc.Products, r.body)
		}
		counts = append(counts, len(doc.Products))
		products = append(products, doc.Products...)
	}
	if want := []int{12, 12, 10, 0, 0}; !slices.Equal(counts, want) {
		t.Fatalf("products per page %v, want %v", counts, want)
	}
	truth := shop.Truth(srv.URL)
	var multi, soldOut, sale, noImage, noType bool
	for i, p := range truth {
		got, v := products[i], p.Values
		available := false
		for _, vr := range got.Variants {
			available = available || vr.Available
			if vr.Price != got.Variants[0].Price {
				t.Errorf("%s: variants differ in price", p.Key)
			}
		}
		price, err := strconv.ParseFloat(got.Variants[0].Price, 64)
		updated, terr := time.Parse(time.RFC3339, got.UpdatedAt)
		if strconv.FormatInt(got.ID, 10) != p.Key || got.Title != v["title"] || got.Vendor != v["vendor"] ||
			err != nil || price != v["price"] || available != v["available"] || int64(len(got.Variants)) != v["variants"] ||
			terr != nil || !updated.Equal(v["updated_at"].(time.Time)) || srv.URL+"/products/"+got.Handle != v["url"] {
			t.Errorf("%s: served %+v, truth %v", p.Key, got, v)
		}
		if _, offset := updated.Zone(); offset == 0 {
			t.Errorf("%s: updated_at %s in UTC; the shop writes its own zone", p.Key, got.UpdatedAt)
		}
		multi = multi || len(got.Variants) > 1 && !got.Variants[0].Available && available
		soldOut = soldOut || !available
		sale = sale || got.Variants[0].CompareAt != nil
		noImage = noImage || len(got.Images) == 0
		noType = noType || got.ProductType == ""
	}
	if !multi || !soldOut || !sale || !noImage || !noType {
		t.Errorf("quirks: first variant sold out %v, all sold out %v, sale %v, no image %v, no type %v", multi, soldOut, sale, noImage, noType)
	}
	for _, q := range []string{"page=0", "page=x", "limit=251", "limit=0"} {
		if r := get(t, c, srv.URL+"/products.json?"+q); r.status != http.StatusBadRequest {
			t.Errorf("?%s: status %d, want 400", q, r.status)
		}
	}
	var doc struct{ Products []any }
	if err := json.Unmarshal(getOK(t, c, srv.URL+"/products.json").body, &doc); err != nil || len(doc.Products) != 30 {
		t.Errorf("no limit: %d products, want Shopify's default 30", len(doc.Products))
	}
}
