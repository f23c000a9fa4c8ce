package jsliteral

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFind(t *testing.T) {
	for _, tt := range []struct {
		name, scripts, want, wantErr string
		found                        bool
	}{
		{"__INITIAL_STATE__", `window.__INITIAL_STATE__ = {product: {current: {sku: 'AB\'1', image: "\u002Fimg\u002F1.jpg", tags: ['a', "b",], gone: undefined}}};(function(){var s;})()`,
			`{"product":{"current":{"sku":"AB'1","image":"/img/1.jpg","tags":["a","b"],"gone":null}}}`, "", true},
		{"window.__INITIAL_STATE__", `var __INITIAL_STATE__={"a":1}`, `{"a":1}`, "", true},
		{"__PRELOADED_STATE__", `window.__PRELOADED_STATE__ = JSON.parse('{"a":"\\u00e9","b":[1,2]}');`, `{"a":"\u00e9","b":[1,2]}`, "", true},
		{"__PRELOADED_STATE__", `const __PRELOADED_STATE__ = JSON.parse("{\"a\":1}")`, `{"a":1}`, "", true},
		{"ShopifyAnalytics.meta", `var meta = {x: 1}; ShopifyAnalytics.meta = meta; ShopifyAnalytics.meta = {"product": {"id": 7}};`, `{"product":{"id":7}}`, "", true},
		{"s", `let s = {emoji: "\ud83d\ude00", lone: "\ud800x", big: 1e300, neg: -0.5e-3}`, `{"emoji":"😀","lone":"�x","big":1e300,"neg":-0.5e-3}`, "", true},
		// not assignments
		{"__STATE__", `var o = {__STATE__: {a: 1}}; if (window.__STATE__ == 1) {}; f = __STATE__ => 1; x.__STATE__ = {b: 2}; __STATE__x = 3`, "", "", false},
		// assigned, but no value parses: where the first one stopped
		{"__STATE__", `window.__STATE__ = loadState(); window.__STATE__ = {a: new Date(1)}`, "", `at byte 1 of the value: "loadState" is a name`, true},
		{"__STATE__", `window.__STATE__ = {a: 1 /* count */}`, "", `"/" where a , or a } should be`, true},
		{"__STATE__", `window.__STATE__ = {a: !0}`, "", `"!" where a value should be`, true},
		{"__STATE__", `window.__STATE__ = {a: 0x1F}`, "", `"x" where the end of the number should be`, true},
		{"__STATE__", `window.__STATE__ = {a: 1`, "", `the text ends where a , or a } should be`, true},
	} {
		got, found, err := Find([]string{"", tt.scripts}, tt.name)
		if name, cerr := Canonical(tt.name); cerr == nil {
			got, found, err = Find([]string{"", tt.scripts}, name)
		}
		if found != tt.found || tt.want != "" && !sameJSON(t, got, tt.want) || tt.want == "" && got != nil {
			t.Errorf("Find(%q in %q) = %s, %v, %v; want %s, %v", tt.name, tt.scripts, got, found, err, tt.want, tt.found)
		}
		if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("Find(%q in %q) error = %v, want %q", tt.name, tt.scripts, err, tt.wantErr)
		}
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{"window.__X__": "__X__", "a.b.$c": "a.b.$c", "__NEXT_DATA__": "__NEXT_DATA__"} {
		if got, err := Canonical(in); err != nil || got != want {
			t.Errorf("Canonical(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "window.", "a..b", "1a", "a[0]", "a-b", "document.querySelector('x')"} {
		if _, err := Canonical(bad); err == nil {
			t.Errorf("Canonical(%q) accepted", bad)
		}
	}
}

func TestValueNestsNoDeeperThanMaxDepth(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	var se *SyntaxError
	if _, err := Value(deep); !errors.As(err, &se) || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("err = %v", err)
	}
}

func sameJSON(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Errorf("%s is not JSON: %v", got, err)
		return false
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(a, b)
}

// FuzzValue checks that what Value accepts is JSON, and that it reads a
// JSON text as the JSON it is.
func FuzzValue(f *testing.F) {
	for _, s := range []string{`{a: 1, 'b': [1, 2,], c: undefined}`, `"\u00e9\/\x41"`, `JSON.parse('{"a":1}')`, `[[[]]]`, `-0.5e+3`, `{"a":"b"}`, `'\ud83d\ude00'`, `{a:1}; more()`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out, err := Value(src)
		if err != nil {
			if json.Valid([]byte(src)) && utf8.ValidString(src) {
				t.Fatalf("Value(%q) refuses JSON: %v", src, err)
			}
			return
		}
		v, err := decode(out)
		if err != nil {
			t.Fatalf("Value(%q) = %q, not JSON: %v", src, out, err)
		}
		if direct, err := decode([]byte(src)); err == nil && !reflect.DeepEqual(v, direct) {
			t.Fatalf("Value(%q) = %q, but the text is JSON that reads %v", src, out, direct)
		}
	})
}

// decode decodes one JSON text, numbers as json.Number.
func decode(b []byte) (any, error) {
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("more after the value")
	}
	return v, nil
}
