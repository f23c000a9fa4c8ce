package extract

import (
	"net/url"
	"reflect"
	"testing"
)

// noWhy returns the items without their Why, for tests about values.
func noWhy(items ...Item) []Item {
	out := make([]Item, len(items))
	for i, it := range items {
		it.Why = nil
		out[i] = it
	}
	return out
}

func TestWhyAFieldFoundNothing(t *testing.T) {
	spec := Spec{
		Listing: ListingSpec{ItemLinks: "a"},
		Fields: []FieldSpec{
			{Name: "title", CSS: []string{"h1"}, Required: true},
			{Name: "brand", CSS: []string{"h2.brand"}},
			{Name: "image", CSS: []string{"img.main"}, Attr: "src"},
			{Name: "stock", CSS: []string{"p.stock"}, Type: TypeInt64, Regex: `([0-9]+) left`},
			{Name: "price", CSS: []string{"p.price"}, Type: TypeFloat64},
			{Name: "colour", CSS: []string{"span.colour"}, Default: "none"},
		},
	}
	x := mustCompile(t, spec)
	page := `<h1>Boot</h1><img class="main"><p class="stock">sold out</p><p class="price">cheap</p>`
	it, err := x.Item(mustParse(t, x, page), &url.URL{Scheme: "https", Host: "shop.example", Path: "/p/1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"",
		`no element matches "h2.brand"`,
		`matched elements have no "src" attribute value`,
		`regex "([0-9]+) left" does not match`,
		`price: "cheap" is not a valid float64`,
		`no element matches "span.colour"`,
	}
	if !reflect.DeepEqual(it.Why, want) {
		t.Fatalf("Why =\n%q\nwant\n%q", it.Why, want)
	}
	if it.Values[5] != "none" {
		t.Fatalf("colour = %v, want its default", it.Values[5])
	}
	// A page where every field finds a value has no Why at all.
	full := `<h1>Boot</h1><h2 class="brand">K</h2><img class="main" src="/i.jpg"><p class="stock">3 left</p><p class="price">9.5</p><span class="colour">red</span>`
	if it, _ := x.Item(mustParse(t, x, full), &url.URL{Scheme: "https", Host: "shop.example"}); it.Why != nil {
		t.Fatalf("Why = %q, want nil", it.Why)
	}
}
