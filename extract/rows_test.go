package extract

import (
	"reflect"
	"strings"
	"testing"
)

// variantsPage is one product page with a table of SKUs.
const variantsPage = `<html><body>
<h1><span class="brand">Kessler &amp; Voss</span> Wanderschuh</h1>
<table class="variants">
<tr><th>SKU</th><th>Colour</th><th>Stock</th><th>Price</th></tr>
<tr class="variant"><td class="v-sku">KV-42-40</td><td class="v-colour">Blau</td><td class="v-stock">3</td><td class="v-price">89,90 €</td></tr>
<tr class="variant"><td class="v-sku">KV-42-41</td><td class="v-colour"></td><td class="v-stock">Sold out</td><td class="v-price">1.089,90 €</td></tr>
<tr class="variant"><td class="v-sku"> </td><td class="v-colour">Rot</td><td class="v-stock">1</td><td class="v-price">89,90 €</td></tr>
</table>
</body></html>`

func variantsSpec() Spec {
	return Spec{
		Item: ItemSpec{Rows: "table.variants tr.variant"},
		Key:  "sku",
		Fields: []FieldSpec{
			{Name: "sku", CSS: []string{"td.v-sku"}, Required: true},
			{Name: "name", CSS: []string{"h1"}, Scope: ScopePage},
			{Name: "brand", CSS: []string{"h1 .brand"}, Scope: ScopePage},
			{Name: "colour", CSS: []string{"td.v-colour"}, Default: ""},
			{Name: "stock", CSS: []string{"td.v-stock"}, Type: TypeInt64, Map: map[string]any{"Sold out": int64(0)}},
			{Name: "price", CSS: []string{"td.v-price"}, Type: TypeFloat64, Decimal: DecimalComma},
			{Name: "in_row", CSS: []string{"h1"}},
		},
	}
}

func TestRows(t *testing.T) {
	x := mustCompile(t, variantsSpec())
	page := mustURL(t, "https://shop.example/p/42")
	items, unusable := x.Items(mustParse(t, x, variantsPage), page)
	want := []Item{
		{Key: "KV-42-40", URL: page.String(), Values: []any{"KV-42-40", "Kessler & Voss Wanderschuh", "Kessler & Voss", "Blau", int64(3), 89.9, nil}},
		{Key: "KV-42-41", URL: page.String(), Values: []any{"KV-42-41", "Kessler & Voss Wanderschuh", "Kessler & Voss", "", int64(0), 1089.9, nil}},
	}
	if !reflect.DeepEqual(noWhy(items...), want) {
		t.Errorf("items =\n%#v\nwant\n%#v", items, want)
	}
	if len(unusable) != 1 || unusable[0].URL != page.String() || !reflect.DeepEqual(unusable[0].Err.Missing, []string{"sku"}) {
		t.Errorf("unusable = %+v, want the row without a SKU", unusable)
	}
	// Item reads the first row.
	it, err := x.Item(mustParse(t, x, variantsPage), page)
	if err != nil || !reflect.DeepEqual(noWhy(it)[0], want[0]) {
		t.Errorf("Item = %#v, %v; want the first row", it, err)
	}
}

func TestRowsMatchNothing(t *testing.T) {
	x := mustCompile(t, variantsSpec())
	page := mustURL(t, "https://shop.example/p/42")
	items, unusable := x.Items(mustParse(t, x, `<h1>Redesigned</h1><div class="skus"></div>`), page)
	if items != nil || len(unusable) != 1 {
		t.Fatalf("items %+v, unusable %+v; want the page unusable", items, unusable)
	}
	want := `unusable page: item.rows "table.variants tr.variant" matches nothing`
	if u := unusable[0]; u.URL != page.String() || u.Err.Error() != want || u.Err.Missing != nil {
		t.Errorf("unusable = %+v: %q, want %q", u, u.Err, want)
	}
	if _, err := x.Item(mustParse(t, x, `<h1>x</h1>`), page); !IsUnusable(err) || err.Error() != want {
		t.Errorf("Item error = %v, want %q", err, want)
	}
}

