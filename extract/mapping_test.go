package extract

import (
	"strings"
	"testing"
	"time"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		p, s string
		want bool
	}{
		{"*", "", true},
		{"*", "anything", true},
		{"only * left", "only 3 left", true},
		{"only * left", "only 3 left!", false},
		{"only * left", "only left", false},
		{"only *left", "only left", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"a?c", "aéc", true},
		{"*a*b*", "xxaxxbxx", true},
		{"*a*b*", "xxbxxaxx", false},
		{"in stock*", "in stock (3)", true},
		{"??", "é", false},
		{"", "", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := globMatch(tt.p, tt.s); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.p, tt.s, got, tt.want)
		}
	}
}

func TestMapLookupOrder(t *testing.T) {
	fs := FieldSpec{Name: "stock", Type: TypeInt64}
	mp, errs := compileMap(&fs, map[string]any{
		"Sold out":      int64(0),
		"Only * left":   int64(1),
		"Only 1 * left": int64(2),
		"*left*":        int64(3),
		"*":             int64(-1),
		"One":           "1",
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, tt := range []struct {
		text string
		want any
	}{
		{"sold OUT", int64(0)},          // exact, any case
		{"Only 1 piece left", int64(2)}, // the longest pattern first
		{"only 5 left", int64(1)},
		{"5 left in stock", int64(3)},
		{"Preorder", int64(-1)}, // "*" alone is the fallback
	} {
		to, ok := mp.lookup(tt.text)
		if !ok || to.isText || to.value != tt.want {
			t.Errorf("lookup(%q) = %+v, %v; want %v", tt.text, to, ok, tt.want)
		}
	}
	if to, ok := mp.lookup("one"); !ok || !to.isText || to.text != "1" {
		t.Errorf(`lookup("one") = %+v, %v; want the text "1"`, to, ok)
	}
}

func TestMapErrors(t *testing.T) {
	tests := []struct {
		name string
		typ  Type
		m    map[string]any
		want string // "" = valid
	}{
		{"bool values", TypeBool, map[string]any{"In stock": true, "*": false}, ""},
		{"int into float", TypeFloat64, map[string]any{"Free": int64(0)}, ""},
		{"text read as the type", TypeBool, map[string]any{"Available": "yes"}, ""},
		{"string values", TypeString, map[string]any{"N/A": ""}, ""},
		{"time value", TypeTimestamp, map[string]any{"launch": time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC)}, ""},
		{"float into int", TypeInt64, map[string]any{"x": 0.5}, `"x": 0.5 is a float, not an int64`},
		{"bool into int", TypeInt64, map[string]any{"x": true}, "is a boolean, not an int64"},
		{"number into string", TypeString, map[string]any{"x": int64(1)}, "not a string: write it in quotes"},
		{"text not of the type", TypeInt64, map[string]any{"x": "many"}, `"many" is not a valid int64`},
		{"same key in another case", TypeBool, map[string]any{"In stock": true, "in STOCK": true}, "are the same key"},
		{"same key with other spaces", TypeBool, map[string]any{"In stock": true, " In  stock ": true}, "are the same key"},
		{"empty key", TypeBool, map[string]any{" ": true}, "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := FieldSpec{Name: "f", Type: tt.typ}
			_, errs := compileMap(&fs, tt.m)
			if tt.want == "" {
				if len(errs) > 0 {
					t.Fatalf("errors %v", errs)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.want) {
				t.Fatalf("errors %v, want one containing %q", errs, tt.want)
			}
		})
	}
}
