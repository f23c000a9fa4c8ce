package extract

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

type problem struct{ Field, Key string }

func TestCompileErrors(t *testing.T) {
	links := ListingSpec{ItemLinks: "h3 a"}
	one := func(fs FieldSpec) Spec { return Spec{Listing: links, Fields: []FieldSpec{fs}} }
	title := FieldSpec{Name: "title", CSS: []string{"h1"}}
	tests := []struct {
		name string
		spec Spec
		want []problem // nil: valid
	}{
		{"minimal", Spec{Listing: links}, nil},
		{"cards without item links", Spec{Listing: ListingSpec{Items: "article"}, Fields: []FieldSpec{title}}, nil},
		{"no item links: items come from elsewhere", Spec{Listing: ListingSpec{NextPage: "li.next a"}}, nil},
		{"bad item links", Spec{Listing: ListingSpec{ItemLinks: "a["}}, []problem{{"listing", "item_links"}}},
		{"bad next page", Spec{Listing: ListingSpec{ItemLinks: "a", NextPage: "li >"}}, []problem{{"listing", "next_page"}}},
		{"bad items", Spec{Listing: ListingSpec{ItemLinks: "a", Items: "div:nope"}}, []problem{{"listing", "items"}}},
		{"group selector", one(FieldSpec{Name: "t", CSS: []string{"h1, h2 > span"}}), nil},
		{"empty name", one(FieldSpec{CSS: []string{"h1"}}), []problem{{"item.fields[0]", "name"}}},
		{"upper-case name", one(FieldSpec{Name: "Title", CSS: []string{"h1"}}), []problem{{"item.fields.Title", "name"}}},
		{"digit first", one(FieldSpec{Name: "1st", CSS: []string{"h1"}}), []problem{{"item.fields.1st", "name"}}},
		{"dash in name", one(FieldSpec{Name: "a-b", CSS: []string{"h1"}}), []problem{{"item.fields.a-b", "name"}}},
		{"reserved name", one(FieldSpec{Name: "_url", CSS: []string{"h1"}}), []problem{{"item.fields._url", "name"}}},
		{"digits later ok", one(FieldSpec{Name: "price_2", CSS: []string{"h1"}}), nil},
		{"duplicate name", Spec{Listing: links, Fields: []FieldSpec{title, title}}, []problem{{"item.fields.title", "name"}}},
		{"no css", one(FieldSpec{Name: "title"}), []problem{{"item.fields.title", "css"}}},
		{"bad css", one(FieldSpec{Name: "title", CSS: []string{"h1 >> p"}}), []problem{{"item.fields.title", "css"}}},
		{"unknown type", one(FieldSpec{Name: "n", CSS: []string{"p"}, Type: "integer"}), []problem{{"item.fields.n", "type"}}},
		{"bad regex", one(FieldSpec{Name: "price", CSS: []string{"p"}, Regex: "("}), []problem{{"item.fields.price", "regex"}}},
		{"two groups", one(FieldSpec{Name: "price", CSS: []string{"p"}, Regex: `(\d+)\.(\d+)`}), []problem{{"item.fields.price", "regex"}}},
		{"non-capturing group ok", one(FieldSpec{Name: "price", CSS: []string{"p"}, Regex: `(?:£|\$)(\d+)`}), nil},
		{"url on int", one(FieldSpec{Name: "n", CSS: []string{"a"}, Type: TypeInt64, URL: true}), []problem{{"item.fields.n", "url"}}},
		{"url on default type ok", one(FieldSpec{Name: "u", CSS: []string{"a"}, Attr: "href", URL: true}), nil},
		{"format on string", one(FieldSpec{Name: "d", CSS: []string{"time"}, Format: "2006"}), []problem{{"item.fields.d", "format"}}},
		{"format on timestamp ok", one(FieldSpec{Name: "d", CSS: []string{"time"}, Type: TypeTimestamp, Format: "2006"}), nil},
		{"unknown key", Spec{Listing: links, Fields: []FieldSpec{title}, Key: "upc"}, []problem{{"item", "key"}}},
		{"multiple key", Spec{Listing: links, Fields: []FieldSpec{{Name: "tags", CSS: []string{"li"}, Multiple: true}}, Key: "tags"}, []problem{{"item", "key"}}},
		{"all at once", Spec{
			Fields: []FieldSpec{
				{Name: "_x", CSS: []string{""}, Type: "nope", Regex: "(a)(b)", URL: true, Format: "2006"},
			},
			Key: "missing",
		}, []problem{
			{"item.fields._x", "name"},
			{"item.fields._x", "css"},
			{"item.fields._x", "type"},
			{"item.fields._x", "regex"},
			{"item.fields._x", "url"},
			{"item.fields._x", "format"},
			{"item", "key"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := Compile(tt.spec)
			if tt.want == nil {
				if err != nil || x == nil {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			if err == nil || x != nil {
				t.Fatalf("Compile = %v, %v; want errors %v", x, err, tt.want)
			}
			var got []problem
			for _, se := range SpecErrors(err) {
				got = append(got, problem{se.Field, se.Key})
				if se.Err == nil || !strings.HasPrefix(se.Error(), se.Field+": "+se.Key+": ") {
					t.Errorf("malformed SpecError %q", se.Error())
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems = %v, want %v\n%v", got, tt.want, err)
			}
			var se *SpecError
			if !errors.As(err, &se) || se.Field != tt.want[0].Field {
				t.Errorf("errors.As found %v, want the first problem %v", se, tt.want[0])
			}
		})
	}
}

func TestSpecErrorMessage(t *testing.T) {
	_, err := Compile(Spec{Listing: ListingSpec{ItemLinks: "a"}, Fields: []FieldSpec{{Name: "price", CSS: []string{"p"}, Regex: "("}}})
	want := "item.fields.price: regex: error parsing regexp: missing closing ): `(`"
	if err == nil || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	ses := SpecErrors(err)
	if len(ses) != 1 || errors.Unwrap(ses[0]) == nil || errors.Unwrap(ses[0]) != ses[0].Err {
		t.Fatalf("SpecErrors = %v; want one error wrapping the regexp error", ses)
	}
	if SpecErrors(nil) != nil || SpecErrors(errors.New("x")) != nil {
		t.Error("SpecErrors of non-spec errors should be nil")
	}
	if got := SpecErrors(ses[0]); len(got) != 1 {
		t.Errorf("SpecErrors(single) = %v", got)
	}
}

func TestSpecDefaults(t *testing.T) {
	spec := Spec{
		Listing: ListingSpec{ItemLinks: "a"},
		Fields:  []FieldSpec{{Name: "a", CSS: []string{"p"}}, {Name: "b", CSS: []string{"p"}, Type: TypeInt64}},
		Key:     "a",
	}
	x := mustCompile(t, spec)
	got := x.Spec()
	if got.Fields[0].Type != TypeString || got.Fields[1].Type != TypeInt64 {
		t.Errorf("types = %q, %q; want string, int64", got.Fields[0].Type, got.Fields[1].Type)
	}
	if spec.Fields[0].Type != "" {
		t.Error("Compile modified the caller's spec")
	}
	if got.Key != "a" || got.Listing != spec.Listing {
		t.Errorf("Spec() = %+v", got)
	}
	// The key field is required even though the spec does not say so.
	if !x.fields[0].required || got.Fields[0].Required {
		t.Error("key field must be treated as required without rewriting the spec")
	}
	got.Fields[0].Name = "changed"
	x.Fields()[1].Name = "changed"
	if f := x.Fields(); f[0].Name != "a" || f[1].Name != "b" {
		t.Error("Spec/Fields return aliased slices")
	}
}

// TestCompileErrorsSources covers the keys of sources, formats, rows and
// the value pipeline.
func TestCompileErrorsSources(t *testing.T) {
	one := func(fs FieldSpec) Spec { fs.Name = "f"; return Spec{Fields: []FieldSpec{fs}} }
	jsonItems := func(fs FieldSpec) Spec { s := one(fs); s.Item.Format = FormatJSON; return s }
	jsonCards := func(fs FieldSpec) Spec {
		s := one(fs)
		s.Listing = ListingSpec{Format: FormatJSON, Items: "items"}
		return s
	}
	f := "item.fields.f"
	tests := []struct {
		name string
		spec Spec
		want []problem
	}{
		{"css list", one(FieldSpec{CSS: []string{"h1", "h2"}}), nil},
		{"empty selector in a list", one(FieldSpec{CSS: []string{"h1", " "}}), []problem{{f, "css"}}},
		{"bad selector in a list", one(FieldSpec{CSS: []string{"h1", "h2["}}), []problem{{f, "css"}}},
		{"no source on json pages", jsonItems(FieldSpec{}), []problem{{f, "json"}}},
		{"jsonld with json", one(FieldSpec{JSONLD: "Product", JSON: "name"}), nil},
		{"jsonld without json", one(FieldSpec{JSONLD: "Product"}), []problem{{f, "json"}}},
		{"jsonld and css", one(FieldSpec{JSONLD: "Product", JSON: "name", CSS: []string{"h1"}}), []problem{{f, "jsonld"}}},
		{"css with json", one(FieldSpec{CSS: []string{"script#data"}, JSON: "a.b"}), nil},
		{"json alone on html", one(FieldSpec{JSON: "name"}), []problem{{f, "json"}}},
		{"json alone on json pages", jsonItems(FieldSpec{JSON: "name"}), nil},
		{"json alone on json cards", jsonCards(FieldSpec{JSON: "name"}), nil},
		{"css on json pages", jsonItems(FieldSpec{CSS: []string{"h1"}}), []problem{{f, "css"}}},
		{"jsonld on json cards", jsonCards(FieldSpec{JSONLD: "Product", JSON: "name"}), []problem{{f, "jsonld"}}},
		{"bad json", jsonItems(FieldSpec{JSON: "a[?"}), []problem{{f, "json"}}},
		{"empty json with jsonld", one(FieldSpec{JSONLD: "Product", JSON: " "}), []problem{{f, "json"}}},
		{"attr without css", one(FieldSpec{JSONLD: "Product", JSON: "name", Attr: "href"}), []problem{{f, "attr"}}},
		{"decimal comma", one(FieldSpec{CSS: []string{"p"}, Type: TypeFloat64, Decimal: ","}), nil},
		{"bad decimal", one(FieldSpec{CSS: []string{"p"}, Type: TypeFloat64, Decimal: ";"}), []problem{{f, "decimal"}}},
		{"decimal on a string", one(FieldSpec{CSS: []string{"p"}, Decimal: ","}), []problem{{f, "decimal"}}},
		{"scope page", one(FieldSpec{CSS: []string{"p"}, Scope: "page"}), nil},
		{"bad scope", one(FieldSpec{CSS: []string{"p"}, Scope: "card"}), []problem{{f, "scope"}}},
		{"bad map value", one(FieldSpec{CSS: []string{"p"}, Type: TypeBool, Map: map[string]any{"a": true, "b": int64(1)}}), []problem{{f, "map"}}},
		{"default", one(FieldSpec{CSS: []string{"p"}, Type: TypeInt64, Default: int64(0)}), nil},
		{"default empty string", one(FieldSpec{CSS: []string{"p"}, Default: ""}), nil},
		{"default with required", one(FieldSpec{CSS: []string{"p"}, Default: "x", Required: true}), []problem{{f, "default"}}},
		{"default with multiple", one(FieldSpec{CSS: []string{"p"}, Default: "x", Multiple: true}), []problem{{f, "default"}}},
		{"default of another type", one(FieldSpec{CSS: []string{"p"}, Type: TypeInt64, Default: "many"}), []problem{{f, "default"}}},
		{"default on the key field", Spec{Key: "f", Fields: []FieldSpec{{Name: "f", CSS: []string{"p"}, Default: "x"}}}, []problem{{f, "default"}}},
		{"bad listing format", Spec{Listing: ListingSpec{Format: "xml"}, Fields: []FieldSpec{{Name: "f", CSS: []string{"p"}}}}, []problem{{"listing", "format"}}},
		{"bad item format", Spec{Item: ItemSpec{Format: "HTML"}, Fields: []FieldSpec{{Name: "f", CSS: []string{"p"}}}}, []problem{{"item", "format"}}},
		{"json listing", Spec{Listing: ListingSpec{Format: FormatJSON, ItemLinks: "items[].url", NextPage: "next"}, Fields: []FieldSpec{{Name: "f", CSS: []string{"p"}}}}, nil},
		{"bad json listing", Spec{Listing: ListingSpec{Format: FormatJSON, ItemLinks: "items[", NextPage: "next ||"}, Fields: []FieldSpec{{Name: "f", CSS: []string{"p"}}}},
			[]problem{{"listing", "item_links"}, {"listing", "next_page"}}},
		{"next page attr", Spec{Listing: ListingSpec{NextPage: "#grid", NextPageAttr: "data-next-api"}}, nil},
		{"next page attr without css", Spec{Listing: ListingSpec{NextPageAttr: "data-next-api"}}, []problem{{"listing.next_page", "attr"}}},
		{"next page attr on json", Spec{Listing: ListingSpec{Format: FormatJSON, NextPage: "next", NextPageAttr: "href"}}, []problem{{"listing.next_page", "attr"}}},
		{"rows", Spec{Item: ItemSpec{Rows: "tr.variant"}, Key: "f", Fields: []FieldSpec{{Name: "f", CSS: []string{"td"}}}}, nil},
		{"rows without a key", Spec{Item: ItemSpec{Rows: "tr.variant"}, Fields: []FieldSpec{{Name: "f", CSS: []string{"td"}}}}, []problem{{"item", "rows"}}},
		{"bad rows", Spec{Item: ItemSpec{Rows: "tr["}, Key: "f", Fields: []FieldSpec{{Name: "f", CSS: []string{"td"}}}}, []problem{{"item", "rows"}}},
		{"json rows", Spec{Item: ItemSpec{Format: FormatJSON, Rows: "variants[?"}, Key: "f", Fields: []FieldSpec{{Name: "f", JSON: "sku"}}}, []problem{{"item", "rows"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(tt.spec)
			var got []problem
			for _, se := range SpecErrors(err) {
				got = append(got, problem{se.Field, se.Key})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems = %v, want %v\n%v", got, tt.want, err)
			}
		})
	}
}

func TestSpecErrorMessages(t *testing.T) {
	for _, tt := range []struct {
		fs   FieldSpec
		want string
	}{
		{FieldSpec{Name: "price", CSS: []string{"p"}, Type: TypeFloat64, Decimal: ";"}, `item.fields.price: decimal: must be "." or ","`},
		{FieldSpec{Name: "stock", CSS: []string{"p"}, Type: TypeInt64, Map: map[string]any{"Sold out": 0.5}}, `item.fields.stock: map: "Sold out": 0.5 is a float, not an int64`},
		{FieldSpec{Name: "n", CSS: []string{":scope > td"}}, `item.fields.n: css: ":scope > td": only ":scope" alone, ":scope.class" or ":scope descendant" is supported`},
	} {
		_, err := Compile(Spec{Fields: []FieldSpec{tt.fs}})
		if err == nil || err.Error() != tt.want {
			t.Errorf("error %q, want %q", err, tt.want)
		}
	}
}
