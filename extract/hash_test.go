package extract

import (
	"math"
	"regexp"
	"testing"
	"time"
)

func TestHashFormatAndStability(t *testing.T) {
	it := Item{Key: "k", URL: "u", Values: []any{
		"A Light in the Attic", 51.77, int64(22), true,
		time.Date(2016, 3, 1, 10, 20, 30, 5, time.UTC),
		[]string{"a", "b"}, []int64{1}, []float64{2.5}, []bool{false}, []time.Time{{}}, nil,
	}}
	h := it.Hash()
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(h) {
		t.Fatalf("Hash() = %q, want 32 lower-case hex digits", h)
	}
	if h2 := it.Hash(); h2 != h {
		t.Errorf("Hash not deterministic: %s vs %s", h, h2)
	}
	// Pin the encoding (02 | 01 00 01 "x" | 02 00 00..01): changing it
	// changes every stored hash.
	if got, want := (Item{Values: []any{"x", int64(1)}}).Hash(), "5f2d9544c163c06498e06dab53f77920"; got != want {
		t.Errorf("golden hash = %s, want %s", got, want)
	}
	// URL, Key and Reasons are not content.
	other := it
	other.Key, other.URL, other.Reasons = "k2", "u2", []string{"r"}
	if other.Hash() != h {
		t.Error("Hash depends on Key, URL or Reasons")
	}
}

func TestHashEquality(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	instant := time.Date(2016, 3, 1, 10, 0, 0, 0, time.UTC)
	equal := []struct {
		name string
		a, b []any
	}{
		{"negative zero", []any{math.Copysign(0, -1)}, []any{0.0}},
		{"negative zero in list", []any{[]float64{math.Copysign(0, -1)}}, []any{[]float64{0}}},
		{"same instant other zone", []any{instant}, []any{instant.In(berlin)}},
		{"copied slices", []any{[]string{"a"}}, []any{append([]string(nil), "a")}},
	}
	for _, tt := range equal {
		if (Item{Values: tt.a}).Hash() != (Item{Values: tt.b}).Hash() {
			t.Errorf("%s: hashes differ", tt.name)
		}
	}
}

func TestHashSensitivity(t *testing.T) {
	values := map[string][]any{
		"empty":              {},
		"one null":           {nil},
		"two nulls":          {nil, nil},
		"empty string":       {""},
		"string":             {"a"},
		"string changed":     {"b"},
		"string ab,empty":    {"ab", ""},
		"string a,b":         {"a", "b"},
		"empty list":         {[]string{}},
		"nil list":           {[]string(nil)},
		"list a":             {[]string{"a"}},
		"list a,b":           {[]string{"a", "b"}},
		"list b,a":           {[]string{"b", "a"}},
		"list a,empty":       {[]string{"a", ""}},
		"list ab":            {[]string{"ab"}},
		"int 1":              {int64(1)},
		"int 2":              {int64(2)},
		"float 1":            {1.0},
		"float 1.5":          {1.5},
		"bool true":          {true},
		"bool false":         {false},
		"int 0":              {int64(0)},
		"float 0":            {0.0},
		"empty int list":     {[]int64{}},
		"empty float list":   {[]float64{}},
		"empty bool list":    {[]bool{}},
		"empty time list":    {[]time.Time{}},
		"ints 1,2":           {[]int64{1, 2}},
		"ints 2,1":           {[]int64{2, 1}},
		"floats 1":           {[]float64{1}},
		"bools t":            {[]bool{true}},
		"bools f":            {[]bool{false}},
		"time":               {time.Unix(0, 0)},
		"time +1ns":          {time.Unix(0, 1)},
		"time far past":      {time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		"time far future":    {time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
		"times":              {[]time.Time{time.Unix(0, 0)}},
		"null then string":   {nil, "a"},
		"string then null":   {"a", nil},
		"other type":         {int(1)},
		"string 1":           {"1"},
		"string with length": {"\x01a"},
	}
	seen := map[string]string{}
	for name, v := range values {
		h := (Item{Values: v}).Hash()
		if prev, dup := seen[h]; dup {
			t.Errorf("%q and %q hash alike", prev, name)
		}
		seen[h] = name
	}
}

// TestHashUnchangedForExistingSpecs pins the hashes of the fixtures' items
// as the extractor computed them before sources, maps and defaults came:
// a spec that uses none of them must keep every stored hash, or a
// deployed stage would report every item as changed.
func TestHashUnchangedForExistingSpecs(t *testing.T) {
	x := mustCompile(t, bookSpec())
	it, err := x.Item(mustParse(t, x, string(fixture(t, "book.html"))), mustURL(t, testPage))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := it.Hash(), "6aebc3565189bbc58a855688f5e80255"; got != want {
		t.Errorf("book hash %s, want %s", got, want)
	}
	c := mustCompile(t, cardSpec())
	l := c.Listing(mustParse(t, c, string(fixture(t, "listing.html"))), mustURL(t, "https://books.example.com/index.html"))
	if len(l.Items) != 20 {
		t.Fatalf("%d cards", len(l.Items))
	}
	for i, want := range map[int]string{
		0:  "36071b4320904420d23c26333e18e960",
		1:  "977c99a7ebb17752347e16ec52fbf4a0",
		2:  "0f3a7b0be59d622d6a173c07c6c2cb76",
		19: "27308cdecd18374fedb42331d1a271c8",
	} {
		if got := l.Items[i].Hash(); got != want {
			t.Errorf("card %d hash %s, want %s", i, got, want)
		}
	}
}
