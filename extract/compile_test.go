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
	title := FieldSpec{Name: "title", CSS: "h1"}
	tests := []struct {
		name string
		spec Spec
		want []problem // nil: valid
	}{
		{"minimal", Spec{Listing: links}, nil},
		{"cards without item links", Spec{Listing: ListingSpec{Items: "article"}, Fields: []FieldSpec{title}}, nil},
		{"no item links", Spec{Listing: ListingSpec{NextPage: "li.next a"}}, []problem{{"listing.item_links", "css"}}},
		{"bad item links", Spec{Listing: ListingSpec{ItemLinks: "a["}}, []problem{{"listing.item_links", "css"}}},
		{"bad next page", Spec{Listing: ListingSpec{ItemLinks: "a", NextPage: "li >"}}, []problem{{"listing.next_page", "css"}}},
		{"bad items", Spec{Listing: ListingSpec{ItemLinks: "a", Items: "div:nope"}}, []problem{{"listing.items", "css"}}},
		{"group selector", one(FieldSpec{Name: "t", CSS: "h1, h2 > span"}), nil},
		{"empty name", one(FieldSpec{CSS: "h1"}), []problem{{"item.fields[0]", "name"}}},
		{"upper-case name", one(FieldSpec{Name: "Title", CSS: "h1"}), []problem{{"item.fields.Title", "name"}}},
		{"digit first", one(FieldSpec{Name: "1st", CSS: "h1"}), []problem{{"item.fields.1st", "name"}}},
		{"dash in name", one(FieldSpec{Name: "a-b", CSS: "h1"}), []problem{{"item.fields.a-b", "name"}}},
		{"reserved name", one(FieldSpec{Name: "_url", CSS: "h1"}), []problem{{"item.fields._url", "name"}}},
		{"digits later ok", one(FieldSpec{Name: "price_2", CSS: "h1"}), nil},
		{"duplicate name", Spec{Listing: links, Fields: []FieldSpec{title, title}}, []problem{{"item.fields.title", "name"}}},
		{"no css", one(FieldSpec{Name: "title"}), []problem{{"item.fields.title", "css"}}},
		{"bad css", one(FieldSpec{Name: "title", CSS: "h1 >> p"}), []problem{{"item.fields.title", "css"}}},
		{"unknown type", one(FieldSpec{Name: "n", CSS: "p", Type: "integer"}), []problem{{"item.fields.n", "type"}}},
		{"bad regex", one(FieldSpec{Name: "price", CSS: "p", Regex: "("}), []problem{{"item.fields.price", "regex"}}},
		{"two groups", one(FieldSpec{Name: "price", CSS: "p", Regex: `(\d+)\.(\d+)`}), []problem{{"item.fields.price", "regex"}}},
		{"non-capturing group ok", one(FieldSpec{Name: "price", CSS: "p", Regex: `(?:£|\$)(\d+)`}), nil},
		{"url on int", one(FieldSpec{Name: "n", CSS: "a", Type: TypeInt64, URL: true}), []problem{{"item.fields.n", "url"}}},
		{"url on default type ok", one(FieldSpec{Name: "u", CSS: "a", Attr: "href", URL: true}), nil},
		{"format on string", one(FieldSpec{Name: "d", CSS: "time", Format: "2006"}), []problem{{"item.fields.d", "format"}}},
		{"format on timestamp ok", one(FieldSpec{Name: "d", CSS: "time", Type: TypeTimestamp, Format: "2006"}), nil},
		{"unknown key", Spec{Listing: links, Fields: []FieldSpec{title}, Key: "upc"}, []problem{{"item", "key"}}},
		{"multiple key", Spec{Listing: links, Fields: []FieldSpec{{Name: "tags", CSS: "li", Multiple: true}}, Key: "tags"}, []problem{{"item", "key"}}},
		{"all at once", Spec{
			Fields: []FieldSpec{
				{Name: "_x", CSS: "", Type: "nope", Regex: "(a)(b)", URL: true, Format: "2006"},
			},
			Key: "missing",
		}, []problem{
			{"listing.item_links", "css"},
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
	_, err := Compile(Spec{Listing: ListingSpec{ItemLinks: "a"}, Fields: []FieldSpec{{Name: "price", CSS: "p", Regex: "("}}})
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
		Fields:  []FieldSpec{{Name: "a", CSS: "p"}, {Name: "b", CSS: "p", Type: TypeInt64}},
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
