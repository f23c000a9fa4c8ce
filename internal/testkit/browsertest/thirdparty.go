package browsertest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// ThirdParty starts a server on a second loopback address, 127.0.0.2, a
// host no allowed_domains of a test names, serving h and counting the
// requests that reach it: a test of what a browser must never contact
// asserts the count stays 0. It skips t where the address cannot be
// bound, and closes the server with t.
func ThirdParty(t testing.TB, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address: %v", err)
	}
	hits := new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, hits
}
