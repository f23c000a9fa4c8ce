package extract

import (
	"net/url"
	"testing"
)

func TestBaseURL(t *testing.T) {
	x := mustCompile(t, Spec{Listing: ListingSpec{ItemLinks: "a"}})
	page := mustURL(t, "https://site.example/dir/page.html?q=1")
	tests := []struct {
		name string
		body string
		page *url.URL
		want string // "" for nil
	}{
		{"no base", `<p>x</p>`, page, page.String()},
		{"absolute base", `<base href="https://cdn.example/a/">`, page, "https://cdn.example/a/"},
		{"relative base", `<base href="../other/">`, page, "https://site.example/other/"},
		{"protocol-relative base", `<base href="//cdn.example/b/">`, page, "https://cdn.example/b/"},
		{"padded base", "<base href=\"  /x/\n\">", page, "https://site.example/x/"},
		{"empty base", `<base href="">`, page, page.String()},
		{"base without href", `<base target="_blank"><base href="/second/">`, page, "https://site.example/second/"},
		{"first base wins", `<base href="/one/"><base href="/two/">`, page, "https://site.example/one/"},
		{"base in body", `<body><base href="/late/"></body>`, page, "https://site.example/late/"},
		{"unparsable base", `<base href="http://[::1">`, page, page.String()},
		{"nil page, absolute base", `<base href="https://cdn.example/">`, nil, "https://cdn.example/"},
		{"nil page, relative base", `<base href="/x/">`, nil, ""},
		{"nil page, no base", `<p>x</p>`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BaseURL(mustParse(t, x, tt.body), tt.page)
			if (got == nil) != (tt.want == "") || got != nil && got.String() != tt.want {
				t.Errorf("BaseURL = %v, want %q", got, tt.want)
			}
		})
	}
	if got := BaseURL(nil, page); got != page {
		t.Errorf("BaseURL(nil doc) = %v, want the page URL", got)
	}
}