// TestRowsWithoutRowsSpec: Items reads one item per page without rows.
func TestItemsOnePerPage(t *testing.T) {
	x := mustCompile(t, bookSpec())
	page := mustURL(t, testPage)
	items, unusable := x.Items(mustParse(t, x, string(fixture(t, "book.html"))), page)
	want, err := x.Item(mustParse(t, x, string(fixture(t, "book.html"))), page)
	if err != nil || len(items) != 1 || unusable != nil || !reflect.DeepEqual(items[0], want) {
		t.Fatalf("Items = %+v, %+v; want the one Item", items, unusable)
	}
	items, unusable = x.Items(mustParse(t, x, `<p>stub</p>`), page)
	if items != nil || len(unusable) != 1 || !strings.Contains(unusable[0].Err.Error(), "missing required fields title, price, upc") {
		t.Errorf("Items of a stub = %+v, %+v", items, unusable)
	}
}

// TestRowsInCards reads variants inside listing cards: page-scoped fields
// come from the card.
func TestRowsInCards(t *testing.T) {
	body := `<h1>Category</h1>
<article><h3><a href="/p/1">Boot</a></h3><ul><li data-sku="B-1">40</li><li data-sku="B-2">41</li></ul></article>
<article><h3><a href="/p/2">Sock</a></h3><ul></ul></article>`
	x := mustCompile(t, Spec{
		Listing: ListingSpec{Items: "article", ItemLinks: "h3 a"},
		Item:    ItemSpec{Rows: "li"},
		Key:     "sku",
		Fields: []FieldSpec{
			{Name: "sku", CSS: []string{":scope"}, Attr: "data-sku"},
			{Name: "size", CSS: []string{":scope"}, Type: TypeInt64},
			{Name: "title", CSS: []string{"h3"}, Scope: ScopePage},
		},
	})
	l := x.Listing(mustParse(t, x, body), mustURL(t, "https://shop.example/list"))
	want := []Item{
		{Key: "B-1", URL: "https://shop.example/p/1", Values: []any{"B-1", int64(40), "Boot"}},
		{Key: "B-2", URL: "https://shop.example/p/1", Values: []any{"B-2", int64(41), "Boot"}},
	}
	if !reflect.DeepEqual(noWhy(l.Items...), want) {
		t.Errorf("items =\n%#v\nwant\n%#v", l.Items, want)
	}
	if len(l.Unusable) != 1 || l.Unusable[0].URL != "https://shop.example/p/2" || !strings.Contains(l.Unusable[0].Err.Error(), "matches nothing") {
		t.Errorf("unusable = %+v, want the card without rows", l.Unusable)
	}
}

// TestRowsJSON reads a JSON item page with rows: an expression giving
// an array; page-scoped fields read the document.
func TestRowsJSON(t *testing.T) {
	x := mustCompile(t, Spec{
		Item: ItemSpec{Format: FormatJSON, Rows: "product.variants"},
		Key:  "sku",
		Fields: []FieldSpec{
			{Name: "sku", JSON: "sku", Required: true},
			{Name: "title", JSON: "product.title", Scope: ScopePage},
			{Name: "price", JSON: "price", Type: TypeFloat64},
			{Name: "available", JSON: "available", Type: TypeBool},
		},
	})
	page := mustURL(t, "https://shop.example/products/boot.json")
	doc, err := x.ParseJSON([]byte(`{"product": {"title": "Boot", "variants": [
		{"sku": "B-1", "price": "89.90", "available": true},
		null,
		{"sku": null, "price": "89.90", "available": false},
		{"sku": "B-3", "price": 99, "available": false}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	items, unusable := x.ItemsJSON(doc, page)
	want := []Item{
		{Key: "B-1", URL: page.String(), Values: []any{"B-1", "Boot", 89.9, true}},
		{Key: "B-3", URL: page.String(), Values: []any{"B-3", "Boot", 99.0, false}},
	}
	if !reflect.DeepEqual(noWhy(items...), want) {
		t.Errorf("items =\n%#v\nwant\n%#v", items, want)
	}
	if len(unusable) != 1 || !strings.Contains(unusable[0].Err.Error(), `sku: json "sku" yields nothing`) {
		t.Errorf("unusable = %+v", unusable)
	}
	doc, _ = x.ParseJSON([]byte(`{"product": {"title": "Boot", "variants": []}}`))
	if items, unusable := x.ItemsJSON(doc, page); items != nil || len(unusable) != 1 ||
		unusable[0].Err.Error() != `unusable page: item.rows "product.variants" yields nothing` {
		t.Errorf("no rows: %+v, %+v", items, unusable)
	}
}
