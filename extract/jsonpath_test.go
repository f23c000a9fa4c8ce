package extract

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestJSONExprNumbers: plain paths return numbers exactly as written;
// expressions that compare, compute or call functions see float64
// numbers, as JMESPath defines them.
func TestJSONExprNumbers(t *testing.T) {
	doc, err := decodeJSON([]byte(`{"items": [{"id": 5, "price": 12.50}, {"id": 9007199254740993, "price": 30}], "n": 0.1}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		expr    string
		numeric bool
		want    any
	}{
		{"items[0].price", false, json.Number("12.50")},
		{"items[1].id", false, json.Number("9007199254740993")},
		{"items[].price", false, []any{json.Number("12.50"), json.Number("30")}},
		{"items[0].price || `1`", false, json.Number("12.50")},
		{"items[?id == `5`].price | [0]", true, 12.5},
		{"items[?price > `20`].id | [0]", true, 9007199254740992.0},
		{"max(items[].price)", true, 30.0},
		{"sum(items[].price)", true, 42.5},
		{"-n", true, -0.1},
		{"length(items)", true, 2.0},
	} {
		e, err := compileJSON(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		var cache floatCopies
		got, err := e.search(doc, &cache)
		if err != nil || e.numeric != tt.numeric || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %#v, %v (numeric %v); want %#v (numeric %v)", tt.expr, got, err, e.numeric, tt.want, tt.numeric)
		}
		if again, _ := e.search(doc, &cache); !reflect.DeepEqual(again, got) {
			t.Errorf("%s: cached copy gives %#v, first %#v", tt.expr, again, got)
		}
	}
	// The document itself is left exact.
	if doc.(map[string]any)["n"] != json.Number("0.1") {
		t.Error("a numeric search changed the document")
	}
}

func TestJSONExprErrors(t *testing.T) {
	for _, expr := range []string{"", "  ", "a[", "a ||", "foo(", "`{bad json`"} {
		if _, err := compileJSON(expr); err == nil {
			t.Errorf("compileJSON(%q) accepted", expr)
		}
	}
	e, err := compileJSON("abs(name)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.search(map[string]any{"name": "x"}, new(floatCopies)); err == nil {
		t.Error("a function on the wrong type is no error")
	}
}
