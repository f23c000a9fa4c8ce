package crawl

import (
	"net/url"
	"testing"
)

func TestNormalize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"HTTP://Example.COM/a/b?x=1#frag", "http://example.com/a/b?x=1"},
		{"http://example.com:80/a", "http://example.com/a"},
		{"https://example.com:443", "https://example.com/"},
		{"https://example.com:8443/a", "https://example.com:8443/a"},
		{"http://[::1]:8080/x", "http://[::1]:8080/x"},
		{"http://127.0.0.1:8390/catalogue/page-1.html", "http://127.0.0.1:8390/catalogue/page-1.html"},
		{"HTTP://0? #", "http://0/?%20"},
		{"http://h/p a?q=a b&r=\u00e9%20", "http://h/p%20a?q=a%20b&r=%C3%A9%20"},
	}
	for _, c := range cases {
		got, _, ok := Normalize(c.in)
		if !ok || got != c.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	for _, bad := range []string{"ftp://example.com/", "mailto:a@b.c", "/relative", "http://user:pw@example.com/", "javascript:alert(1)", "http://%zz", "http://:80/", "https://:8443/x", "http://[::%25\x85]"} {
		if got, _, ok := Normalize(bad); ok {
			t.Errorf("Normalize(%q) = %q, want rejection", bad, got)
		}
	}
}

func TestScope(t *testing.T) {
	s := NewScope([]string{"example.com", "127.0.0.1"})
	for raw, want := range map[string]bool{
		"http://example.com/x":         true,
		"http://shop.example.com/x":    true,
		"http://badexample.com/x":      false,
		"http://example.com.evil.io/x": false,
		"http://127.0.0.1:9/x":         true,
		"http://127.0.0.2/x":           false,
	} {
		u, _ := url.Parse(raw)
		if got := s.Allows(u); got != want {
			t.Errorf("Allows(%s) = %v, want %v", raw, got, want)
		}
	}
}
