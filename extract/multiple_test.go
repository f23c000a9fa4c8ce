package extract

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMultipleFields(t *testing.T) {
	d := func(day int) time.Time { return time.Date(2016, 3, day, 0, 0, 0, 0, time.UTC) }
	list := func(items ...string) string {
		return "<ul><li>" + strings.Join(items, "</li><li>") + "</li></ul>"
	}
	tests := []struct {
		name     string
		field    FieldSpec
		body     string
		want     any
		unusable bool
		reasons  int
	}{
		{"strings", FieldSpec{CSS: []string{"li"}}, list("poetry", " classics ", "", "\u00a0", "humour"), []string{"poetry", "classics", "humour"}, false, 0},
		{"strings keep duplicates and order", FieldSpec{CSS: []string{"li"}}, list("b", "a", "b"), []string{"b", "a", "b"}, false, 0},
		{"strings none optional", FieldSpec{CSS: []string{"li"}}, `<p>x</p>`, []string{}, false, 0},
		{"strings none required", FieldSpec{CSS: []string{"li"}, Required: true}, `<p>x</p>`, []string{}, true, 1},
		{"strings all empty required", FieldSpec{CSS: []string{"li"}, Required: true}, list(" ", ""), []string{}, true, 1},
		{"strings regex", FieldSpec{CSS: []string{"li"}, Regex: `#(\w+)`}, list("#a", "b", "x #c"), []string{"a", "c"}, false, 0},
		{"strings attr", FieldSpec{CSS: []string{"img"}, Attr: "alt"}, `<img alt="a"><img><img alt="c">`, []string{"a", "c"}, false, 0},
		{"urls", FieldSpec{CSS: []string{"img"}, Attr: "src", URL: true}, `<img src="/a.jpg"><img src="//cdn.example/b.jpg">`,
			[]string{"https://books.example.com/a.jpg", "https://cdn.example/b.jpg"}, false, 0},
		{"ints", FieldSpec{CSS: []string{"li"}, Type: TypeInt64}, list("1", "2,000", "", "-3"), []int64{1, 2000, -3}, false, 0},
		{"ints with unparsable elements are NULL", FieldSpec{CSS: []string{"li"}, Type: TypeInt64}, list("1", "x", "3", "4.5"), nil, false, 2},
		{"ints all unparsable required", FieldSpec{CSS: []string{"li"}, Type: TypeInt64, Required: true}, list("x", "y"), nil, true, 2},
		{"ints none", FieldSpec{CSS: []string{"li"}, Type: TypeInt64}, ``, []int64{}, false, 0},
		{"floats", FieldSpec{CSS: []string{"li"}, Type: TypeFloat64, Regex: `[\d.,]+`}, list("£1.50", "£1,000.25"), []float64{1.5, 1000.25}, false, 0},
		{"floats none", FieldSpec{CSS: []string{"li"}, Type: TypeFloat64}, ``, []float64{}, false, 0},
		{"bools", FieldSpec{CSS: []string{"li"}, Type: TypeBool}, list("yes", "N", "on", "off", "0"), []bool{true, false, true, false, false}, false, 0},
		{"bools with one unparsable is NULL", FieldSpec{CSS: []string{"li"}, Type: TypeBool}, list("yes", "maybe"), nil, false, 1},
		{"bools none", FieldSpec{CSS: []string{"li"}, Type: TypeBool}, ``, []bool{}, false, 0},
		{"times", FieldSpec{CSS: []string{"li"}, Type: TypeTimestamp}, list("2016-03-02", "2016-03-01T00:00:00Z"), []time.Time{d(2), d(1)}, false, 0},
		{"times format", FieldSpec{CSS: []string{"li"}, Type: TypeTimestamp, Format: "02.01.2006"}, list("03.03.2016", "01.03.2016"), []time.Time{d(3), d(1)}, false, 0},
		{"times not in format", FieldSpec{CSS: []string{"li"}, Type: TypeTimestamp, Format: "02.01.2006"}, list("03.03.2016", "2016-03-01"), nil, false, 1},
		{"times none", FieldSpec{CSS: []string{"li"}, Type: TypeTimestamp}, ``, []time.Time{}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.field.Name = "f"
			tt.field.Multiple = true
			it, err := extractField(t, tt.field, tt.body)
			var ue *UnusableError
			if tt.unusable != errors.As(err, &ue) {
				t.Fatalf("err = %v; unusable want %v", err, tt.unusable)
			}
			if !tt.unusable && err != nil {
				t.Fatal(err)
			}
			got := it.Values[0]
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("value = %#v, want %#v", got, tt.want)
			}
			if v := reflect.ValueOf(got); tt.want != nil && (v.Kind() != reflect.Slice || v.IsNil()) {
				t.Errorf("list value %#v is not a non-nil slice", got)
			}
			if tt.want == nil && !it.TypeError(0) {
				t.Errorf("a NULL list without a type error: %+v", it.FieldReport)
			}
			if len(it.Reasons) != tt.reasons {
				t.Errorf("reasons = %q, want %d", it.Reasons, tt.reasons)
			}
		})
	}
}
