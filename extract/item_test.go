package extract

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// extractField reads one field from body on testPage.
func extractField(t *testing.T, fs FieldSpec, body string) (Item, error) {
	t.Helper()
	x := mustCompile(t, Spec{Listing: ListingSpec{ItemLinks: "a"}, Fields: []FieldSpec{fs}})
	return x.Item(mustParse(t, x, body), mustURL(t, testPage))
}

func TestItemFields(t *testing.T) {
	day := time.Date(2016, 3, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		field    FieldSpec
		body     string
		want     any
		unusable bool
		reason   string // substring of a Reasons entry, if any
	}{
		// text and whitespace
		{"text", FieldSpec{CSS: []string{"h1"}}, `<h1>Title</h1>`, "Title", false, ""},
		{"whitespace", FieldSpec{CSS: []string{"h1"}}, "<h1>\n\tA\u00a0 Light&nbsp;&nbsp;in\t the\n Attic  </h1>", "A Light in the Attic", false, ""},
		{"nested text", FieldSpec{CSS: []string{"p"}}, `<p> In <b>stock</b>  (22 <i>available</i>) </p>`, "In stock (22 available)", false, ""},
		{"group selector first in document order", FieldSpec{CSS: []string{"h2, h1"}}, `<h1>one</h1><h2>two</h2>`, "one", false, ""},
		{"first non-empty wins", FieldSpec{CSS: []string{"p"}}, `<p> </p><p>&nbsp;</p><p>second</p><p>third</p>`, "second", false, ""},
		{"optional absent", FieldSpec{CSS: []string{"h2"}}, `<h1>x</h1>`, nil, false, ""},
		{"optional empty", FieldSpec{CSS: []string{"h1"}}, `<h1> </h1>`, nil, false, ""},
		{"required absent", FieldSpec{CSS: []string{"h2"}, Required: true}, `<h1>x</h1>`, nil, true, `no element matches "h2"`},
		{"required empty", FieldSpec{CSS: []string{"h1"}, Required: true}, "<h1>\u00a0\t</h1>", nil, true, "no text"},
		// attributes
		{"attr", FieldSpec{CSS: []string{"img"}, Attr: "alt"}, `<img alt="  A  cover ">`, "A cover", false, ""},
		{"attr case-insensitive", FieldSpec{CSS: []string{"img"}, Attr: "ALT"}, `<img ALT="x">`, "x", false, ""},
		{"attr missing on first", FieldSpec{CSS: []string{"img"}, Attr: "alt"}, `<img src="a"><img alt="b">`, "b", false, ""},
		{"attr missing required", FieldSpec{CSS: []string{"img"}, Attr: "alt", Required: true}, `<img src="a">`, nil, true, `no "alt" attribute`},
		// regex
		{"regex whole match", FieldSpec{CSS: []string{"p"}, Regex: `\d+`}, `<p>In stock (22 available)</p>`, "22", false, ""},
		{"regex group", FieldSpec{CSS: []string{"p"}, Regex: `\((\d+) available\)`}, `<p>In stock (22 available)</p>`, "22", false, ""},
		{"regex group trimmed", FieldSpec{CSS: []string{"p"}, Regex: `:(.*)$`}, `<p>Name:   Bob </p>`, "Bob", false, ""},
		{"regex sees normalised text", FieldSpec{CSS: []string{"p"}, Regex: `a b`}, "<p>a\u00a0\n b</p>", "a b", false, ""},
		{"regex no match optional", FieldSpec{CSS: []string{"p"}, Regex: `\d+`}, `<p>none</p>`, nil, false, ""},
		{"regex no match required", FieldSpec{CSS: []string{"p"}, Regex: `\d+`, Required: true}, `<p>none</p>`, nil, true, "does not match"},
		{"regex unmatched group", FieldSpec{CSS: []string{"p"}, Regex: `(\d+)?x`}, `<p>x</p>`, nil, false, ""},
		{"regex next element", FieldSpec{CSS: []string{"p"}, Regex: `\d+`}, `<p>none</p><p>n 7</p>`, "7", false, ""},
		// URLs
		{"url relative", FieldSpec{CSS: []string{"img"}, Attr: "src", URL: true}, `<img src="../../media/x.jpg">`, "https://books.example.com/media/x.jpg", false, ""},
		{"url absolute", FieldSpec{CSS: []string{"a"}, Attr: "href", URL: true}, `<a href="http://other.example/y">`, "http://other.example/y", false, ""},
		{"url protocol-relative", FieldSpec{CSS: []string{"a"}, Attr: "href", URL: true}, `<a href="//cdn.example/x">`, "https://cdn.example/x", false, ""},
		{"url keeps fragment", FieldSpec{CSS: []string{"a"}, Attr: "href", URL: true}, `<a href="p#f">`, "https://books.example.com/catalogue/a-light/p#f", false, ""},
		{"url base href", FieldSpec{CSS: []string{"img"}, Attr: "src", URL: true}, `<head><base href="https://cdn.example.org/static/"></head><img src="x.jpg">`, "https://cdn.example.org/static/x.jpg", false, ""},
		{"url relative base href", FieldSpec{CSS: []string{"img"}, Attr: "src", URL: true}, `<base href="/other/"><img src="x.jpg">`, "https://books.example.com/other/x.jpg", false, ""},
		{"url from text", FieldSpec{CSS: []string{"p"}, URL: true}, `<p> /path/x </p>`, "https://books.example.com/path/x", false, ""},
		{"url unparsable", FieldSpec{CSS: []string{"p"}, URL: true}, `<p>http://[::1</p>`, nil, false, "not a valid URL"},
		// int64
		{"int", FieldSpec{CSS: []string{"td"}, Type: TypeInt64}, `<table><tr><td>1,234</td></tr></table>`, int64(1234), false, ""},
		{"int negative spaced", FieldSpec{CSS: []string{"td"}, Type: TypeInt64}, "<table><tr><td>-1\u00a0234</td></tr></table>", int64(-1234), false, ""},
		{"int bad optional", FieldSpec{CSS: []string{"td"}, Type: TypeInt64}, `<table><tr><td>12 red apples</td></tr></table>`, nil, false, `"12 red apples" is not a valid int64`},
		{"int bad required", FieldSpec{CSS: []string{"td"}, Type: TypeInt64, Required: true}, `<table><tr><td>1.5</td></tr></table>`, nil, true, `"1.5" is not a valid int64`},
		{"int first parsable wins", FieldSpec{CSS: []string{"td"}, Type: TypeInt64}, `<table><tr><td>n/a</td><td>5</td></tr></table>`, int64(5), false, ""},
		// float64
		{"float", FieldSpec{CSS: []string{"p"}, Type: TypeFloat64, Regex: `[\d.,]+`}, `<p>£1,234.50</p>`, 1234.5, false, ""},
		{"float bad", FieldSpec{CSS: []string{"p"}, Type: TypeFloat64}, `<p>NaN</p>`, nil, false, "not a valid float64"},
		// bool
		{"bool yes", FieldSpec{CSS: []string{"p"}, Type: TypeBool}, `<p> Yes </p>`, true, false, ""},
		{"bool off", FieldSpec{CSS: []string{"p"}, Type: TypeBool}, `<p>OFF</p>`, false, false, ""},
		{"bool attr", FieldSpec{CSS: []string{"input"}, Type: TypeBool, Attr: "value"}, `<input value="1">`, true, false, ""},
		{"bool bad", FieldSpec{CSS: []string{"p"}, Type: TypeBool, Required: true}, `<p>maybe</p>`, nil, true, "not a valid bool"},
		// timestamp
		{"time attr", FieldSpec{CSS: []string{"time"}, Type: TypeTimestamp, Attr: "datetime"}, `<time datetime="2016-03-01T02:00:00+02:00">`, day, false, ""},
		{"time date", FieldSpec{CSS: []string{"time"}, Type: TypeTimestamp}, `<time> 2016-03-01 </time>`, day, false, ""},
		{"time format", FieldSpec{CSS: []string{"time"}, Type: TypeTimestamp, Format: "2 January 2006"}, `<time>1 March 2016</time>`, day, false, ""},
		{"time format mismatch", FieldSpec{CSS: []string{"time"}, Type: TypeTimestamp, Format: "2 January 2006"}, `<time>2016-03-01</time>`, nil, false, `timestamp in format "2 January 2006"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.field.Name = "f"
			it, err := extractField(t, tt.field, tt.body)
			var ue *UnusableError
			if tt.unusable {
				if !errors.As(err, &ue) || !reflect.DeepEqual(ue.Missing, []string{"f"}) {
					t.Fatalf("err = %v; want unusable, missing f", err)
				}
			} else if err != nil {
				t.Fatalf("Item: %v", err)
			}
			if len(it.Values) != 1 {
				t.Fatalf("Values = %#v", it.Values)
			}
			if got := it.Values[0]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("value = %#v (%T), want %#v (%T)", got, got, tt.want, tt.want)
			}
			if tt.reason != "" && !strings.Contains(strings.Join(it.Reasons, "\n"), tt.reason) {
				t.Errorf("reasons %q lack %q", it.Reasons, tt.reason)
			}
			if tt.reason == "" && it.Reasons != nil {
				t.Errorf("unexpected reasons %q", it.Reasons)
			}
			if ue != nil && !reflect.DeepEqual(ue.Reasons, it.Reasons) {
				t.Errorf("error reasons %q, item reasons %q", ue.Reasons, it.Reasons)
			}
		})
	}
}
