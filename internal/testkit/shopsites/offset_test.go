package shopsites

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// offsetPage is what the test reads of an Offset shop page.
type offsetPage struct {
	Limit      int          `json:"limit"`
	Offset     *int         `json:"offset"`
	Count      int          `json:"count"`
	Total      *int         `json:"total"`
	NextCursor *string      `json:"nextCursor"`
	Results    []offsetJSON `json:"results"`
}

type offsetJSON struct {
	Key           string            `json:"key"`
	Name          map[string]string `json:"name"`
	MasterVariant struct {
		SKU    string `json:"sku"`
		Prices []struct {
			Value      struct{ CentAmount int64 }
			Discounted *struct{ Value struct{ CentAmount int64 } }
		} `json:"prices"`
		Images     []struct{ URL string }
		Attributes []struct {
			Name  string
			Value any
		}
		Availability *struct {
			IsOnStock         bool
			AvailableQuantity int64
		}
	} `json:"masterVariant"`
	LastModifiedAt string `json:"lastModifiedAt"`
}

// checkOffsetProduct compares a served product with its truth.
func checkOffsetProduct(t *testing.T, got offsetJSON, p Product) {
	t.Helper()
	v, mv := p.Values, got.MasterVariant
	name := got.Name["de-DE"]
	if name == "" {
		name = got.Name["en-GB"]
	}
	price := mv.Prices[0].Value.CentAmount
	if d := mv.Prices[0].Discounted; d != nil {
		price = d.Value.CentAmount
	}
	mod, err := time.Parse(time.RFC3339Nano, got.LastModifiedAt)
	if got.Key != p.Key || name != v["name"] || mv.SKU != v["sku"] || money(price) != v["price"] ||
		money(mv.Prices[0].Value.CentAmount) != v["regular_price"] || err != nil || !mod.Equal(v["modified"].(time.Time)) {
		t.Errorf("%s: served %+v, truth %v", p.Key, got, v)
	}
	var colour, weight any
	for _, a := range mv.Attributes {
		switch a.Name {
		case "color":
			colour = a.Value.(map[string]any)["label"].(map[string]any)["de-DE"]
		case "weight":
			weight = a.Value
		}
	}
	if colour != v["colour"] || weight != v["weight"] {
		t.Errorf("%s: colour %v weight %v, truth %v %v", p.Key, colour, weight, v["colour"], v["weight"])
	}
	if a := mv.Availability; a == nil && (v["in_stock"] != nil || v["quantity"] != nil) ||
		a != nil && (a.IsOnStock != v["in_stock"] || a.AvailableQuantity != v["quantity"]) {
		t.Errorf("%s: availability %+v, truth %v %v", p.Key, a, v["in_stock"], v["quantity"])
	}
	if img, _ := v["image"].(string); len(mv.Images) == 0 && img != "" || len(mv.Images) > 0 && mv.Images[0].URL != img {
		t.Errorf("%s: images %v, truth %v", p.Key, mv.Images, v["image"])
	}
}

func TestOffsetPagesByOffset(t *testing.T) {
	shop, srv := newServer(t, Offset, Options{})
	truth := shop.Truth(srv.URL)
	var products []offsetJSON
	for offset := 0; offset <= 48; offset += 12 {
		u := srv.URL + offsetSearchPath + "?limit=12&offset=" + strconv.Itoa(offset)
		var page offsetPage
		if err := json.Unmarshal(getOK(t, srv.Client(), u).body, &page); err != nil || page.Results == nil {
			t.Fatalf("%s: %v, results %v", u, err, page.Results)
		}
		if page.Limit != 12 || *page.Offset != offset || page.Count != len(page.Results) || *page.Total != 35 {
			t.Errorf("%s: limit %d offset %d count %d total %d", u, page.Limit, *page.Offset, page.Count, *page.Total)
		}
		for _, pr := range page.Results {
			if i := len(products); i < len(truth) && truth[i].URL != u {
				t.Errorf("%s: item URL %s, want the page it is on", truth[i].Key, truth[i].URL)
			}
			products = append(products, pr)
		}
	}
	if len(products) != len(truth) {
		t.Fatalf("%d products, want %d", len(products), len(truth))
	}
	for i, p := range truth {
		checkOffsetProduct(t, products[i], p)
	}
	for _, q := range []string{"offset=-1", "offset=x", "limit=0", "limit=501"} {
		if r := get(t, srv.Client(), srv.URL+offsetSearchPath+"?"+q); r.status != http.StatusBadRequest {
			t.Errorf("?%s: status %d, want 400", q, r.status)
		}
	}
}

func TestOffsetCursorNamesTheNextPage(t *testing.T) {
	shop, srv := newServer(t, Offset, Options{API: OffsetCursor})
	truth := shop.Truth(srv.URL)
	var products []offsetJSON
	pages := 0
	for u := srv.URL + offsetCursorPath + "?limit=12"; u != ""; pages++ {
		var page offsetPage
		if err := json.Unmarshal(getOK(t, srv.Client(), u).body, &page); err != nil {
			t.Fatal(err)
		}
		if page.Offset != nil || page.Total != nil {
			t.Errorf("%s: a cursor page tells its offset or total", u)
		}
		for _, pr := range page.Results {
			if i := len(products); i < len(truth) && truth[i].URL != u {
				t.Errorf("%s: item URL %s, want %s", truth[i].Key, truth[i].URL, u)
			}
			products = append(products, pr)
		}
		u = ""
		if page.NextCursor != nil {
			u = srv.URL + offsetCursorPath + "?limit=12&cursor=" + *page.NextCursor
		}
	}
	if pages != 3 || len(products) != len(truth) {
		t.Fatalf("%d pages, %d products; want 3, %d", pages, len(products), len(truth))
	}
	for i, p := range truth {
		checkOffsetProduct(t, products[i], p)
	}
	if r := get(t, srv.Client(), srv.URL+offsetCursorPath+"?cursor=bm9wZQ"); r.status != http.StatusBadRequest {
		t.Errorf("an unknown cursor: status %d, want 400", r.status)
	}
}
