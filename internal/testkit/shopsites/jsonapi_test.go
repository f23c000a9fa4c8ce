package shopsites

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// decodeJSON decodes a JSON document with numbers kept as json.Number.
func decodeJSON(t *testing.T, name string, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, b)
	}
	return m
}

// checkAPIProduct compares a product object, read from the document at
// docURL, with truth.
func checkAPIProduct(t *testing.T, docURL string, obj map[string]any, p Product) {
	t.Helper()
	v := p.Values
	id, err := obj["id"].(json.Number).Int64()
	if err != nil || id != v["id"] {
		t.Errorf("%s: id %v, truth %v", p.Key, obj["id"], v["id"])
	}
	price := obj["price"].(map[string]any)
	amount, err := price["amount"].(json.Number).Float64()
	if err != nil || amount != v["price"] || price["currency"] != v["currency"] {
		t.Errorf("%s: price %v, truth %v %v", p.Key, price, v["price"], v["currency"])
	}
	if obj["title"] != v["title"] || obj["on_sale"] != v["on_sale"] {
		t.Errorf("%s: title %v on_sale %v, truth %v %v", p.Key, obj["title"], obj["on_sale"], v["title"], v["on_sale"])
	}
	if u, _ := obj["url"].(string); resolve(t, docURL, u) != v["url"] {
		t.Errorf("%s: url %v, truth %v", p.Key, obj["url"], v["url"])
	}
	var stock any
	if n, ok := obj["stock"].(json.Number); ok {
		stock, _ = n.Int64()
	} else if s, present := obj["stock"]; !present || s != nil {
		t.Errorf("%s: stock %v is neither a number nor null", p.Key, s)
	}
	if stock != v["stock"] {
		t.Errorf("%s: stock %v, truth %v", p.Key, stock, v["stock"])
	}
	var tags []string
	for _, tag := range obj["tags"].([]any) {
		tags = append(tags, tag.(string))
	}
	if want, _ := v["tags"].([]string); !slices.Equal(tags, want) {
		t.Errorf("%s: tags %v, truth %v", p.Key, tags, v["tags"])
	}
	if ts, err := time.Parse(time.RFC3339, obj["updated_at"].(string)); err != nil || !ts.Equal(v["updated_at"].(time.Time)) {
		t.Errorf("%s: updated_at %v, truth %v", p.Key, obj["updated_at"], v["updated_at"])
	}
}

func TestJSONAPIPagesChainToNull(t *testing.T) {
	for _, api := range []string{APIFull, APILinks} {
		t.Run(api, func(t *testing.T) {
			shop, srv := newServer(t, JSONAPI, Options{API: api})
			c := srv.Client()
			truth := shop.Truth(srv.URL)
			var objects []map[string]any
			var docs, urls []string
			pages, escapes := 0, false
			for u := srv.URL + "/api/products?page=1"; u != ""; pages++ {
				r := getOK(t, c, u)
				if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("%s: Content-Type %q", u, ct)
				}
				escapes = escapes || bytes.Contains(r.body, []byte(`\/`))
				doc := decodeJSON(t, u, r.body)
				for _, it := range doc["items"].([]any) {
					obj := it.(map[string]any)
					if api == APILinks {
						if len(obj) != 1 {
							t.Errorf("%s: item %v carries more than its URL", u, obj)
						}
						urls = append(urls, resolve(t, r.url, obj["url"].(string)))
						continue
					}
					objects, docs = append(objects, obj), append(docs, r.url)
				}
				next, present := doc["next"]
				if !present {
					t.Fatalf("%s: no next key", u)
				}
				u = ""
				if s, ok := next.(string); ok {
					u = resolve(t, r.url, s)
				} else if next != nil {
					t.Fatalf("%s: next = %v", u, next)
				}
			}
			if pages != 4 {
				t.Errorf("%d API pages, want 4", pages)
			}
			if !escapes {
				t.Error("no API page escapes /")
			}
			if api == APILinks {
				if !slices.Equal(urls, truthURLs(truth)) {
					t.Errorf("item URLs %v,\nwant %v", urls, truthURLs(truth))
				}
				for _, p := range truth {
					r := getOK(t, c, p.URL)
					checkAPIProduct(t, r.url, decodeJSON(t, p.URL, r.body), p)
				}
			} else {
				if len(objects) != len(truth) {
					t.Fatalf("%d items, want %d", len(objects), len(truth))
				}
				for i, p := range truth {
					checkAPIProduct(t, docs[i], objects[i], p)
				}
			}
			r := get(t, c, srv.URL+"/api/products?page=5")
			if r.status != http.StatusNotFound || !json.Valid(r.body) {
				t.Errorf("page 5: status %d, body %q; want a JSON 404", r.status, r.body)
			}
		})
	}
}

func TestJSONAPIGridHoldsTheNextURLInAnAttribute(t *testing.T) {
	shop, srv := newServer(t, JSONAPI, Options{API: APIGrid})
	c := srv.Client()
	truth := shop.Truth(srv.URL)
	links, pages := walkListing(t, c, srv.URL+"/shop", "#grid a.card-link", "#grid", "data-next-api")
	if !slices.Equal(links, truthURLs(truth)) {
		t.Errorf("grid links %v,\nwant %v", links, truthURLs(truth))
	}
	if pages != 4 {
		t.Errorf("%d grid pages, want 4", pages)
	}
	doc := parse(t, getOK(t, c, srv.URL+"/shop").body)
	if n := doc.Find(`a[href*="page="], a[rel=next], link[rel=next]`).Length(); n != 0 {
		t.Errorf("the grid page has %d next links, want none", n)
	}
	for _, p := range truth {
		doc := parse(t, getOK(t, c, p.URL).body)
		next := decodeJSON(t, p.URL, []byte(doc.Find("script#__NEXT_DATA__").Text()))
		obj := next["props"].(map[string]any)["pageProps"].(map[string]any)["product"].(map[string]any)
		checkAPIProduct(t, p.URL, obj, p)
	}
}

func TestJSONAPIShopsDifferOnlyInItemURLs(t *testing.T) {
	var truths [][]Product
	for _, api := range []string{APIFull, APILinks, APIGrid} {
		shop, err := New(JSONAPI, Options{API: api})
		if err != nil {
			t.Fatal(err)
		}
		truths = append(truths, shop.Truth("http://h"))
	}
	for i, p := range truths[0] {
		for _, other := range truths[1:] {
			q := other[i]
			if q.Key != p.Key || !slices.EqualFunc(shopValues(q), shopValues(p), func(a, b any) bool { return equalValue(a, b) }) {
				t.Errorf("item %d: %+v differs from %+v", i, q, p)
			}
		}
	}
	if truths[0][0].URL != "http://h/products/1" || truths[1][0].URL != "http://h/api/products/1" || truths[2][0].URL != "http://h/products/1" {
		t.Errorf("item URLs %s, %s, %s", truths[0][0].URL, truths[1][0].URL, truths[2][0].URL)
	}
}

// shopValues returns p's values sorted by column name.
func shopValues(p Product) []any {
	var names []string
	for k := range p.Values {
		names = append(names, k)
	}
	slices.Sort(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = p.Values[n]
	}
	return out
}

// equalValue compares two truth values, lists and times included.
func equalValue(a, b any) bool {
	switch a := a.(type) {
	case []string:
		b, ok := b.([]string)
		return ok && slices.Equal(a, b)
	case time.Time:
		b, ok := b.(time.Time)
		return ok && a.Equal(b)
	}
	return a == b
}
