package sink

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/extract"
)

func TestDecodeValues(t *testing.T) {
	s := NewSchema([]Column{
		{Name: "s", Type: extract.TypeString},
		{Name: "i", Type: extract.TypeInt64},
		{Name: "f", Type: extract.TypeFloat64},
		{Name: "b", Type: extract.TypeBool},
		{Name: "t", Type: extract.TypeTimestamp},
		{Name: "ls", Type: extract.TypeString, List: true},
		{Name: "li", Type: extract.TypeInt64, List: true},
		{Name: "lf", Type: extract.TypeFloat64, List: true},
		{Name: "lb", Type: extract.TypeBool, List: true},
		{Name: "lt", Type: extract.TypeTimestamp, List: true},
	})
	ts := time.Date(2026, 3, 4, 5, 6, 7, 891234567, time.UTC)
	tests := []struct {
		name string
		raw  string
		want []any
	}{
		{"values", `["héllo 世界", 42, 1.5, true, "2026-03-04T07:06:07.891234567+02:00", ["a",""], [1,-2], [0.25], [false,true], ["2026-03-04T05:06:07.891234567Z"]]`,
			[]any{"héllo 世界", int64(42), 1.5, true, ts, []string{"a", ""}, []int64{1, -2}, []float64{0.25}, []bool{false, true}, []time.Time{ts}}},
		{"nulls", `[null,null,null,null,null,null,null,null,null,null]`,
			make([]any, 10)},
		{"empty lists", ` [ "", 0, 0, false, "1970-01-01T00:00:00Z", [], [], [], [], [] ] `,
			[]any{"", int64(0), 0.0, false, time.Unix(0, 0).UTC(), []string{}, []int64{}, []float64{}, []bool{}, []time.Time{}}},
		{"int64 beyond 2^53", `["", 9007199254740993, 1e300, true, "2026-03-04T05:06:07.891234567Z", [], [9223372036854775807, -9223372036854775808], [5e-324], [], []]`,
			[]any{"", int64(1<<53 + 1), 1e300, true, ts, []string{}, []int64{math.MaxInt64, math.MinInt64}, []float64{5e-324}, []bool{}, []time.Time{}}},
		{"integral float", `["", -0, 3, false, "2026-03-04T05:06:07.891234567Z", [], [], [1, 2e2], [], []]`,
			[]any{"", int64(0), 3.0, false, ts, []string{}, []int64{}, []float64{1, 200}, []bool{}, []time.Time{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeValues(s, []byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DecodeValues = %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestDecodeValuesErrors(t *testing.T) {
	s := NewSchema([]Column{
		{Name: "n", Type: extract.TypeInt64},
		{Name: "f", Type: extract.TypeFloat64},
		{Name: "t", Type: extract.TypeTimestamp},
		{Name: "l", Type: extract.TypeString, List: true},
	})
	tests := []struct{ name, raw, errHas string }{
		{"empty", ``, "decode values"},
		{"null", `null`, "null"},
		{"object", `{"n":1}`, "decode values"},
		{"short", `[1, 2.5, "2026-01-01T00:00:00Z"]`, "3 values for 4 columns"},
		{"long", `[1, 2.5, "2026-01-01T00:00:00Z", [], 5]`, "5 values for 4 columns"},
		{"empty array", `[]`, "0 values for 4 columns"},
		{"fraction for int64", `[1.5, 2.5, null, []]`, `"n"`},
		{"exponent for int64", `[1e3, 2.5, null, []]`, `"n"`},
		{"int64 overflow", `[9223372036854775808, 2.5, null, []]`, "out of range"},
		{"string for int64", `["1", 2.5, null, []]`, "JSON string is not a int64"},
		{"float overflow", `[1, 1e400, null, []]`, "out of range"},
		{"bool for float", `[1, true, null, []]`, "JSON bool"},
		{"bad time", `[1, 2.5, "yesterday", []]`, `"t"`},
		{"number for time", `[1, 2.5, 1700000000, []]`, "JSON number"},
		{"scalar for list", `[1, 2.5, null, "a"]`, "not a JSON array"},
		{"null element", `[1, 2.5, null, ["a", null]]`, "element 1 is null"},
		{"wrong element", `[1, 2.5, null, ["a", 2]]`, "element 1"},
		{"trailing data", `[1, 2.5, null, []] [2]`, "after the array"},
		{"truncated", `[1, 2.5, null, [`, "decode values"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeValues(s, []byte(tc.raw))
			if err == nil {
				t.Fatalf("DecodeValues(%s) = %#v, want an error", tc.raw, got)
			}
			if !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("error %q does not mention %q", err, tc.errHas)
			}
		})
	}
}

func TestNullValues(t *testing.T) {
	s := NewSchema([]Column{{Name: "a", Type: extract.TypeString}, {Name: "b", Type: extract.TypeInt64}})
	if got := NullValues(s); len(got) != 2 || got[0] != nil || got[1] != nil {
		t.Errorf("NullValues = %#v, want two nils", got)
	}
}
