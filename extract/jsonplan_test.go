package extract

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/jmespath-community/go-jmespath"
)

// readExprs are expressions of every kind of node, for the tests of what
// an expression reads.
var readExprs = []string{
	"a", "a.b", "a.b.c", "@", "@.a", "a[0]", "a[-1].b", "a[1:3]", "a[::-1].b", "a[*]", "a[*].b", "a[]", "a[].b.c",
	"a[].b[].c", "a[?b > `1`].c", "a[?b == 'x']", "sort_by(*.b, &to_string(@))", "sort_by(a.*, &to_string(@))", "a.b | c", "a | [0]", "a.b | @", "[a, b.c]",
	"{x: a, y: b.c}", "a || b", "a && b.c", "!a", "a < b", "a.b == c.d", "a + b.c", "-a", "a * `2`",
	"length(a)", "sum(a[].b)", "max_by(a, &b)", "sort_by(a, &b)[0].c", "map(&b, a)", "sort(keys(@))", "sort_by(values(a), &to_string(@))",
	"to_string(a.b)", "join(', ', a[].b)", "merge(a, {z: b})", "not_null(a, b, `3`)", "`{\"a\": 1}`.a",
	"'lit'", "a[0][1]", "a.b[0].c[1]", "(a || b).c", "[a, b][0].c", "a.\"quoted key\"", "\"a\"[0]",
	"contains(keys(a), 'b')", "a.b.c && d.e", "data.products.pageInfo.hasNextPage && data.products.pageInfo.endCursor",
	"join('', ['/p?page=', to_string(page + `1`)])", "$.a", "let $x = a in b", "map(&$.a, b)",
}

// readDocs are documents for readExprs.
var readDocs = []string{
	`{"a": {"b": {"c": 1, "d": [1, 2]}, "e": 2}, "b": 3, "c": {"d": 3}, "d": {"e": true}}`,
	`{"a": [{"b": 1, "c": "x"}, {"b": 2, "c": "y"}, {"b": [1, {"c": 5}]}, 3, null], "b": {"c": [1, 2]}, "page": 2}`,
	`{"a": [[1, 2], [3, [4]]], "b": "s", "c": null}`,
	`{"a": "text", "b": null, "quoted key": 7, "a.b": 1}`,
	`{"a": {"quoted key": [1, 2]}, "data": {"products": {"pageInfo": {"hasNextPage": true, "endCursor": "c"}, "edges": []}}}`,
	`[1, {"a": 2}]`,
	`{"a": {"b": 1.5e300}, "b": 123456789012345678901234567890, "c": -0.0, "d": {"e": 1}}`,
	`7`,
	`null`,
}

// TestReadPaths: an expression gives the same result on a copy of the
// document that holds only the paths readPaths names as on the whole.
func TestReadPaths(t *testing.T) {
	for _, doc := range readDocs {
		checkReadPaths(t, []byte(doc))
	}
}

func FuzzReadPaths(f *testing.F) {
	for _, doc := range readDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkReadPaths(t, body) })
}

func checkReadPaths(t *testing.T, body []byte) {
	t.Helper()
	doc, err := decodeJSON(body)
	if err != nil {
		return
	}
	for _, src := range readExprs {
		e, err := compileJSON(src)
		if err != nil {
			t.Fatal(err)
		}
		if !e.readsKnown {
			continue
		}
		// A fresh copy each time: sort_by sorts its argument in place.
		want, wantErr := search(e.jp, floatNumbers(doc))
		got, gotErr := search(e.jp, floatsAt(doc, e.reads))
		if (wantErr == nil) != (gotErr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s on %s: reads %q\nwhole:  %#v (%v)\nreads:  %#v (%v)", src, body, e.reads, want, wantErr, got, gotErr)
		}
	}
}

// search is jp.Search with a panic as an error.
func search(jp jmespath.JMESPath, v any) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return jp.Search(v)
}

// TestReadPathsNamed: the paths of common expressions, and those that
// cannot be told.
func TestReadPathsNamed(t *testing.T) {
	for src, want := range map[string][][]string{
		"next":                        {{"next"}},
		"links.next":                  {{"links", "next"}},
		"a.b[0].c":                    {{"a", "b"}},
		"sum(variants[].stock)":       {{"variants"}},
		"a.b && c.d":                  {{"a", "b"}, {"c", "d"}},
		"`1`":                         nil,
		"@":                           {{}},
		"keys(@)":                     {{}},
		"sort_by(items, &price)[0].x": {{"items"}},
		"$.a":                         nil,
		"let $x = a in b":             nil,
		"map(&$.a, b)":                nil,
	} {
		e, err := compileJSON(src)
		if err != nil {
			t.Fatal(err)
		}
		known := want != nil || src == "`1`"
		if e.readsKnown != known || known && !slices.EqualFunc(e.reads, want, slices.Equal) {
			t.Errorf("%s: reads %q (known %v), want %q (known %v)", src, e.reads, e.readsKnown, want, known)
		}
	}
}

// TestPlanStream: which expressions stream, and how.
func TestPlanStream(t *testing.T) {
	for src, want := range map[string]string{
		"data.products":              "path [data products]",
		"products":                   "path [products]",
		"@":                          "path []",
		"[*]":                        "path [] project",
		"[]":                         "path [] project flatten",
		"items[*].url":               "path [items] project rhs",
		"data.products[*].url":       "path [data products] project rhs",
		"data.products[].url":        "path [data products] project flatten rhs",
		"data.products.edges[].node": "path [data products edges] project flatten rhs",
		"a.b[].merge(@, {x: `1`})":   "path [a b] project flatten rhs",
		"a[0]":                       "none",
		"a[?x]":                      "none",
		"a[].b[].c":                  "none",
		"a[*].merge($, @)":           "none",
		"a || b":                     "none",
		"a | b":                      "none",
		"*.b":                        "none",
	} {
		e, err := compileJSON(src)
		if err != nil {
			t.Fatal(err)
		}
		got := "none"
		if p := e.stream; p != nil {
			got = fmt.Sprintf("path %v", p.path)
			for _, f := range []struct {
				on   bool
				name string
			}{{p.project, "project"}, {p.flatten, "flatten"}, {p.rhs != nil, "rhs"}} {
				if f.on {
					got += " " + f.name
				}
			}
		}
		if got != want {
			t.Errorf("%s: %s, want %s", src, got, want)
		}
	}
}

// TestComputedFieldsSeeTheDocumentsOrder: sort_by sorts the array it gets
// in place, so a field that sorts must not reorder what the next field
// that computes sees: each gets its own float64 copy of what it reads.
func TestComputedFieldsSeeTheDocumentsOrder(t *testing.T) {
	x := mustCompile(t, Spec{
		Item: ItemSpec{Format: FormatJSON},
		Fields: []FieldSpec{
			{Name: "cheapest", JSON: "sort_by(variants, &price)[0].sku"},
			{Name: "first_in_stock", JSON: "variants[?stock > `0`] | [0].sku"},
		},
	})
	doc, err := x.ParseJSON([]byte(`{"variants": [{"sku": "c", "price": 3, "stock": 5}, {"sku": "a", "price": 1, "stock": 0}, {"sku": "b", "price": 2, "stock": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	items, _ := x.ItemsJSON(doc, mustURL(t, testPage))
	if len(items) != 1 || !reflect.DeepEqual(items[0].Values, []any{"a", "c"}) {
		t.Fatalf("items %+v, want the cheapest a and the first in stock c", items)
	}
}
