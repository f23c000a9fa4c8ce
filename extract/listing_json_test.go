package extract

import (
	"reflect"
	"strings"
	"testing"
)

const apiPage = `{"items": [
	{"id": 1, "name": "Boot", "price": "89.90", "url": "/p/1#top", "image": "/img/1.jpg"},
	{"id": 2, "name": "Sock", "price": 4.5, "url": "HTTPS://Shop.Example/p/2"},
	{"id": 3, "name": null, "price": "1"},
	"not a card",
	null
], "next": "/api/products?page=3", "total": 5}`

func jsonListing(t *testing.T, spec Spec, body string, page string) Listing {
	t.Helper()
	x := mustCompile(t, spec)
	doc, err := x.ParseJSON([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return x.ListingJSON(doc, mustURL(t, page))
}

// TestListingJSONCards: items carry every field; a card's URL is its url
// field.
func TestListingJSONCards(t *testing.T) {
	const page = "https://shop.example/api/products?page=2"
	spec := Spec{
		Listing: ListingSpec{Format: FormatJSON, Items: "items", NextPage: "next"},
		Key:     "id",
		Fields: []FieldSpec{
			{Name: "id", JSON: "id", Type: TypeInt64},
			{Name: "name", JSON: "name", Required: true},
			{Name: "price", JSON: "price", Type: TypeFloat64},
			{Name: "link", JSON: "url", URL: true},
			{Name: "image", JSON: "image", URL: true},
		},
	}
	l := jsonListing(t, spec, apiPage, page)
	want := []Item{
		{Key: "1", URL: "https://shop.example/p/1", Values: []any{int64(1), "Boot", 89.9, "https://shop.example/p/1#top", "https://shop.example/img/1.jpg"}},
		{Key: "2", URL: "https://shop.example/p/2", Values: []any{int64(2), "Sock", 4.5, "https://Shop.Example/p/2", nil}},
	}
	if !reflect.DeepEqual(noWhy(l.Items...), want) {
		t.Errorf("items =\n%#v\nwant\n%#v", l.Items, want)
	}
	if len(l.Unusable) != 2 {
		t.Fatalf("unusable = %+v, want the card without a name and the string", l.Unusable)
	}
	if u := l.Unusable[0]; u.URL != page || !reflect.DeepEqual(u.Err.Missing, []string{"name"}) {
		t.Errorf("unusable[0] = %+v: a card without a link has the listing's URL", u)
	}
	if u := l.Unusable[1]; u.URL != page || u.Err.Error() != "unusable page: listing.items: card 4 is a string, not an object" {
		t.Errorf("unusable[1] = %+v: %v", u, u.Err)
	}
	if want := []string{"https://shop.example/api/products?page=3"}; !reflect.DeepEqual(l.NextPages, want) || l.ItemLinks != nil {
		t.Errorf("next %q, links %q", l.NextPages, l.ItemLinks)
	}

	// item_links names each card's link on the card object.
	spec.Listing.ItemLinks = "join('', ['/items/', to_string(id)])"
	l = jsonListing(t, spec, apiPage, page)
	if len(l.Items) != 2 || l.Items[0].URL != "https://shop.example/items/1" || l.Items[1].URL != "https://shop.example/items/2" || l.ItemLinks != nil {
		t.Errorf("with item_links: items %+v, links %q", l.Items, l.ItemLinks)
	}
}

// TestListingJSONLinks: items carry only a URL; the last page's next is
// null.
func TestListingJSONLinks(t *testing.T) {
	spec := Spec{
		Listing: ListingSpec{Format: FormatJSON, ItemLinks: "items[].url", NextPage: "next"},
		Fields:  []FieldSpec{{Name: "title", CSS: []string{"h1"}}},
	}
	l := jsonListing(t, spec, `{"items": [{"url": "/p/1"}, {"url": "/p/2#x"}, {"url": "/p/1"}, {"url": 7}, {}, {"url": "javascript:void(0)"}], "next": null}`,
		"https://shop.example/api/products?page=9")
	if want := []string{"https://shop.example/p/1", "https://shop.example/p/2"}; !reflect.DeepEqual(l.ItemLinks, want) {
		t.Errorf("links %q, want %q", l.ItemLinks, want)
	}
	if l.NextPages != nil || l.Items != nil || l.Dropped != 0 {
		t.Errorf("next %q, items %+v, dropped %d", l.NextPages, l.Items, l.Dropped)
	}
	for _, body := range []string{`{"items": []}`, `{"next": ""}`, `[]`, `"x"`, `{"next": ["/a", "/b"]}`} {
		l := jsonListing(t, spec, body, "https://shop.example/api")
		if l.ItemLinks != nil || len(l.NextPages) > 2 {
			t.Errorf("%s: %+v", body, l)
		}
	}
	spec.Listing.ItemLinks = "links"
	if l := jsonListing(t, spec, `{"links": "/only/one"}`, "https://shop.example/api"); !reflect.DeepEqual(l.ItemLinks, []string{"https://shop.example/only/one"}) {
		t.Errorf("one link: %q", l.ItemLinks)
	}
}

func TestListingJSONMaxLinks(t *testing.T) {
	spec := Spec{
		Listing: ListingSpec{Format: FormatJSON, Items: "items", NextPage: "next", MaxLinks: 1},
		Fields:  []FieldSpec{{Name: "id", JSON: "id", Type: TypeInt64}},
		Key:     "id",
	}
	l := jsonListing(t, spec, `{"items": [{"id": 1}, {"id": 2}, {"id": 3}], "next": ["/a", "/b"]}`, "https://shop.example/api")
	if len(l.Items) != 1 || l.Items[0].Key != "1" || len(l.NextPages) != 1 || l.Dropped != 3 {
		t.Errorf("items %+v, next %q, dropped %d; want 1, 1, 3", l.Items, l.NextPages, l.Dropped)
	}
	spec.Listing.Items, spec.Listing.ItemLinks = "", "items[].to_string(id)"
	spec.Fields, spec.Key = []FieldSpec{{Name: "title", CSS: []string{"h1"}}}, ""
	l = jsonListing(t, spec, `{"items": [{"id": 1}, {"id": 2}, {"id": 2}]}`, "https://shop.example/api/")
	if !reflect.DeepEqual(l.ItemLinks, []string{"https://shop.example/api/1"}) || l.Dropped != 1 {
		t.Errorf("links %q, dropped %d", l.ItemLinks, l.Dropped)
	}
}

// TestListingJSONShopify reads a products.json-like listing: one item per
// variant, the product's fields on every row, a card link built from its
// handle.
func TestListingJSONShopify(t *testing.T) {
	spec := Spec{
		Listing: ListingSpec{Format: FormatJSON, Items: "products", ItemLinks: "join('', ['/products/', handle])"},
		Item:    ItemSpec{Rows: "variants"},
		Key:     "sku",
		Fields: []FieldSpec{
			{Name: "sku", JSON: "sku", Required: true},
			{Name: "title", JSON: "title", Scope: ScopePage},
			{Name: "vendor", JSON: "vendor", Scope: ScopePage},
			{Name: "price", JSON: "price", Type: TypeFloat64},
			{Name: "available", JSON: "available", Type: TypeBool},
		},
	}
	l := jsonListing(t, spec, `{"products": [
		{"title": "Boot", "handle": "boot", "vendor": "K&V", "variants": [{"sku": "B-40", "price": "89.90", "available": true}, {"sku": "B-41", "price": "89.90", "available": false}]},
		{"title": "Sock", "handle": "sock", "vendor": "K&V", "variants": []}]}`, "https://shop.example/products.json?page=1")
	want := []Item{
		{Key: "B-40", URL: "https://shop.example/products/boot", Values: []any{"B-40", "Boot", "K&V", 89.9, true}},
		{Key: "B-41", URL: "https://shop.example/products/boot", Values: []any{"B-41", "Boot", "K&V", 89.9, false}},
	}
	if !reflect.DeepEqual(noWhy(l.Items...), want) {
		t.Errorf("items =\n%#v\nwant\n%#v", l.Items, want)
	}
	if len(l.Unusable) != 1 || l.Unusable[0].URL != "https://shop.example/products/sock" || !strings.Contains(l.Unusable[0].Err.Error(), "yields nothing") {
		t.Errorf("unusable = %+v", l.Unusable)
	}
}
