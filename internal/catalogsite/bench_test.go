package catalogsite

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
)

// benchServe serves paths from site round-robin through a recorder.
func benchServe(b *testing.B, site *Site, header http.Header, paths []string) {
	b.Helper()
	reqs := make([]*http.Request, len(paths))
	for i, p := range paths {
		reqs[i] = httptest.NewRequest(http.MethodGet, p, nil)
		for k, v := range header {
			reqs[i].Header[k] = v
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		rec := httptest.NewRecorder()
		site.ServeHTTP(rec, reqs[i%len(reqs)])
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
		i++
	}
}

func itemPaths(n int) []string {
	paths := make([]string, n)
	for i := range paths {
		paths[i] = "/catalogue/item-" + strconv.Itoa(i+1) + ".html"
	}
	return paths
}

func BenchmarkServeItemPage(b *testing.B) {
	benchServe(b, New(Options{Items: 100000}), nil, itemPaths(1000))
}

func BenchmarkServeListingPage(b *testing.B) {
	paths := make([]string, 100)
	for i := range paths {
		paths[i] = "/catalogue/page-" + strconv.Itoa(i+1) + ".html"
	}
	benchServe(b, New(Options{Items: 100000}), nil, paths)
}

func BenchmarkServeItemPageLatin1Gzip(b *testing.B) {
	site := New(Options{Items: 100000, Charset: "iso-8859-1", Gzip: true})
	benchServe(b, site, http.Header{"Accept-Encoding": {"gzip"}}, itemPaths(1000))
}

func BenchmarkServeItemPageWithFaults(b *testing.B) {
	site := New(Options{Items: 100000})
	site.AddFault(Fault{Kind: FaultStatus, From: 1 << 40})
	site.AddFault(Fault{Kind: FaultStub, PathPrefix: "/private/"})
	benchServe(b, site, nil, itemPaths(1000))
}

// BenchmarkLoopbackItemPages fetches item pages over loopback HTTP with the
// standard client, the way a crawler benchmark drives the site.
func BenchmarkLoopbackItemPages(b *testing.B) {
	site := New(Options{Items: 100000})
	srv := httptest.NewServer(site)
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := next.Add(1)%100000 + 1
			resp, err := c.Get(srv.URL + "/catalogue/item-" + strconv.FormatInt(id, 10) + ".html")
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}
