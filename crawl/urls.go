package crawl

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// Normalize returns the canonical form of an absolute http or https URL —
// lower-case scheme and host, no default port, no fragment, "/" for an
// empty path, spaces and non-ASCII bytes in the query percent-encoded — or
// false when raw is not such a URL. A URL without a host name
// ("http://:80/") is not one, nor is one whose canonical form would not
// parse again.
func Normalize(raw string) (string, *url.URL, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Hostname() == "" || u.User != nil {
		return "", nil, false
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", nil, false
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") { // IPv6 literal
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	u.Fragment, u.RawFragment = "", ""
	u.RawQuery = escapeQuery(u.RawQuery)
	if u.Path == "" && u.Opaque == "" {
		u.Path = "/"
	}
	s := u.String()
	if !isASCII(host) {
		// String escapes non-ASCII bytes, and url.Parse refuses those
		// escapes in an IPv6 zone ("[::%25\x85]").
		if _, err := url.Parse(s); err != nil {
			return "", nil, false
		}
	}
	return s, u, true
}

// escapeQuery percent-encodes the spaces and non-ASCII bytes of a query,
// as browsers send them. URL.String writes the query as it was parsed: a
// raw space would end the request line early (a 400), and at the end of
// the URL it would be trimmed off when the URL is normalised again.
func escapeQuery(q string) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c != ' ' && c < utf8.RuneSelf {
			if b != nil {
				b = append(b, c)
			}
			continue
		}
		if b == nil {
			b = append(make([]byte, 0, len(q)+16), q[:i]...)
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	if b == nil {
		return q
	}
	return string(b)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Scope keeps a crawl on its allowed domains: a host is in scope when it
// is an allowed domain or a subdomain of one.
type Scope struct {
	domains []string
}

// NewScope returns a scope over the given lower-case domains.
func NewScope(domains []string) Scope { return Scope{domains: domains} }

// Allows reports whether u's host is in scope.
func (s Scope) Allows(u *url.URL) bool {
	host := strings.ToLower(u.Hostname())
	for _, d := range s.domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// withParam returns u with the query parameter name set to value: its
// first occurrence takes the value in place and later ones go, or it is
// added at the end; every other parameter keeps its place and spelling,
// as the site wrote them. u is not changed.
func withParam(u *url.URL, name, value string) string {
	v := *u
	pair := url.QueryEscape(name) + "=" + url.QueryEscape(value)
	var kept []string
	set := false
	for _, p := range strings.Split(v.RawQuery, "&") {
		k, _, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(k); err == nil && n == name {
			if !set {
				kept, set = append(kept, pair), true
			}
			continue
		}
		if p != "" {
			kept = append(kept, p)
		}
	}
	if !set {
		kept = append(kept, pair)
	}
	v.RawQuery = strings.Join(kept, "&")
	return v.String()
}
