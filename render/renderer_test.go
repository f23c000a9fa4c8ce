package render

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/verdict"
)

const shopPage = `<!DOCTYPE html><html><head><link rel="stylesheet" href="/s.css"><script src="/app.js"></script></head>
<body><img src="/a.png"><iframe src="/frame"></iframe></body></html>`

const app = `fetch("/api").then(r => r.json()).then(d => {
  const h = document.createElement("h1"); h.textContent = d.name + " " + document.cookie; document.body.appendChild(h);
});`

func shop(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/app.js":
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, app)
	case "/api":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name": "Teapot"}`)
	case "/frame":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>reviews</p>")
	case "/gone":
		http.Error(w, "gone", http.StatusGone)
	case "/away":
		http.Redirect(w, r, "http://elsewhere.invalid/p", http.StatusFound)
	case "/hop":
		http.Redirect(w, r, "/p", http.StatusMovedPermanently)
	case "/big":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>"+strings.Repeat("x", 5000)+"</p>")
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Link", `</p?page=2>; rel="next"`)
		fmt.Fprint(w, shopPage)
	}
}

// TestFetchRendersThePage: the body is the DOM a script built, the status
// and headers the document's (less its validators), the iframe is one
// more document, the script and its API call are subresources, and the
// stylesheet and image never leave the browser.
func TestFetchRendersThePage(t *testing.T) {
	s := newSite(t, shop)
	r := start(t, Options{Pages: "item", Block: []string{"image", "stylesheet"}, WaitFor: map[crawl.Kind]string{crawl.KindItem: "h1"}})
	resp, err := r.Fetch(t.Context(), item(s.URL+"/p"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resp.Body), "<h1>Teapot ") || resp.Status != 200 || resp.Header.Get("Link") == "" ||
		resp.Header.Get("ETag") != "" || !resp.Replayless || resp.Charset != "utf-8" || resp.FinalURL.String() != s.URL+"/p" {
		t.Fatalf("response %d %v %q charset %q final %v replayless %v", resp.Status, resp.Header, resp.Body, resp.Charset, resp.FinalURL, resp.Replayless)
	}
	if resp.Documents != 1 || len(s.requests("/frame")) != 1 {
		t.Fatalf("documents %d, frame requested %d times; want the iframe counted as one more document", resp.Documents, len(s.requests("/frame")))
	}
	if len(s.requests("/s.css"))+len(s.requests("/a.png"))+len(s.requests("/favicon.ico")) != 0 {
		t.Fatal("a blocked stylesheet or image, or the browser's favicon, was requested")
	}
	f := r.Facts()
	if f.Rendered != 1 || f.Blocked.ResourceType != 2 || r.Subresources() != 2 || f.Pages != "item" || f.Browser == "" {
		var paths []string
		for _, q := range s.all() {
			paths = append(paths, q.URL.Path)
		}
		t.Fatalf("facts %+v, %d subresources (site saw %v); want 1 rendered, 2 blocked, app.js and /api", f, r.Subresources(), paths)
	}
}

// TestFetchSendsTheRequestSettings: every request carries the config's
// headers and user agent, the engine's headers go with the page's own
// document, no conditional header does, and the config's cookies are set
// for the allowed domains.
func TestFetchSendsTheRequestSettings(t *testing.T) {
	s := newSite(t, shop)
	u, _ := url.Parse(s.URL)
	r := start(t, Options{Block: []string{"image", "stylesheet"}, WaitFor: map[crawl.Kind]string{crawl.KindItem: "h1"},
		Header: http.Header{"X-Shop-Token": {"t0k"}}, UserAgent: "databrew-test/1",
		Cookies: []*http.Cookie{{Name: "cc_consent", Value: "1"}}, CookieDomains: []string{u.Hostname()}})
	req := item(s.URL + "/p")
	req.Header = http.Header{"X-Refresh": {"r1"}, "If-None-Match": {`"v1"`}}
	resp, err := r.Fetch(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resp.Body), "cc_consent=1") {
		t.Fatalf("the page does not see the config's cookie: %s", resp.Body)
	}
	doc, api := s.requests("/p"), s.requests("/api")
	if len(doc) != 1 || len(api) != 1 {
		t.Fatalf("%d document and %d API requests", len(doc), len(api))
	}
	for _, got := range []*http.Request{doc[0], api[0]} {
		if got.Header.Get("X-Shop-Token") != "t0k" || got.UserAgent() != "databrew-test/1" || !strings.Contains(got.Header.Get("Cookie"), "cc_consent=1") {
			t.Errorf("%s went with %v", got.URL.Path, got.Header)
		}
	}
	if doc[0].Header.Get("X-Refresh") != "r1" || doc[0].Header.Get("If-None-Match") != "" || api[0].Header.Get("X-Refresh") != "" {
		t.Errorf("the document went with %v and the API call with %v; want the engine's header on the document only, and never a conditional one",
			doc[0].Header, api[0].Header)
	}
}

