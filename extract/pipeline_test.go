package extract

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestPipelineHTML runs the value pipeline (attr, regex, map, decimal,
// type, default) on the text of an element.
func TestPipelineHTML(t *testing.T) {
	inStock := map[string]any{"In stock": true, "Only * left": true, "*": false}
	tests := []struct {
		name   string
		field  FieldSpec
		body   string
		want   any
		reason string // substring of a Reasons entry, if any
	}{
		{"map exact, any case", FieldSpec{CSS: []string{"p"}, Type: TypeBool, Map: inStock}, `<p>IN STOCK</p>`, true, ""},
		{"map glob", FieldSpec{CSS: []string{"p"}, Type: TypeBool, Map: inStock}, `<p>Only 3 left</p>`, true, ""},
		{"map fallback", FieldSpec{CSS: []string{"p"}, Type: TypeBool, Map: inStock}, `<p>Sold out</p>`, false, ""},
		{"map after regex", FieldSpec{CSS: []string{"p"}, Type: TypeBool, Regex: `Status: (.*)`, Map: inStock}, `<p>Status: in  stock</p>`, true, ""},
		{"map leaves other text to the type", FieldSpec{CSS: []string{"td"}, Type: TypeInt64, Map: map[string]any{"Sold out": int64(0)}}, `<table><tr><td>12</td></tr></table>`, int64(12), ""},
		{"map sold out to zero", FieldSpec{CSS: []string{"td"}, Type: TypeInt64, Map: map[string]any{"Sold out": int64(0)}}, `<table><tr><td>Sold out</td></tr></table>`, int64(0), ""},
		{"map no key, no type", FieldSpec{CSS: []string{"td"}, Type: TypeInt64, Map: map[string]any{"Sold out": int64(0)}}, `<table><tr><td>Preorder</td></tr></table>`, nil, `"Preorder" is not a valid int64 and matches no map key`},
		{"map text value read as the type", FieldSpec{CSS: []string{"p"}, Type: TypeFloat64, Decimal: DecimalComma, Map: map[string]any{"free": "0,00"}}, `<p>Free</p>`, 0.0, ""},
		{"map to string", FieldSpec{CSS: []string{"p"}, Map: map[string]any{"n/a": ""}}, `<p>N/A</p>`, "", ""},
		{"map skipped when nothing found", FieldSpec{CSS: []string{"p"}, Type: TypeBool, Map: inStock}, `<p> </p>`, nil, ""},
		{"decimal comma", FieldSpec{CSS: []string{"p"}, Type: TypeFloat64, Decimal: DecimalComma}, `<p>1.234,56 €</p>`, 1234.56, ""},
		{"decimal point reads 2.137 as 2.137", FieldSpec{CSS: []string{"p"}, Type: TypeFloat64}, `<p>2.137</p>`, 2.137, ""},
		{"decimal point groups with commas", FieldSpec{CSS: []string{"p"}, Type: TypeFloat64}, `<p>$2,386.79</p>`, 2386.79, ""},
		{"unit word", FieldSpec{CSS: []string{"p"}, Type: TypeInt64}, `<p>50 pcs</p>`, int64(50), ""},
		{"currency code", FieldSpec{CSS: []string{"p"}, Type: TypeFloat64}, `<p>EUR 12</p>`, 12.0, ""},
		{"other text is a type error", FieldSpec{CSS: []string{"p"}, Type: TypeFloat64}, `<p>12 € / kg</p>`, nil, `"12 € / kg" is not a valid float64`},
		{"format", FieldSpec{CSS: []string{"p"}, Type: TypeTimestamp, Format: "2 January 2006"}, `<p>3 March 2025</p>`, time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC), ""},
		{"default when absent", FieldSpec{CSS: []string{"td.v-colour"}, Default: ""}, `<p>x</p>`, "", ""},
		{"default when empty", FieldSpec{CSS: []string{"td"}, Default: "none"}, `<table><tr><td> </td></tr></table>`, "none", ""},
		{"default when the regex misses", FieldSpec{CSS: []string{"p"}, Type: TypeInt64, Regex: `(\d+) left`, Default: int64(0)}, `<p>plenty</p>`, int64(0), ""},
		{"default typed like the field", FieldSpec{CSS: []string{"p"}, Type: TypeFloat64, Default: int64(1)}, ``, 1.0, ""},
		{"default text typed like the field", FieldSpec{CSS: []string{"p"}, Type: TypeTimestamp, Default: "2020-01-02"}, ``, time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), ""},
		{"no default on a type error", FieldSpec{CSS: []string{"p"}, Type: TypeInt64, Default: int64(0)}, `<p>many</p>`, nil, `"many" is not a valid int64`},
		{"found value, not the default", FieldSpec{CSS: []string{"p"}, Default: "x"}, `<p>y</p>`, "y", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.field.Name = "f"
			it, err := extractField(t, tt.field, tt.body)
			if err != nil {
				t.Fatalf("Item: %v", err)
			}
			if got := it.Values[0]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("value = %#v (%T), want %#v (%T)", got, got, tt.want, tt.want)
			}
			if got := strings.Join(it.Reasons, "\n"); tt.reason == "" && got != "" || !strings.Contains(got, tt.reason) {
				t.Errorf("reasons %q, want %q", it.Reasons, tt.reason)
			}
		})
	}
}

