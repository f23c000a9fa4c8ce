package shopsites

import (
	"bytes"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// testShop is one shop kind with options, named for subtests.
type testShop struct {
	name string
	kind Kind
	opts Options
	// items is the documented number of items with default options.
	items int
}

// testToken is the Gated shop's bearer token in tests.
const testToken = "tok-3f9a.b7"

// allShops lists every kind and every option that changes what a crawl
// sees.
func allShops() []testShop {
	return []testShop{
		{"jsonld", JSONLD, Options{}, 24},
		{"microdata", Microdata, Options{}, 30},
		{"sitemaps", Sitemaps, Options{}, 22},
		{"params", Params, Options{}, 26},
		{"params-404", Params, Options{EndWith404: true}, 26},
		{"jsonapi-full", JSONAPI, Options{API: APIFull}, 33},
		{"jsonapi-links", JSONAPI, Options{API: APILinks}, 33},
		{"jsonapi-grid", JSONAPI, Options{API: APIGrid}, 33},
		{"messy", Messy, Options{}, 24},
		{"gated-cookie", Gated, Options{}, 20},
		{"gated-token", Gated, Options{Token: testToken}, 20},
		{"variants", Variants, Options{}, 30},
		{"shopify", Shopify, Options{}, 34},
		{"woocommerce-store", WooCommerce, Options{API: WooStore}, 36},
		{"woocommerce-wp", WooCommerce, Options{API: WooCore}, 36},
		{"offset-pages", Offset, Options{API: OffsetPages}, 35},
		{"offset-cursor", Offset, Options{API: OffsetCursor}, 35},
		{"graphql", GraphQL, Options{Token: testToken}, 36},
		{"nextjs", NextJS, Options{}, 38},
		{"vue", Vue, Options{}, 36},
		{"oscommerce", OsCommerce, Options{}, 36},
		{"oscommerce-modsid", OsCommerce, Options{SessionParam: "MODsid"}, 36},
		{"swiss", Swiss, Options{}, 40},
	}
}

// newServer starts a loopback server for a new shop.
func newServer(t *testing.T, kind Kind, opts Options) (*Shop, *httptest.Server) {
	t.Helper()
	shop, err := New(kind, opts)
	if err != nil {
		t.Fatalf("New(%s): %v", kind, err)
	}
	srv := httptest.NewServer(shop)
	t.Cleanup(srv.Close)
	return shop, srv
}

// response is a fully read response.
type response struct {
	status int
	header http.Header
	body   []byte
	url    string // the final URL, after redirects
}

// get GETs url with client and reads the whole body.
func get(t *testing.T, client *http.Client, url string) response {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body, url: resp.Request.URL.String()}
}

// getOK fetches url and fails unless it answers 200.
func getOK(t *testing.T, client *http.Client, url string) response {
	t.Helper()
	r := get(t, client, url)
	if r.status != http.StatusOK {
		t.Fatalf("GET %s: status %d, want 200", url, r.status)
	}
	return r
}

// parse parses an HTML body.
func parse(t *testing.T, body []byte) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc
}

// rawClient follows no redirects and leaves compressed bodies compressed,
// so a test sees the responses as sent.
func rawClient() *http.Client {
	return &http.Client{
		Transport:     &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// admitted returns a client that passes the shop's gate, if it has one:
// it carries the token, or has accepted the consent cookie.
func admitted(t *testing.T, shop *Shop, srv *httptest.Server) *http.Client {
	t.Helper()
	if shop.Kind() != Gated {
		return srv.Client()
	}
	if tok := shop.Options().Token; tok != "" {
		return &http.Client{Transport: bearer{tok, srv.Client().Transport}}
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: srv.Client().Transport, Jar: jar}
	getOK(t, c, srv.URL+"/consent?accept=1")
	return c
}

// resolve resolves ref against the URL base.
func resolve(t *testing.T, base, ref string) string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %q: %v", base, err)
	}
	r, err := url.Parse(ref)
	if err != nil {
		t.Fatalf("parse %q: %v", ref, err)
	}
	return b.ResolveReference(r).String()
}

// walkListing follows an HTML listing from start: links selects item
// links (href), next the element holding the next page's URL in its
// attribute attr. It returns the absolute item URLs in page order and the
// number of pages read, and fails on a page that repeats.
func walkListing(t *testing.T, c *http.Client, start, links, next, attr string) (items []string, pages int) {
	t.Helper()
	seen := map[string]bool{}
	for u := start; u != ""; {
		if seen[u] {
			t.Fatalf("listing page %s comes twice", u)
		}
		seen[u] = true
		r := getOK(t, c, u)
		doc := parse(t, r.body)
		pages++
		doc.Find(links).Each(func(_ int, a *goquery.Selection) {
			items = append(items, resolve(t, r.url, a.AttrOr("href", "")))
		})
		u = ""
		if href, ok := doc.Find(next).Attr(attr); ok {
			u = resolve(t, r.url, href)
		}
	}
	return items, pages
}

// truthURLs returns the distinct item URLs of truth, in order.
func truthURLs(truth []Product) []string {
	var out []string
	for _, p := range truth {
		if len(out) == 0 || out[len(out)-1] != p.URL {
			out = append(out, p.URL)
		}
	}
	return out
}

// formatMoney writes f with two decimals.
func formatMoney(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
