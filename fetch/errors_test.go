package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func wantKind(t *testing.T, err error, want Kind) {
	t.Helper()
	if got := KindOf(err); got != want {
		t.Fatalf("KindOf(%v) = %q, want %q", err, got, want)
	}
}

func TestKindTimeout(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	const timeout = 200 * time.Millisecond
	c := newTestClient(t, Config{Timeout: timeout})
	start := time.Now()
	resp, err := c.Fetch(context.Background(), srv.URL, nil)
	elapsed := time.Since(start)
	wantKind(t, err, KindTimeout)
	if resp != nil {
		t.Errorf("resp = %+v, want nil", resp)
	}
	// Cut short by the timeout, not by the server's own five seconds.
	if elapsed < timeout*9/10 || elapsed >= 5*time.Second {
		t.Errorf("took %v, want the %v timeout", elapsed, timeout)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v does not wrap context.DeadlineExceeded", err)
	}
}

func TestKindTimeoutDuringBody(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	c := newTestClient(t, Config{Timeout: 150 * time.Millisecond})
	_, err := c.Fetch(context.Background(), srv.URL, nil)
	wantKind(t, err, KindTimeout)
}

func TestKindRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := newTestClient(t, Config{Timeout: 2 * time.Second})
	_, err = c.Fetch(context.Background(), "http://"+addr+"/", nil)
	wantKind(t, err, KindRefused)
}

func TestKindReset(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn := hijack(t, w)
		if conn == nil {
			return
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		conn.Close()
	})
	c := newTestClient(t, Config{Timeout: 2 * time.Second})
	_, err := c.Fetch(context.Background(), srv.URL, nil)
	wantKind(t, err, KindReset)
}

func TestKindResetOnEOFBeforeResponse(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if conn := hijack(t, w); conn != nil {
			conn.Close()
		}
	})
	c := newTestClient(t, Config{Timeout: 2 * time.Second})
	_, err := c.Fetch(context.Background(), srv.URL, nil)
	wantKind(t, err, KindReset)
}

func TestKindTruncated(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn := hijack(t, w)
		if conn == nil {
			return
		}
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly a part")
		conn.Close()
	})
	c := newTestClient(t, Config{Timeout: 2 * time.Second})
	resp, err := c.Fetch(context.Background(), srv.URL, nil)
	wantKind(t, err, KindTruncated)
	if resp != nil {
		t.Errorf("resp = %+v, want nil", resp)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err %v does not wrap io.ErrUnexpectedEOF", err)
	}
}

func TestKindTruncatedBrokenGzip(t *testing.T) {
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	zw.Write(bytes.Repeat([]byte("<p>hello gzip</p>\n"), 200))
	zw.Close()
	full := zbuf.Bytes()
	badCRC := bytes.Clone(full)
	badCRC[len(badCRC)-8] ^= 0xFF
	cases := map[string][]byte{
		"bad checksum": badCRC,
		"cut stream":   full[:len(full)/2],
		"not gzip":     []byte("this is not a gzip stream at all"),
	}
	for name, payload := range cases {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", "gzip")
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write(payload)
			})
			c := newTestClient(t, Config{Timeout: 2 * time.Second})
			_, err := c.Fetch(context.Background(), srv.URL, nil)
			wantKind(t, err, KindTruncated)
		})
	}
}

func TestKindTooLarge(t *testing.T) {
	body := strings.Repeat("x", 2048)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Test", "yes")
		io.WriteString(w, body)
	})
	c := newTestClient(t, Config{MaxBodyBytes: 1024})
	resp, err := c.Fetch(context.Background(), srv.URL, nil)
	wantKind(t, err, KindTooLarge)
	if resp == nil {
		t.Fatal("resp = nil, want the response's status and headers")
	}
	if resp.Status != 200 || resp.Header.Get("X-Test") != "yes" || resp.Body != nil {
		t.Errorf("resp = status %d header %v body %d bytes", resp.Status, resp.Header, len(resp.Body))
	}
	resp.Release()

	// A body of exactly the limit is fine.
	c = newTestClient(t, Config{MaxBodyBytes: 2048})
	resp, err = c.Fetch(context.Background(), srv.URL, nil)
	if err != nil || len(resp.Body) != 2048 {
		t.Fatalf("at the limit: err %v", err)
	}
	resp.Release()
}

func TestKindTooManyRedirects(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	c := newTestClient(t, Config{MaxRedirects: 3})
	resp, err := c.Fetch(context.Background(), srv.URL+"/start", nil)
	wantKind(t, err, KindTooManyRedirects)
	if resp != nil {
		t.Errorf("resp = %+v, want nil", resp)
	}
}

func TestKindCanceled(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	c := newTestClient(t, Config{Timeout: 2 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Fetch(ctx, srv.URL, nil)
	wantKind(t, err, KindCanceled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v does not wrap context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func TestKindCanceledByCallerDeadline(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	c := newTestClient(t, Config{Timeout: 2 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Fetch(ctx, srv.URL, nil)
	wantKind(t, err, KindCanceled)
}

func TestKindConnection(t *testing.T) {
	c := newTestClient(t, Config{Timeout: time.Second})
	for _, u := range []string{"ftp://127.0.0.1/file", "http://[::1", "relative/path"} {
		_, err := c.Fetch(context.Background(), u, nil)
		wantKind(t, err, KindConnection)
	}
}

func TestErrorFormat(t *testing.T) {
	err := error(&Error{Kind: KindTimeout, URL: "http://x/y", Err: context.DeadlineExceeded})
	if got, want := err.Error(), "fetch http://x/y: timeout: context deadline exceeded"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	wrapped := errors.Join(errors.New("outer"), err)
	if KindOf(wrapped) != KindTimeout || !errors.Is(wrapped, context.DeadlineExceeded) {
		t.Errorf("KindOf/Unwrap through a wrapper failed: %v", wrapped)
	}
	if KindOf(errors.New("plain")) != "" || KindOf(nil) != "" {
		t.Error("KindOf of a non-*Error is not empty")
	}
}
