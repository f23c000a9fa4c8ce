package fetch

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkFetch measures Fetch against a loopback server returning a 1.5 KB
// page with 16 concurrent fetchers.
func BenchmarkFetch(b *testing.B) {
	page := []byte("<!doctype html><html><head><title>bench</title></head><body>" +
		strings.Repeat("<p>lorem ipsum dolor sit amet</p>\n", 42) + "</body></html>")
	srv := newServer(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	c := newTestClient(b, Config{UserAgent: "bench"})
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := c.Fetch(context.Background(), srv.URL, nil)
			if err != nil {
				b.Error(err)
				return
			}
			resp.Release()
		}
	})
}
