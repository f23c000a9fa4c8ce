package render

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
)

// TestWorkersRequestsArePoliced: what a page's web worker fetches passes
// the same checks as the page's own requests: a host outside the allowed
// domains is never contacted.
func TestWorkersRequestsArePoliced(t *testing.T) {
	var hits atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	third := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "leaked")
	}))
	third.Listener.Close()
	third.Listener = ln
	third.Start()
	t.Cleanup(third.Close)
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
