package crawl

import (
	"net/http"
	"strings"
	"testing"
)

func TestNextLink(t *testing.T) {
	for _, tt := range []struct {
		fields []string
		want   string
	}{
		{[]string{`<https://shop.example/wp-json/wc/store/v1/products?page=2>; rel="next"`}, "https://shop.example/wp-json/wc/store/v1/products?page=2"},
		{[]string{`</p?page=1>; rel="prev", </p?page=3>; rel="next"`}, "/p?page=3"},
		{[]string{`<https://s.example/admin/api/products.json?limit=50&page_info=eyJsYXN0X2lkIjo0fQ>; rel="previous", <https://s.example/admin/api/products.json?limit=50&page_info=eyJsYXN0X2lkIjo5fQ>; rel="next"`},
			"https://s.example/admin/api/products.json?limit=50&page_info=eyJsYXN0X2lkIjo5fQ"},
		{[]string{`</a?fields=id,title>; title="a, b; c"; rel="NEXT last"`}, "/a?fields=id,title"},
		{[]string{`</x>; rel=next`}, "/x"},
		{[]string{`</x>; rel="prev"`, `</y>; rel="next"`}, "/y"},
		{[]string{`</x>; rel="nextpage"`}, ""},
		{[]string{`</x>; rel="prev"; rel="next"`}, ""},
		{[]string{`broken, </y>; rel="next"`}, ""},
		{[]string{`</y>; title="unterminated; rel="next"`}, ""},
		{nil, ""},
	} {
		h := http.Header{}
		for _, f := range tt.fields {
			h.Add("Link", f)
		}
		if got, ok := nextLink(h); got != tt.want || ok != (tt.want != "") {
			t.Errorf("nextLink(%q) = %q, %v; want %q", tt.fields, got, ok, tt.want)
		}
	}
}

// FuzzNextLink checks that whatever a Link field holds, the next link is
// one of its <...> targets.
func FuzzNextLink(f *testing.F) {
	for _, s := range []string{`</a>; rel="next"`, `<x>;rel=next,<y>;rel="next prev"`, `<a>; t="\"q\""; rel=next`, `<`, `<>;;;=,`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, field string) {
		h := http.Header{"Link": {field}}
		got, ok := nextLink(h)
		if ok && !strings.Contains(field, "<"+got) && !strings.Contains(field, got+">") {
			t.Fatalf("nextLink(%q) = %q, not a target of the field", field, got)
		}
	})
}
