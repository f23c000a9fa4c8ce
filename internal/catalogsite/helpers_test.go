package catalogsite

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// newServer starts a loopback server for a new site.
func newServer(t *testing.T, opts Options) (*Site, *httptest.Server) {
	t.Helper()
	site := New(opts)
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	return site, srv
}

// response is a fully read response.
type response struct {
	status int
	header http.Header
	body   []byte
}

// fetch GETs url with client and reads the whole body.
func fetch(t *testing.T, client *http.Client, url string) response {
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
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

// fetchOK fetches url and fails unless it answers 200.
func fetchOK(t *testing.T, client *http.Client, url string) response {
	t.Helper()
	r := fetch(t, client, url)
	if r.status != http.StatusOK {
		t.Fatalf("GET %s: status %d, want 200", url, r.status)
	}
	return r
}

// parse parses an UTF-8 HTML body.
func parse(t *testing.T, body []byte) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc
}

// noKeepAlive returns a client that uses a fresh connection per request,
// so the transport never retries a request on a reused connection.
func noKeepAlive() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}
