package shopsites

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// getWith GETs url with client, adding header name: value.
func getWith(t *testing.T, c *http.Client, url, name, value string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(name, value)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestGatedConsentCookieSurvivesTheRedirect(t *testing.T) {
	shop, srv := newServer(t, Gated, Options{})
	raw := rawClient()
	page1 := srv.URL + "/catalog/page-1.html"
	for _, u := range []string{page1, srv.URL + "/catalog/item-1.html", srv.URL + "/"} {
		if r := get(t, raw, u); r.status != http.StatusForbidden {
			t.Errorf("%s without consent: status %d, want 403", u, r.status)
		}
	}
	if st := getWith(t, raw, page1, "Cookie", ConsentCookie+"=0"); st != http.StatusForbidden {
		t.Errorf("with %s=0: status %d, want 403", ConsentCookie, st)
	}
	if r := get(t, raw, srv.URL+"/consent"); r.status != http.StatusOK {
		t.Errorf("/consent: status %d, want the consent page", r.status)
	}

	r := get(t, raw, srv.URL+"/consent?accept=1")
	if r.status != http.StatusFound || r.header.Get("Location") != "/catalog/page-1.html" {
		t.Errorf("accepting: status %d, Location %q; want 302 to page 1", r.status, r.header.Get("Location"))
	}
	resp := http.Response{Header: r.header}
	i := slices.IndexFunc(resp.Cookies(), func(c *http.Cookie) bool { return c.Name == ConsentCookie })
	if i < 0 || resp.Cookies()[i].Value != "1" || resp.Cookies()[i].Path != "/" || resp.Cookies()[i].Domain != "" {
		t.Fatalf("accepting sets cookies %v, want %s=1 for the host", resp.Cookies(), ConsentCookie)
	}

	// Following the redirect without a cookie jar loses the cookie.
	if r := get(t, srv.Client(), srv.URL+"/consent?accept=1"); r.status != http.StatusForbidden {
		t.Errorf("redirect followed without a jar: status %d, want 403", r.status)
	}
	// A static cookie is enough.
	if st := getWith(t, raw, page1, "Cookie", ConsentCookie+"=1"); st != http.StatusOK {
		t.Errorf("with a static cookie: status %d, want 200", st)
	}

	c := admitted(t, shop, srv)
	links, pages := walkListing(t, c, srv.URL+"/consent?accept=1", "ul.products a.product", "a.next", "href")
	if want := truthURLs(shop.Truth(srv.URL)); !slices.Equal(links, want) {
		t.Errorf("listing links %v,\nwant %v", links, want)
	}
	if pages != 3 {
		t.Errorf("%d listing pages, want 3", pages)
	}
}

func TestGatedTokenAnswers401WithoutIt(t *testing.T) {
	shop, srv := newServer(t, Gated, Options{Token: testToken})
	raw := rawClient()
	page1 := srv.URL + "/catalog/page-1.html"
	r := get(t, raw, page1)
	if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no token: status %d, WWW-Authenticate %q; want 401 with a Bearer challenge", r.status, r.header.Get("WWW-Authenticate"))
	}
	for _, auth := range []string{"Bearer wrong", "Bearer " + testToken + "x", testToken, "bearer " + testToken + " "} {
		if st := getWith(t, raw, page1, "Authorization", auth); st != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, st)
		}
	}
	if st := getWith(t, raw, page1, "Cookie", ConsentCookie+"=1"); st != http.StatusUnauthorized {
		t.Errorf("consent cookie instead of the token: status %d, want 401", st)
	}
	if r := get(t, raw, srv.URL+"/consent?accept=1"); r.status != http.StatusNotFound {
		t.Errorf("/consent with a token gate: status %d, want 404", r.status)
	}
	if st := getWith(t, raw, page1, "Authorization", "Bearer "+testToken); st != http.StatusOK {
		t.Errorf("with the token: status %d, want 200", st)
	}
	links, _ := walkListing(t, admitted(t, shop, srv), page1, "ul.products a.product", "a.next", "href")
	if want := truthURLs(shop.Truth(srv.URL)); !slices.Equal(links, want) {
		t.Errorf("listing links %v,\nwant %v", links, want)
	}
	if got := shop.PageRequests("/catalog/page-1.html"); got != 8 {
		t.Errorf("page 1 counted %d times, want 8: rejected requests count too", got)
	}
}

func TestGatedProductPagesHoldTheTruth(t *testing.T) {
	shop, srv := newServer(t, Gated, Options{})
	c := admitted(t, shop, srv)
	for _, p := range shop.Truth(srv.URL) {
		doc := parse(t, getOK(t, c, p.URL).body)
		v := p.Values
		want := []string{p.Key, v["name"].(string), "€" + formatMoney(v["price"].(float64)), "In stock (" + itoa64(v["stock"].(int64)) + " available)"}
		got := []string{doc.Find("td.sku").Text(), doc.Find("div.product h1").Text(), doc.Find("p.price").Text(), doc.Find("p.stock").Text()}
		if !slices.Equal(got, want) {
			t.Errorf("%s: page says %q, truth %q", p.Key, got, want)
		}
	}
}
