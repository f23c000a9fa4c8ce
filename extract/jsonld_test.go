package extract

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestJSONLDFixture reads a JS shell page whose product data is only in
// JSON-LD: a BreadcrumbList block, a block with an @graph holding the
// Product (its @type an array), a top-level array with another Product,
// and a block that is not JSON.
func TestJSONLDFixture(t *testing.T) {
	ld := func(name, typ, expr string, t Type) FieldSpec {
		return FieldSpec{Name: name, JSONLD: typ, JSON: expr, Type: t}
	}
	spec := Spec{
		Key: "sku",
		Fields: []FieldSpec{
			ld("name", "Product", "name", ""),
			ld("sku", "Product", "sku", ""),
			ld("brand", "Product", "brand.name", ""),
			ld("gtin", "Product", "gtin13", ""),
			ld("gtin_number", "Product", "gtin13", TypeInt64),
			ld("price", "Product", "offers.price || offers.lowPrice", TypeFloat64),
			ld("high", "Product", "offers.highPrice", TypeFloat64),
			{Name: "images", JSONLD: "Product", JSON: "image", URL: true, Multiple: true},
			{Name: "crumbs", JSONLD: "BreadcrumbList", JSON: "itemListElement[].name", Multiple: true},
			ld("org", "Organization", "name", ""),
			ld("brand_nested", "Brand", "name", ""),
			ld("released", "Product", "releaseDate", TypeTimestamp),
			{Name: "in_stock", JSONLD: "Product", JSON: "offers.availability", Type: TypeBool,
				Map: map[string]any{"*/InStock": true, "*": false}},
			ld("rating", "Product", "aggregateRating.ratingValue", TypeFloat64),
			ld("reviews", "Product", "aggregateRating.reviewCount", TypeInt64),
			ld("offers", "Product", "offers.offerCount", TypeString),
			ld("absent", "Product", "color", ""),
		},
	}
	x := mustCompile(t, spec)
	page := mustURL(t, "https://shop.example/p/42")
	it, err := x.Item(mustParse(t, x, string(fixture(t, "jsonld.html"))), page)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		"Wanderschuh «Alpin» Café",
		"KV-0042",
		"Kessler & Voss",
		"4006381333931",
		int64(4006381333931),
		89.9,
		129.0,
		[]string{"https://shop.example/img/42-a.jpg", "https://shop.example/img/42-b.jpg"},
		[]string{"Schuhe", "Wandern"},
		"Kessler & Voss GmbH",
		"Kessler & Voss",
		time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC),
		true,
		4.6,
		int64(128),
		"3",
		nil,
	}
	for i, f := range x.Fields() {
		if !reflect.DeepEqual(it.Values[i], want[i]) {
			t.Errorf("%s = %#v, want %#v", f.Name, it.Values[i], want[i])
		}
	}
	if it.Key != "KV-0042" || it.URL != page.String() || it.Reasons != nil {
		t.Errorf("key %q, URL %q, reasons %q", it.Key, it.URL, it.Reasons)
	}
}

// TestJSONLDOffersArray reads a Product whose offers are an array, a
// price given as a string in one offer and a number in the other, and a
// number beyond float64's exact integers.
func TestJSONLDOffersArray(t *testing.T) {
	x := mustCompile(t, Spec{Fields: []FieldSpec{
		{Name: "price", JSONLD: "Product", JSON: "offers.price || offers[0].price || offers.lowPrice", Type: TypeFloat64},
		{Name: "skus", JSONLD: "Product", JSON: "offers[].sku", Multiple: true},
		{Name: "over_13", JSONLD: "Product", JSON: "offers[?price > `13`].sku | [0]"},
		{Name: "cheapest", JSONLD: "Product", JSON: "min_by(offers, &to_number(price)).sku"},
		{Name: "sku", JSONLD: "Product", JSON: "sku"},
		{Name: "sku_number", JSONLD: "Product", JSON: "sku", Type: TypeInt64},
		{Name: "in_stock", JSONLD: "Product", JSON: "offers[].availability", Type: TypeBool, Multiple: true,
			Map: map[string]any{"*InStock": true, "*OutOfStock": false}},
	}})
	it, err := x.Item(mustParse(t, x, string(fixture(t, "offers-array.html"))), mustURL(t, "https://shop.example/p/7"))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{12.5, []string{"TS-S", "TS-M"}, "TS-M", "TS-S", "90071992547409931", int64(90071992547409931), []bool{false, true}}
	if !reflect.DeepEqual(it.Values, want) {
		t.Errorf("values =\n%#v\nwant\n%#v", it.Values, want)
	}
}

func TestJSONLDMissing(t *testing.T) {
	tests := []struct {
		name, body, reason string
	}{
		{"no JSON-LD", `<h1>x</h1>`, `name: no JSON-LD object of @type "Recipe": no JSON-LD script here`},
		{"other types", `<script type="application/ld+json">{"@type":"Product"}</script>`, `name: no JSON-LD object of @type "Recipe"`},
		{"broken block", `<script type="application/ld+json">{"@type":</script>`, `(1 JSON-LD scripts are not JSON)`},
		{"null value", `<script type="application/ld+json">{"@type":"Recipe","name":null}</script>`, `name: json "name" yields nothing on the Recipe JSON-LD object`},
		{"empty array", `<script type="application/ld+json">{"@type":"Recipe","name":[]}</script>`, `yields nothing`},
		{"blank string", `<script type="application/ld+json">{"@type":"Recipe","name":"  "}</script>`, `yields nothing`},
	}
	x := mustCompile(t, Spec{Fields: []FieldSpec{{Name: "name", JSONLD: "Recipe", JSON: "name", Required: true}}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := x.Item(mustParse(t, x, tt.body), mustURL(t, testPage))
			if !IsUnusable(err) || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("err = %v, want unusable with %q", err, tt.reason)
			}
		})
	}
}

func TestJSONLDTypes(t *testing.T) {
	for _, tt := range []struct {
		body string
		want any
	}{
		{`<script type="application/ld+json">{"@type":"https://schema.org/Product","name":"url type"}</script>`, "url type"},
		{`<script type="application/ld+json">{"@type":"schema:Product","name":"prefixed"}</script>`, "prefixed"},
		{`<script type="application/ld+json">{"@type":"ProductGroup","name":"other"}</script>`, nil},
		{`<script type="Application/LD+JSON; charset=utf-8"><!-- {"@type":"Product","name":"commented"} --></script>`, "commented"},
		{`<script type="application/ld+json">{"@type":"Product","name":"first"};</script><script type="application/ld+json">{"@type":"Product","name":"second"}</script>`, "first"},
		{`<script type="application/ld+json">{"@type":"ItemPage","mainEntity":{"@type":"Product","name":"nested"}}</script>`, "nested"},
		{`<script type="application/ld+json">{"@type":"ItemPage","mainEntity":{"@type":"Product","name":"nested"}}</script><script type="application/ld+json">{"@type":"Product","name":"top level first"}</script>`, "top level first"},
		{`<script type="application/ld+json">[[{"@graph":[{"@type":"Product","name":"deep array"}]}]]</script>`, "deep array"},
	} {
		x := mustCompile(t, Spec{Fields: []FieldSpec{{Name: "name", JSONLD: "Product", JSON: "name"}}})
		it, err := x.Item(mustParse(t, x, tt.body), mustURL(t, testPage))
		if err != nil || it.Values[0] != tt.want {
			t.Errorf("%s: name = %#v, %v; want %#v", tt.body, it.Values[0], err, tt.want)
		}
	}
}
