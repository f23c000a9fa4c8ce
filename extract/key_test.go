package extract

import (
	"errors"
	"reflect"
	"testing"
)

func TestItemKey(t *testing.T) {
	body := `<h1>T</h1><p class="n">1,234</p><p class="f">12.50</p><p class="b">yes</p><time>2016-03-01T10:20:30.5+01:00</time>`
	tests := []struct {
		name  string
		key   string
		field FieldSpec
		want  string
	}{
		{"url key", "", FieldSpec{Name: "k", CSS: []string{"h1"}}, testPage},
		{"string key", "k", FieldSpec{Name: "k", CSS: []string{"h1"}}, "T"},
		{"int key", "k", FieldSpec{Name: "k", CSS: []string{"p.n"}, Type: TypeInt64}, "1234"},
		{"float key", "k", FieldSpec{Name: "k", CSS: []string{"p.f"}, Type: TypeFloat64}, "12.5"},
		{"bool key", "k", FieldSpec{Name: "k", CSS: []string{"p.b"}, Type: TypeBool}, "true"},
		{"time key", "k", FieldSpec{Name: "k", CSS: []string{"time"}, Type: TypeTimestamp}, "2016-03-01T09:20:30.5Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := mustCompile(t, Spec{Listing: ListingSpec{ItemLinks: "a"}, Fields: []FieldSpec{tt.field}, Key: tt.key})
			it, err := x.Item(mustParse(t, x, body), mustURL(t, testPage))
			if err != nil {
				t.Fatal(err)
			}
			if it.Key != tt.want || it.URL != testPage {
				t.Errorf("Key, URL = %q, %q; want %q, %q", it.Key, it.URL, tt.want, testPage)
			}
		})
	}
}

func TestKeyFieldForcedRequired(t *testing.T) {
	x := mustCompile(t, Spec{
		Listing: ListingSpec{ItemLinks: "a"},
		Fields: []FieldSpec{
			{Name: "title", CSS: []string{"h1"}},
			{Name: "upc", CSS: []string{"td.upc"}}, // not Required, but the key
		},
		Key: "upc",
	})
	it, err := x.Item(mustParse(t, x, `<h1>T</h1>`), mustURL(t, testPage))
	var ue *UnusableError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v; want *UnusableError", err)
	}
	if !reflect.DeepEqual(ue.Missing, []string{"upc"}) || ue.URL != testPage {
		t.Errorf("UnusableError = %+v", ue)
	}
	if it.Key != "" || it.Values[0] != "T" {
		t.Errorf("partial item = %+v", it)
	}
}

func TestUnusableError(t *testing.T) {
	x := mustCompile(t, bookSpec())
	_, err := x.Item(mustParse(t, x, `<html><body><div class="product_main"><h1>T</h1></div></body></html>`), mustURL(t, testPage))
	var ue *UnusableError
	if !errors.As(err, &ue) || !IsUnusable(err) {
		t.Fatalf("err = %v; want *UnusableError", err)
	}
	if want := []string{"price", "upc"}; !reflect.DeepEqual(ue.Missing, want) {
		t.Errorf("Missing = %q, want %q", ue.Missing, want)
	}
	if len(ue.Reasons) != 2 {
		t.Errorf("Reasons = %q, want one per missing field", ue.Reasons)
	}
	msg := (&UnusableError{Missing: []string{"price", "upc"}}).Error()
	if msg != "unusable page: missing required fields price, upc" {
		t.Errorf("Error() = %q", msg)
	}
	if msg := (&UnusableError{Missing: []string{"price"}, Reasons: []string{"r"}}).Error(); msg != "unusable page: missing required field price (r)" {
		t.Errorf("Error() = %q", msg)
	}
	if IsUnusable(errors.New("x")) {
		t.Error("IsUnusable of a plain error")
	}
}

func TestItemNilInputs(t *testing.T) {
	x := mustCompile(t, bookSpec())
	if _, err := x.Item(nil, nil); err == nil || IsUnusable(err) {
		t.Errorf("Item(nil) err = %v", err)
	}
	it, err := x.Item(mustParse(t, x, string(fixture(t, "book.html"))), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Without a page URL relative URLs stay relative.
	if it.URL != "" || it.Values[5] != "../../media/cache/fe/72/fe72f0532301ec28892ae79a629a293c.jpg" {
		t.Errorf("item without page URL = %+v", it)
	}
	if l := x.Listing(nil, nil); !reflect.DeepEqual(l, Listing{}) {
		t.Errorf("Listing(nil) = %+v", l)
	}
}
