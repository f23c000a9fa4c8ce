package fetch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// seen is what a server saw of one request.
type seen struct {
	host, path, auth, lang, cookie string
}

// hostsSite is one loopback server answering for every host name: the
// client reaches it through a transport that dials it whatever the
// host, so a test can use names (shop.test, other.test) and scopes.
type hostsSite struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []seen
}

func newHostsSite(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) *hostsSite {
	t.Helper()
	s := &hostsSite{}
	s.srv = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.got = append(s.got, seen{host: hostOnly(r.Host), path: r.URL.Path, auth: r.Header.Get("Authorization"),
			lang: r.Header.Get("Accept-Language"), cookie: strings.Join(r.Header.Values("Cookie"), "; ")})
		s.mu.Unlock()
		h(w, r)
	})
	return s
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// transport dials the site for every host name.
func (s *hostsSite) transport() http.RoundTripper {
	addr := s.srv.Listener.Addr().String()
	return &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}

// requests returns what the site saw, in order.
func (s *hostsSite) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.got...)
}

// to returns the requests the site saw for host.
func (s *hostsSite) to(host string) []seen {
	var out []seen
	for _, r := range s.requests() {
		if r.host == host {
			out = append(out, r)
		}
	}
	return out
}

// scope allows the named domains and their subdomains, on any port.
func scope(domains ...string) func(*url.URL) bool {
	return func(u *url.URL) bool {
		h := u.Hostname()
		for _, d := range domains {
			if h == d || strings.HasSuffix(h, "."+d) {
				return true
			}
		}
		return false
	}
}

func (s *hostsSite) fetch(t *testing.T, c *Client, rawURL string, hdr http.Header) *Response {
	t.Helper()
	resp, err := c.Fetch(context.Background(), rawURL, hdr)
	if err != nil {
		t.Fatalf("fetch %s: %v", rawURL, err)
	}
	resp.Release()
	return resp
}

var token = http.Header{"Authorization": {"Bearer s3cr3t"}, "Accept-Language": {"de-DE"}}

// TestHeaderOnlyInScope: the configured headers go with every request to
// a URL in scope and never to one out of it, fetched directly or as a
// redirect target (which is not followed at all).
func TestHeaderOnlyInScope(t *testing.T) {
	site := newHostsSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "http://other.test/landing", http.StatusFound)
		}
	})
	c := newTestClient(t, Config{Header: token, InScope: scope("shop.test"), MaxRedirects: 5, Transport: site.transport()})
	site.fetch(t, c, "http://shop.test/a", nil)
	site.fetch(t, c, "http://www.shop.test:8443/b", nil)
	site.fetch(t, c, "http://other.test/c", nil)
	if resp := site.fetch(t, c, "http://shop.test/away", nil); resp.RedirectNotFollowed != "out of scope" {
		t.Fatalf("redirect out of scope: %q", resp.RedirectNotFollowed)
	}
	for _, r := range site.to("shop.test") {
		if r.auth != "Bearer s3cr3t" || r.lang != "de-DE" {
			t.Errorf("in scope %s%s got Authorization %q, Accept-Language %q", r.host, r.path, r.auth, r.lang)
		}
	}
	if r := site.to("www.shop.test"); len(r) != 1 || r[0].auth != "Bearer s3cr3t" {
		t.Errorf("a subdomain in scope: %+v", r)
	}
	other := site.to("other.test")
	if len(other) != 1 || other[0].path != "/c" {
		t.Fatalf("other.test saw %+v, want only the direct fetch of /c", other)
	}
	if other[0].auth != "" || other[0].lang != "" {
		t.Fatalf("out of scope got Authorization %q, Accept-Language %q", other[0].auth, other[0].lang)
	}
}

// TestHeaderFollowsRedirectsInScope: a redirect to another domain in
// scope keeps the Authorization header that net/http drops when a
// redirect changes domain, and a caller's header wins over the
// configured one on every hop.
func TestHeaderFollowsRedirectsInScope(t *testing.T) {
	site := newHostsSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "shop.test" && r.URL.Path == "/go" {
			http.Redirect(w, r, "http://img.test/there", http.StatusFound)
		}
	})
	c := newTestClient(t, Config{Header: token, InScope: scope("shop.test", "img.test"), MaxRedirects: 5, Transport: site.transport()})
	site.fetch(t, c, "http://shop.test/go", nil)
	site.fetch(t, c, "http://shop.test/go", http.Header{"Accept-Language": {"fr-FR"}})
	got := site.to("img.test")
	if len(got) != 2 {
		t.Fatalf("img.test saw %+v", got)
	}
	if got[0].auth != "Bearer s3cr3t" || got[0].lang != "de-DE" {
		t.Errorf("redirect target in scope got Authorization %q, Accept-Language %q", got[0].auth, got[0].lang)
	}
	if got[1].lang != "fr-FR" {
		t.Errorf("the caller's Accept-Language was lost on a redirect: %q", got[1].lang)
	}
}