// TestFetchAnswersLikeAPlainRequest: what the document answered decides
// as it would for a plain request — an error status, a redirect out of
// scope or past max_redirects, a body over max_body_bytes — and a page
// without wait_for is read once it is quiet.
func TestFetchAnswersLikeAPlainRequest(t *testing.T) {
	s := newSite(t, shop)
	host, _ := url.Parse(s.URL)
	r := start(t, Options{MaxRedirects: 1, MaxBodyBytes: 4096, Idle: 100 * time.Millisecond,
		InScope: func(u *url.URL) bool { return u.Host == host.Host }})
	resp, err := r.Fetch(t.Context(), item(s.URL+"/gone"))
	if err != nil || resp.Status != http.StatusGone {
		t.Fatalf("/gone: %+v, %v; want its 410", resp, err)
	}
	resp, err = r.Fetch(t.Context(), item(s.URL+"/away"))
	if err != nil || resp.Status != http.StatusFound || resp.RedirectNotFollowed != "out of scope" || resp.Header.Get("Location") == "" {
		t.Fatalf("/away: %+v, %v; want its 302, not followed out of scope", resp, err)
	}
	resp, err = r.Fetch(t.Context(), item(s.URL+"/hop"))
	if err != nil || resp.Status != 200 || resp.FinalURL.Path != "/p" || !strings.Contains(string(resp.Body), "<h1>Teapot") {
		t.Fatalf("/hop: %+v, %v; want the page it redirects to, rendered once quiet", resp, err)
	}
	var fe *crawl.FetchError
	if _, err = r.Fetch(t.Context(), item(s.URL+"/big")); !errors.As(err, &fe) || fe.Class != verdict.ClassNeutral || fe.Reason != "body over max_body_bytes" {
		t.Fatalf("/big: %v; want a neutral body over max_body_bytes", err)
	}
	zero := start(t, Options{})
	resp, err = zero.Fetch(t.Context(), item(s.URL+"/hop"))
	if err != nil || resp.Status != http.StatusMovedPermanently || resp.RedirectNotFollowed != "max_redirects = 0" {
		t.Fatalf("max_redirects = 0: %+v, %v", resp, err)
	}
}

// TestFetchRenderTimeout: a page wait_for never matches is a failure with
// the reason "render timeout", counted in the facts; the browser answers,
// so it is not restarted.
func TestFetchRenderTimeout(t *testing.T) {
	s := newSite(t, shop)
	r := start(t, Options{Timeout: 500 * time.Millisecond, WaitFor: map[crawl.Kind]string{crawl.KindItem: "div.never"}})
	_, err := r.Fetch(t.Context(), item(s.URL+"/p"))
	var fe *crawl.FetchError
	if !errors.As(err, &fe) || fe.Class != verdict.ClassFailure || fe.Reason != ReasonRenderTimeout || fe.Fatal {
		t.Fatalf("error %v; want a render timeout failure", err)
	}
	if f := r.Facts(); f.Timeouts != 1 || f.Restarts != 0 {
		t.Fatalf("facts %+v", f)
	}
}
