package fetch

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"testing"
)

// bodyServer serves a body of ?n= bytes at any path; with ?length=1 it
// names its Content-Length, else it sends it in chunks of unknown length
// (as a transparently gunzipped body arrives).
func bodyServer(t *testing.T) string {
	t.Helper()
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("length") == "1" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		w.Header().Set("Content-Type", "application/json")
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			n -= k
		}
	}).URL
}

func bodyURL(base string, n int, length bool) string {
	u := base + "/?n=" + strconv.Itoa(n)
	if length {
		u += "&length=1"
	}
	return u
}

// TestBigBodyGrowsByAQuarter: a 9 MB body of unknown length is held in
// little more than its size (a bytes.Buffer doubles to 16 MiB), and one
// with a Content-Length in exactly its size.
func TestBigBodyGrowsByAQuarter(t *testing.T) {
	base := bodyServer(t)
	c := newTestClient(t, Config{})
	for _, length := range []bool{false, true} {
		const n = 9_000_000
		resp, err := c.Fetch(context.Background(), bodyURL(base, n, length), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Body) != n || resp.RawBytes != n {
			t.Fatalf("body of %d bytes (raw %d), want %d", len(resp.Body), resp.RawBytes, n)
		}
		want := n * 13 / 10
		if length {
			want = n + 1
		}
		if c := cap(resp.Body); c > want {
			t.Errorf("Content-Length %v: the body takes %d bytes for %d, want at most %d", length, c, n, want)
		}
		resp.Release()
	}
}
