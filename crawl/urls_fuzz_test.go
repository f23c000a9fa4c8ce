package crawl

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// FuzzNormalizeURL checks that a normalised URL is canonical: absolute
// http or https with a lower-case host, no default port, no whitespace, no
// fragment and no userinfo, normalising to itself again, and in the same
// scope as the URL it came from.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{
		"HTTP://Example.COM/a/b?x=1#frag",
		"http://example.com:80/a",
		"https://example.com:443",
		"https://shop.example.com:8443/a/../b/./c?q=%20#x",
		"http://[::1]:8080/x",
		"http://[fe80::1%25eth0]/",
		"http://127.0.0.1:8390/catalogue/page-1.html",
		"  http://a.example/\t",
		"http://%41.example/",
		"http://user:pw@example.com/",
		"http://example.com./",
		"http://example.com/%2F?%zz",
		"ftp://example.com/",
		"http:opaque",
		"http://a\x00b/",
		"http://\xff/",
		"//example.com/x",
		"http://" + strings.Repeat("a.", 200) + "example/" + strings.Repeat("p/", 500),
	} {
		f.Add(s, "example.com")
	}
	f.Fuzz(func(t *testing.T, raw, domain string) {
		norm, u, ok := Normalize(raw)
		if !ok {
			if norm != "" || u != nil {
				t.Fatalf("Normalize(%q) refused the URL but returned %q, %v", raw, norm, u)
			}
			return
		}
		if u == nil || u.String() != norm {
			t.Fatalf("Normalize(%q) = %q with a URL that prints as %v", raw, norm, u)
		}
		p, err := url.Parse(norm)
		switch {
		case err != nil:
			t.Fatalf("Normalize(%q) = %q, which does not parse: %v", raw, norm, err)
		case p.Scheme != "http" && p.Scheme != "https":
			t.Fatalf("Normalize(%q) = %q is not http or https", raw, norm)
		case p.Hostname() == "" || p.Hostname() != strings.ToLower(p.Hostname()):
			t.Fatalf("Normalize(%q) = %q has no host or one not in lower case", raw, norm)
		case strings.ContainsFunc(norm, unicode.IsSpace):
			t.Fatalf("Normalize(%q) = %q holds whitespace", raw, norm)
		case p.User != nil || p.Fragment != "" || strings.Contains(norm, "#"):
			t.Fatalf("Normalize(%q) = %q keeps userinfo or a fragment", raw, norm)
		case p.Scheme == "http" && p.Port() == "80", p.Scheme == "https" && p.Port() == "443":
			t.Fatalf("Normalize(%q) = %q keeps the default port", raw, norm)
		}
		again, _, ok := Normalize(norm)
		if !ok || again != norm {
			t.Fatalf("not idempotent: Normalize(%q) = %q, Normalize(%q) = %q, %v", raw, norm, norm, again, ok)
		}

		orig, err := url.Parse(strings.TrimSpace(raw))
		if err != nil {
			t.Fatalf("Normalize(%q) accepted what url.Parse refuses: %v", raw, err)
		}
		host := strings.ToLower(orig.Hostname())
		for _, s := range []Scope{
			NewScope([]string{strings.ToLower(domain)}),
			NewScope([]string{host}),
			NewScope([]string{"example.com", host[strings.IndexByte(host, '.')+1:]}),
		} {
			if s.Allows(orig) != s.Allows(u) || s.Allows(u) != s.Allows(p) {
				t.Fatalf("scope %v: Allows(%q) = %v but Allows(%q) = %v", s.domains, raw, s.Allows(orig), norm, s.Allows(u))
			}
		}
		if !NewScope([]string{host}).Allows(u) {
			t.Fatalf("a scope of %q does not allow its own URL %q", host, norm)
		}
	})
}

// FuzzScope checks that a scope allows exactly its domains and their
// subdomains, label by label, whatever the case of the URL's host.
func FuzzScope(f *testing.F) {
	for _, c := range [][2]string{
		{"http://example.com/x", "example.com"},
		{"http://shop.example.com/x", "example.com"},
		{"http://badexample.com/x", "example.com"},
		{"http://example.com.evil.io/x", "example.com"},
		{"http://EXAMPLE.com:8080/x", "example.com"},
		{"http://127.0.0.1:9/x", "127.0.0.1"},
		{"http://[::1]:9/x", "::1"},
		{"http://a..example.com/", "example.com"},
		{"http://example.com./", "example.com"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, raw, domain string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		domain = strings.ToLower(domain)
		host := strings.ToLower(u.Hostname())
		got := NewScope([]string{domain}).Allows(u)
		hostLabels, domLabels := strings.Split(host, "."), strings.Split(domain, ".")
		tail := len(hostLabels) - len(domLabels)
		want := tail >= 0 && slices.Equal(hostLabels[tail:], domLabels)
		if domain != "" && got != want {
			t.Fatalf("scope %q: Allows(%q) = %v, want %v", domain, raw, got, want)
		}
		if NewScope(nil).Allows(u) {
			t.Fatalf("an empty scope allows %q", raw)
		}
		upper := *u
		upper.Host = strings.Map(func(r rune) rune {
			if 'a' <= r && r <= 'z' {
				return r - 'a' + 'A'
			}
			return r
		}, u.Host)
		if NewScope([]string{domain}).Allows(&upper) != got {
			t.Fatalf("scope %q: Allows depends on the case of %q", domain, u.Host)
		}
	})
}