// TestPipelineJSON runs the pipeline on the values of a JSON item page:
// JSON types are kept where the field's type takes them.
func TestPipelineJSON(t *testing.T) {
	doc := `{"price": 12.50, "price_text": "12.50", "eur": "1.234,56 €", "stock": 0, "big": 9007199254740993,
		"whole": 12.0, "half": 12.5, "avail": true, "one": 1, "nothing": null, "none": [], "blank": " ",
		"nulls": [null, null], "brand": {"name": "Kessler & Voss", "id": 3}, "tags": ["a", ["b", "c"], 1, true],
		"text": "caf\u00e9 \/ bar", "status": "Only 2 left", "nested": [[1, 2]]}`
	tests := []struct {
		name   string
		field  FieldSpec
		want   any
		reason string
	}{
		{"number into float64", FieldSpec{JSON: "price", Type: TypeFloat64}, 12.5, ""},
		{"number into string as written", FieldSpec{JSON: "price"}, "12.50", ""},
		{"string into float64", FieldSpec{JSON: "price_text", Type: TypeFloat64}, 12.5, ""},
		{"string with decimal comma", FieldSpec{JSON: "eur", Type: TypeFloat64, Decimal: DecimalComma}, 1234.56, ""},
		{"number keeps its type under decimal comma", FieldSpec{JSON: "price", Type: TypeFloat64, Decimal: DecimalComma}, 12.5, ""},
		{"zero is a value", FieldSpec{JSON: "stock", Type: TypeInt64, Default: int64(-1)}, int64(0), ""},
		{"int64 exact", FieldSpec{JSON: "big", Type: TypeInt64}, int64(9007199254740993), ""},
		{"whole float into int64", FieldSpec{JSON: "whole", Type: TypeInt64}, int64(12), ""},
		{"fraction into int64", FieldSpec{JSON: "half", Type: TypeInt64}, nil, `"12.5" is not a valid int64`},
		{"bool into bool", FieldSpec{JSON: "avail", Type: TypeBool}, true, ""},
		{"bool into string", FieldSpec{JSON: "avail"}, "true", ""},
		{"number into bool", FieldSpec{JSON: "one", Type: TypeBool}, true, ""},
		{"bool into int64", FieldSpec{JSON: "avail", Type: TypeInt64}, nil, `"true" is not a valid int64`},
		{"null finds nothing", FieldSpec{JSON: "nothing", Default: "d"}, "d", ""},
		{"missing finds nothing", FieldSpec{JSON: "absent", Type: TypeInt64, Default: int64(7)}, int64(7), ""},
		{"empty array finds nothing", FieldSpec{JSON: "none", Default: "d"}, "d", ""},
		{"array of nulls finds nothing", FieldSpec{JSON: "nulls"}, nil, ""},
		{"blank string finds nothing", FieldSpec{JSON: "blank", Default: "d"}, "d", ""},
		{"object as compact JSON", FieldSpec{JSON: "brand"}, `{"id":3,"name":"Kessler & Voss"}`, ""},
		{"object not a number", FieldSpec{JSON: "brand", Type: TypeInt64}, nil, `is not a valid int64`},
		{"decoded string", FieldSpec{JSON: "text"}, "café / bar", ""},
		{"array: first value", FieldSpec{JSON: "tags"}, "a", ""},
		{"nested array as JSON", FieldSpec{JSON: "nested"}, "[1,2]", ""},
		{"regex on a number's text", FieldSpec{JSON: "price", Type: TypeInt64, Regex: `^(\d+)`}, int64(12), ""},
		{"map on JSON text", FieldSpec{JSON: "status", Type: TypeBool, Map: map[string]any{"only * left": true}}, true, ""},
		{"map on a number's text", FieldSpec{JSON: "stock", Map: map[string]any{"0": "sold out"}}, "sold out", ""},
		{"list flattens one level", FieldSpec{JSON: "tags", Multiple: true}, []string{"a", `["b","c"]`, "1", "true"}, ""},
		{"list of a scalar", FieldSpec{JSON: "price", Type: TypeFloat64, Multiple: true}, []float64{12.5}, ""},
		{"a list with an element that does not parse is NULL", FieldSpec{JSON: "tags", Type: TypeBool, Multiple: true}, nil, `"a" is not a valid bool`},
		{"empty list", FieldSpec{JSON: "none", Type: TypeInt64, Multiple: true}, []int64{}, ""},
		{"url against the page", FieldSpec{JSON: "'/x/' ", URL: true}, "https://books.example.com/x/", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.field.Name = "f"
			x := mustCompile(t, Spec{Item: ItemSpec{Format: FormatJSON}, Fields: []FieldSpec{tt.field}})
			v, err := x.ParseJSON([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			items, unusable := x.ItemsJSON(v, mustURL(t, testPage))
			if len(items) != 1 || len(unusable) != 0 {
				t.Fatalf("items %+v, unusable %+v", items, unusable)
			}
			it := items[0]
			if got := it.Values[0]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("value = %#v (%T), want %#v (%T)", got, got, tt.want, tt.want)
			}
			if got := strings.Join(it.Reasons, "\n"); tt.reason == "" && got != "" || !strings.Contains(got, tt.reason) {
				t.Errorf("reasons %q, want %q", it.Reasons, tt.reason)
			}
		})
	}
}

func TestParseJSON(t *testing.T) {
	x := mustCompile(t, Spec{Item: ItemSpec{Format: FormatJSON}, Fields: []FieldSpec{{Name: "a", JSON: "a"}}})
	for _, tt := range []struct {
		body string
		ok   bool
	}{
		{`{"a": 1}`, true},
		{"\xef\xbb\xbf{\"a\": 1}\n", true},
		{`[1, 2]`, true},
		{`"text"`, true},
		{`null`, true},
		{``, false},
		{`   `, false},
		{`{"a": 1} {"a": 2}`, false},
		{`{"a": 1};`, false},
		{`<html>`, false},
		{`{"a": }`, false},
	} {
		_, err := x.ParseJSON([]byte(tt.body))
		if (err == nil) != tt.ok {
			t.Errorf("ParseJSON(%q) error %v, want ok %v", tt.body, err, tt.ok)
		}
	}
}
