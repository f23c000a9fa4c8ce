package render

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/internal/testkit/browsertest"
)

// TestWorkersRequestsArePoliced: what a page's web worker fetches passes
// the same checks as the page's own requests: a host outside the allowed
// domains is never contacted.
func TestWorkersRequestsArePoliced(t *testing.T) {
	third, hits := browsertest.ThirdParty(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "leaked")
	}))
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/worker.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprintf(w, `Promise.allSettled([fetch(%q), fetch("/own")]).then(function (rs) { postMessage(rs.map(function (r) { return r.status; }).join(" ")); });`, third.URL+"/leak")
		case "/own":
			fmt.Fprint(w, "own")
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><body><script>var w = new Worker("/worker.js"); w.onmessage = function (e) { var p = document.createElement("p"); p.className = "done"; p.textContent = e.data; document.body.appendChild(p); };</script></body></html>`)
		}
	})
	host, _ := url.Parse(s.URL)
	r := start(t, Options{WaitFor: map[crawl.Kind]string{crawl.KindItem: "p.done"}, InScope: func(u *url.URL) bool { return u.Host == host.Host }})
	resp, err := r.Fetch(t.Context(), item(s.URL+"/p"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", resp.Body)
	if n := hits.Load(); n != 0 {
		t.Fatalf("the worker reached the third-party host %d times", n)
	}
	if len(s.requests("/own")) != 1 {
		t.Fatalf("the worker's own request was not sent")
	}
}
