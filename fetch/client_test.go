package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestFetchOK(t *testing.T) {
	body := []byte("<html><body>héllo wörld \xff raw</body></html>")
	var gotUA, gotX string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		gotUA, gotX = r.UserAgent(), r.Header.Get("X-Extra")
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.Write(body)
	})
	c := newTestClient(t, Config{UserAgent: "databrewbot/1.0"})
	hdr := http.Header{"X-Extra": {"1"}, "User-Agent": {"ignored"}}
	resp, err := c.Fetch(context.Background(), srv.URL+"/page", hdr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Release()
	if gotUA != "databrewbot/1.0" || gotX != "1" {
		t.Errorf("server saw User-Agent %q, X-Extra %q", gotUA, gotX)
	}
	if resp.Status != 200 || resp.URL != srv.URL+"/page" || resp.FinalURL.String() != srv.URL+"/page" {
		t.Errorf("status %d url %q final %v", resp.Status, resp.URL, resp.FinalURL)
	}
	if !bytes.Equal(resp.Body, body) || resp.RawBytes != len(body) || resp.Charset != "utf-8" {
		t.Errorf("body %q (%d raw, %q), want byte-identical utf-8", resp.Body, resp.RawBytes, resp.Charset)
	}
	if resp.Elapsed <= 0 {
		t.Errorf("Elapsed = %v", resp.Elapsed)
	}
}

func TestFetchNilHeaderAndStatus(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusGone)
	})
	c := newTestClient(t, Config{})
	resp, err := c.Fetch(context.Background(), srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Release()
	if resp.Status != http.StatusGone || string(resp.Body) != "gone\n" {
		t.Errorf("status %d body %q", resp.Status, resp.Body)
	}
}

func TestFetchGzip(t *testing.T) {
	page := strings.Repeat("<p>compressible text</p>\n", 100)
	var acceptEncoding string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		acceptEncoding = r.Header.Get("Accept-Encoding")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if !strings.Contains(acceptEncoding, "gzip") {
			io.WriteString(w, page)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, page)
		zw.Close()
	})
	c := newTestClient(t, Config{})
	// An Accept-Encoding from the caller must not disable transparent gzip.
	resp, err := c.Fetch(context.Background(), srv.URL, http.Header{"Accept-Encoding": {"br"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Release()
	if !strings.Contains(acceptEncoding, "gzip") {
		t.Fatalf("request Accept-Encoding = %q, want gzip", acceptEncoding)
	}
	if string(resp.Body) != page || resp.RawBytes != len(page) {
		t.Errorf("body not decoded: %d bytes, raw %d", len(resp.Body), resp.RawBytes)
	}
	if resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("Content-Encoding still %q after decoding", resp.Header.Get("Content-Encoding"))
	}
}

func TestConnectionReuse(t *testing.T) {
	srv := httpUnstarted(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<p>ok</p>")
	})
	conns := countConns(srv)
	srv.Start()
	c := newTestClient(t, Config{})
	for i := 0; i < 50; i++ {
		resp, err := c.Fetch(context.Background(), srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Release()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("50 sequential fetches used %d connections, want 1", n)
	}
}

func TestRedirects(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusMovedPermanently)
		case "/b":
			http.Redirect(w, r, "/c", http.StatusFound)
		case "/c":
			io.WriteString(w, "final "+r.UserAgent())
		case "/leave":
			http.Redirect(w, r, "/out/there", http.StatusFound)
		case "/ftp":
			http.Redirect(w, r, "ftp://example.com/file", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	})
	inScope := func(u *url.URL) bool { return !strings.HasPrefix(u.Path, "/out") }
	c := newTestClient(t, Config{UserAgent: "ua-test", InScope: inScope, MaxRedirects: DefaultMaxRedirects})

	resp, err := c.Fetch(context.Background(), srv.URL+"/a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || resp.FinalURL.Path != "/c" || string(resp.Body) != "final ua-test" {
		t.Errorf("chain: status %d final %v body %q", resp.Status, resp.FinalURL, resp.Body)
	}
	if _, ok := resp.RedirectTarget(); ok {
		t.Error("RedirectTarget reported a target for a 200")
	}
	resp.Release()

	for path, want := range map[string][2]string{
		"/leave": {srv.URL + "/out/there", "out of scope"},
		"/ftp":   {"ftp://example.com/file", "not an http or https URL"},
	} {
		resp, err = c.Fetch(context.Background(), srv.URL+path, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		target, ok := resp.RedirectTarget()
		if resp.Status != http.StatusFound || resp.FinalURL.Path != path || !ok || target.String() != want[0] || resp.RedirectNotFollowed != want[1] {
			t.Errorf("%s: status %d final %v target %v %v (%q), want 302 not followed to %s (%s)",
				path, resp.Status, resp.FinalURL, target, ok, resp.RedirectNotFollowed, want[0], want[1])
		}
		resp.Release()
	}

	// max_redirects = 0 follows none: the zero Config, and negative too.
	for _, n := range []int{0, -1} {
		noFollow := newTestClient(t, Config{MaxRedirects: n})
		resp, err = noFollow.Fetch(context.Background(), srv.URL+"/a", nil)
		if err != nil {
			t.Fatal(err)
		}
		if target, ok := resp.RedirectTarget(); resp.Status != 301 || !ok || target.Path != "/b" || resp.RedirectNotFollowed != "max_redirects = 0" {
			t.Errorf("MaxRedirects %d: status %d target %v (%q), want the 301 itself", n, resp.Status, target, resp.RedirectNotFollowed)
		}
		resp.Release()
	}

	exact := newTestClient(t, Config{MaxRedirects: 2})
	resp, err = exact.Fetch(context.Background(), srv.URL+"/a", nil)
	if err != nil || resp.FinalURL.Path != "/c" {
		t.Fatalf("2 redirects with MaxRedirects 2: %v", err)
	}
	resp.Release()
	one := newTestClient(t, Config{MaxRedirects: 1})
	_, err = one.Fetch(context.Background(), srv.URL+"/a", nil)
	wantKind(t, err, KindTooManyRedirects)
}

func TestClose(t *testing.T) {
	srv := httpUnstarted(t, func(w http.ResponseWriter, r *http.Request) {})
	conns := countConns(srv)
	srv.Start()
	c := newTestClient(t, Config{Timeout: time.Second})
	for i := 0; i < 2; i++ {
		resp, err := c.Fetch(context.Background(), srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Release()
		c.Close()
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("Close kept the idle connection: %d connections, want 2", n)
	}
}

func TestMaxConnsPerHostCapsConnections(t *testing.T) {
	var active, most atomic.Int64
	srv := httpUnstarted(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		io.WriteString(w, "<p>ok</p>")
	})
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			n := active.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
		case http.StateClosed, http.StateHijacked:
			active.Add(-1)
		}
	}
	srv.Start()
	c := newTestClient(t, Config{MaxConnsPerHost: 2})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 3 {
				resp, err := c.Fetch(context.Background(), srv.URL, nil)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Release()
			}
		})
	}
	wg.Wait()
	if n := most.Load(); n > 2 || n == 0 {
		t.Fatalf("8 concurrent fetchers opened up to %d connections at once, want at most 2", n)
	}
}
