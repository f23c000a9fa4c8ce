package fetch

import (
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"

	"golang.org/x/net/publicsuffix"
)

// NewJar returns the cookie jar of one crawl. It holds cookies for each
// of domains and their subdomains, on every port and scheme, as a site
// setting them with Domain= would; when keep is true it also keeps the
// cookies the sites set (on redirects too), scoped by RFC 6265 and the
// public suffix list, so a site cannot set one for a whole suffix such
// as .co.uk. When keep is false the jar sends the given cookies and
// keeps none a site sets. It returns nil when there is nothing to send or
// keep, and an error naming the cookie and domain when the jar refuses
// one, rather than silently not sending it.
func NewJar(domains []string, cookies []*http.Cookie, keep bool) (http.CookieJar, error) {
	if !keep && len(cookies) == 0 {
		return nil, nil
	}
	jar, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	if err != nil {
		return nil, fmt.Errorf("cookie jar: %w", err)
	}
	for _, d := range domains {
		// Any port: the jar ignores it, and it brackets an IPv6 address.
		u := &url.URL{Scheme: "http", Host: net.JoinHostPort(d, "80"), Path: "/"}
		set := make([]*http.Cookie, len(cookies))
		for i, c := range cookies {
			set[i] = &http.Cookie{Name: c.Name, Value: c.Value, Domain: d, Path: "/"}
		}
		jar.SetCookies(u, set)
		held := jar.Cookies(u)
		for _, c := range cookies {
			if !slices.ContainsFunc(held, func(h *http.Cookie) bool { return h.Name == c.Name }) {
				return nil, fmt.Errorf("cookie %s cannot be set for %s", c.Name, d)
			}
		}
	}
	if !keep {
		return sendOnly{jar}, nil
	}
	return jar, nil
}

// sendOnly is a jar that sends its cookies and keeps none the site sets.
type sendOnly struct{ jar *cookiejar.Jar }

func (j sendOnly) Cookies(u *url.URL) []*http.Cookie   { return j.jar.Cookies(u) }
func (j sendOnly) SetCookies(*url.URL, []*http.Cookie) {}

// scopedJar lets a jar see only URLs in scope: a request out of scope
// carries none of its cookies, and an answer from there sets none.
type scopedJar struct {
	jar     http.CookieJar
	inScope func(*url.URL) bool
}

func (j scopedJar) Cookies(u *url.URL) []*http.Cookie {
	if !j.inScope(u) {
		return nil
	}
	return j.jar.Cookies(u)
}

func (j scopedJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	if j.inScope(u) {
		j.jar.SetCookies(u, cookies)
	}
}
