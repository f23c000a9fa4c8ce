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

func TestWithParamKeepsTheOtherParametersAsWritten(t *testing.T) {
	for _, c := range []struct{ in, name, value, want string }{
		{"http://h/p?limit=12", "offset", "0", "http://h/p?limit=12&offset=0"},
		{"http://h/p?sort=price&page=1", "page", "2", "http://h/p?sort=price&page=2"},
		{"http://h/p?q=:relevance&page=1&view=grid", "page", "2", "http://h/p?q=:relevance&page=2&view=grid"},
		{"http://h/p?tag=a+b&page=1&page=7", "page", "3", "http://h/p?tag=a+b&page=3"},
		{"http://h/p?z=1&cursor=old&a=2", "cursor", "eyJ9 +/", "http://h/p?z=1&cursor=eyJ9+%2B%2F&a=2"},
		{"http://h/p", "cursor", "c1", "http://h/p?cursor=c1"},
		{"http://h/p;jsessionid=X?a=1", "page", "0", "http://h/p;jsessionid=X?a=1&page=0"},
		{"http://h/p?cat=3;4&page=1", "page", "2", "http://h/p?cat=3;4&page=2"},
	} {
		u, err := url.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := withParam(u, c.name, c.value); got != c.want {
			t.Errorf("withParam(%s, %s, %q) = %s, want %s", c.in, c.name, c.value, got, c.want)
		}
		if u.String() != c.in {
			t.Errorf("withParam changed its argument to %s", u)
		}
	}
	u, _ := url.Parse("http://h/p?sort=price&page=1")
	if got := SetPageNumber(u, "page", 2); got != "http://h/p?sort=price&page=2" {
		t.Errorf("SetPageNumber = %s", got)
	}
	next, err := (&NextCursor{Param: "cursor"}).nextCursorEntry(Queued{Entry: Entry{URL: "http://h/api?limit=12&cursor=a"}}, `"b"`)
	if err != nil || next.URL != "http://h/api?limit=12&cursor=b" {
		t.Errorf("next cursor request %s, %v; want the limit kept before the cursor", next.URL, err)
	}
}