// TestJarKeepsCookiesAcrossRedirects: a 302 that sets a consent cookie
// and redirects to the catalog arrives there with the cookie; without
// keeping, only the configured cookies are sent.
func TestJarKeepsCookiesAcrossRedirects(t *testing.T) {
	site := newHostsSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/consent" {
			http.SetCookie(w, &http.Cookie{Name: "consent", Value: "yes", Path: "/"})
			http.Redirect(w, r, "/catalog", http.StatusFound)
		}
	})
	for _, keep := range []bool{true, false} {
		jar, err := NewJar([]string{"shop.test"}, []*http.Cookie{{Name: "cc", Value: "1"}}, keep)
		if err != nil {
			t.Fatal(err)
		}
		c := newTestClient(t, Config{Jar: jar, InScope: scope("shop.test"), MaxRedirects: 5, Transport: site.transport()})
		site.fetch(t, c, "http://shop.test/consent", nil)
		site.fetch(t, c, "http://shop.test/later", nil)
		got := site.requests()[len(site.requests())-3:]
		want := map[bool][]string{
			true:  {"cc=1", "cc=1; consent=yes", "cc=1; consent=yes"},
			false: {"cc=1", "cc=1", "cc=1"},
		}[keep]
		for i, r := range got {
			if r.cookie != want[i] {
				t.Errorf("keep=%v: %s sent Cookie %q, want %q", keep, r.path, r.cookie, want[i])
			}
		}
	}
}

// TestJarOnlyInScope: neither a configured cookie nor one a site set
// goes to a host out of scope, and a cookie an out-of-scope answer sets
// is not kept.
func TestJarOnlyInScope(t *testing.T) {
	site := newHostsSite(t, func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "from_" + strings.Split(r.Host, ".")[0], Value: "1", Path: "/"})
	})
	jar, err := NewJar([]string{"shop.test"}, []*http.Cookie{{Name: "cc", Value: "1"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, Config{Jar: jar, InScope: scope("shop.test"), Transport: site.transport()})
	for _, u := range []string{"http://shop.test/", "http://other.test/", "http://other.test/", "http://notshop.test/", "http://sub.shop.test/"} {
		site.fetch(t, c, u, nil)
	}
	var got []string
	for _, r := range site.requests() {
		got = append(got, r.host+":"+r.cookie)
	}
	want := "shop.test:cc=1 other.test: other.test: notshop.test: sub.shop.test:cc=1"
	if strings.Join(got, " ") != want {
		t.Fatalf("cookies sent:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

// TestRobotsCarryHeaderAndCookies: robots.txt is fetched through the
// same client, so a gated site's robots.txt sees the token and cookies.
func TestRobotsCarryHeaderAndCookies(t *testing.T) {
	site := newHostsSite(t, func(w http.ResponseWriter, r *http.Request) {})
	jar, err := NewJar([]string{"shop.test"}, []*http.Cookie{{Name: "cc", Value: "1"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, Config{Header: token, Jar: jar, InScope: scope("shop.test"), Transport: site.transport()})
	r := NewRobots(c, "bot", time.Minute)
	if _, _, err := r.Allowed(context.Background(), &url.URL{Scheme: "http", Host: "shop.test", Path: "/x"}); err != nil {
		t.Fatal(err)
	}
	got := site.to("shop.test")
	if len(got) != 1 || got[0].path != "/robots.txt" || got[0].auth != "Bearer s3cr3t" || got[0].cookie != "cc=1" {
		t.Fatalf("robots.txt request: %+v", got)
	}
}

// TestNewJarSeedsEveryDomain: the configured cookies are set for each
// allowed domain, an IP address included, and a domain the jar refuses
// is an error rather than a cookie silently not sent.
func TestNewJarSeedsEveryDomain(t *testing.T) {
	jar, err := NewJar([]string{"127.0.0.1", "::1", "shop.test"}, []*http.Cookie{{Name: "a", Value: "1"}, {Name: "b", Value: "2"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://127.0.0.1:8080/x", "http://[::1]:8080/", "https://shop.test/", "http://a.b.shop.test/y/z"} {
		pu, _ := url.Parse(u)
		if n := len(jar.Cookies(pu)); n != 2 {
			t.Errorf("%s: %d cookies, want 2", u, n)
		}
	}
	if _, err := NewJar([]string{"shop.test."}, []*http.Cookie{{Name: "a", Value: "1"}}, true); err == nil {
		t.Error("a domain the jar cannot hold a cookie for is accepted")
	}
	if jar, err := NewJar([]string{"shop.test"}, nil, false); jar != nil || err != nil {
		t.Errorf("no cookies and none kept: jar %v, %v; want none", jar, err)
	}
}
