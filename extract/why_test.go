package extract

import (
	"net/url"
	"reflect"
	"strings"
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

// A listing selector that matches but yields no link, or an items
// selector or expression that finds nothing, is noted in words.
func TestListingNotesSelectorsThatYieldNothing(t *testing.T) {
	const page = "https://shop.example/shop"
	fields := []FieldSpec{{Name: "id", CSS: []string{":scope"}, Attr: "data-id", Required: true}}
	for _, tt := range []struct {
		name  string
		spec  ListingSpec
		html  string
		notes []string
	}{
		{"next_page without href", ListingSpec{ItemLinks: "a.p", NextPage: "li.next"},
			`<a class="p" href="/p/1">1</a><li class="next">next</li>`,
			[]string{`next_page "li.next" matches elements without a usable "href"`}},
		{"item_links without href", ListingSpec{ItemLinks: "h3"},
			`<h3>Boot</h3>`,
			[]string{`item_links "h3" matches elements without a usable "href"`}},
		{"items match nothing", ListingSpec{Items: "li.card"},
			`<li class="tile" data-id="1">Boot</li>`,
			[]string{`items "li.card" matches nothing on this page`}},
		{"all usable", ListingSpec{ItemLinks: "a.p", NextPage: "li.next a"},
			`<a class="p" href="/p/1">1</a><li class="next"><a href="?page=2">next</a></li>`,
			nil},
		{"a link among elements without one", ListingSpec{ItemLinks: "a.p"},
			`<a class="p">no link</a><a class="p" href="/p/1">1</a>`,
			nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := Spec{Listing: tt.spec, Key: "id", Fields: fields}
			x := mustCompile(t, spec)
			l := x.Listing(mustParse(t, x, tt.html), mustURL(t, page))
			if got := noteTexts(t, l.Notes); !reflect.DeepEqual(got, tt.notes) {
				t.Fatalf("notes = %q, want %q", got, tt.notes)
			}
		})
	}
}

func TestListingJSONNotesExpressionsThatYieldNull(t *testing.T) {
	const page = "https://shop.example/api/products?page=2"
	fields := []FieldSpec{{Name: "id", JSON: "id", Type: TypeInt64, Required: true}}
	for _, tt := range []struct {
		name  string
		spec  ListingSpec
		body  string
		notes []string
	}{
		{"items null", ListingSpec{Format: FormatJSON, Items: "products"}, `{"items": [{"id": 1}]}`,
			[]string{`items "products" yields null: the expression finds nothing on this page`}},
		{"item_links null", ListingSpec{Format: FormatJSON, ItemLinks: "products[].url"}, `{"items": [{"url": "/p/1"}]}`,
			[]string{`item_links "products[].url" yields null: the expression finds nothing on this page`}},
		// An empty page is an empty array, and a null next page is the end.
		{"items empty", ListingSpec{Format: FormatJSON, Items: "items", NextPage: "next"}, `{"items": [], "next": null}`, nil},
		{"items found", ListingSpec{Format: FormatJSON, Items: "items"}, `{"items": [{"id": 1}]}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := Spec{Listing: tt.spec, Item: ItemSpec{Format: FormatJSON}, Key: "id", Fields: fields}
			l := jsonListing(t, spec, tt.body, page)
			if got := noteTexts(t, l.Notes); !reflect.DeepEqual(got, tt.notes) {
				t.Fatalf("notes = %q, want %q", got, tt.notes)
			}
		})
	}
}

// noteTexts returns the notes' texts; each must name its key first.
func noteTexts(t *testing.T, notes []Note) []string {
	t.Helper()
	var texts []string
	for _, n := range notes {
		if !strings.HasPrefix(n.Text, n.Key+" ") {
			t.Errorf("note %q is not about its key %q", n.Text, n.Key)
		}
		texts = append(texts, n.Text)
	}
	return texts
}
