package lineage

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// received is one request an endpoint got.
type received struct {
	method, path, contentType, auth string
	body                            []byte
}

// recorder is an OpenLineage endpoint that keeps what it is sent and
// answers with status.
type recorder struct {
	mu     sync.Mutex
	got    []received
	status int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.got = append(r.got, received{req.Method, req.URL.Path, req.Header.Get("Content-Type"), req.Header.Get("Authorization"), body})
	status := r.status
	r.mu.Unlock()
	if status == 0 {
		status = http.StatusCreated
	}
	http.Error(w, http.StatusText(status)+"\n  details follow", status)
}

func (r *recorder) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestHTTPFromEnv(t *testing.T) {
	tests := []struct {
		env     map[string]string
		url     string
		key     string
		wantErr bool
	}{
		{env: map[string]string{}},
		{env: map[string]string{"OPENLINEAGE_URL": "http://marquez:5000"}, url: "http://marquez:5000/api/v1/lineage"},
		{env: map[string]string{"OPENLINEAGE_URL": "https://ol.example/base/", "OPENLINEAGE_ENDPOINT": "/events/v2", "OPENLINEAGE_API_KEY": "k"},
			url: "https://ol.example/base/events/v2", key: "k"},
		{env: map[string]string{"OPENLINEAGE_URL": "marquez:5000"}, wantErr: true},
		{env: map[string]string{"OPENLINEAGE_URL": "ftp://marquez"}, wantErr: true},
	}
	for _, tt := range tests {
		h, err := HTTPFromEnv(envOf(tt.env))
		switch {
		case tt.wantErr:
			if err == nil {
				t.Errorf("%v: no error", tt.env)
			}
		case err != nil:
			t.Errorf("%v: %v", tt.env, err)
		case tt.url == "" && h != nil:
			t.Errorf("%v: a transport to %s, want none", tt.env, h.URL)
		case tt.url != "" && (h == nil || h.URL != tt.url || h.APIKey != tt.key):
			t.Errorf("%v: %+v, want %s with key %q", tt.env, h, tt.url, tt.key)
		}
	}
}

// TestHTTPTransportPosts: one POST of JSON per event to the endpoint's
// path, with the bearer key, each body the event.
func TestHTTPTransportPosts(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	h, err := HTTPFromEnv(envOf(map[string]string{"OPENLINEAGE_URL": srv.URL, "OPENLINEAGE_API_KEY": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	tr := newTestTracker(t, t.TempDir())
	e := NewEmitter(h)
	for _, ev := range []RunEvent{tr.Start(testStart), tr.End(failedReport())} {
		if failed := e.Emit(context.Background(), ev); failed != nil {
			t.Fatalf("%v", failed)
		}
	}
	got := rec.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	for i, want := range []string{"START", "FAIL"} {
		r := got[i]
		if r.method != http.MethodPost || r.path != "/api/v1/lineage" || r.contentType != "application/json" || r.auth != "Bearer s3cret" {
			t.Errorf("request %d: %s %s, Content-Type %q, Authorization %q", i, r.method, r.path, r.contentType, r.auth)
		}
		ev := validateEvent(t, r.body)
		if get(ev, "eventType") != want || get(ev, "run", "runId") != tr.RunID() {
			t.Errorf("request %d: event %v %v, want %s of run %s", i, get(ev, "eventType"), get(ev, "run", "runId"), want, tr.RunID())
		}
	}
	if e.Undelivered() != 0 {
		t.Errorf("%d undelivered", e.Undelivered())
	}
}

func TestHTTPTransportNon2xx(t *testing.T) {
	srv := httptest.NewServer(&recorder{status: http.StatusInternalServerError})
	defer srv.Close()
	h := &HTTPTransport{URL: srv.URL + "/api/v1/lineage"}
	err := h.Send(context.Background(), []byte(`{}`))
	if err == nil || err.Error() != "post: HTTP 500 Internal Server Error: Internal Server Error details follow" {
		t.Errorf("error %v, want the status and the start of the body", err)
	}
}

func TestHTTPTransportDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	h := &HTTPTransport{URL: "http://" + addr + "/api/v1/lineage"}
	failed := NewEmitter(h).Emit(context.Background(), RunEvent{EventType: EventStart})
	if len(failed) != 1 || !errors.Is(failed[0], syscall.ECONNREFUSED) {
		t.Fatalf("failed deliveries %v, want one: connection refused", failed)
	}
	if msg := failed[0].Error(); strings.Count(msg, h.URL) != 1 {
		t.Errorf("error %q, want the URL once", msg)
	}
}

// TestHTTPTransportTimeout: an endpoint that does not answer costs the
// timeout, not the run.
func TestHTTPTransportTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	h := &HTTPTransport{URL: srv.URL, Timeout: 50 * time.Millisecond}
	began := time.Now()
	err := h.Send(context.Background(), []byte(`{}`))
	if err == nil {
		t.Fatal("no error from an endpoint that never answers")
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("Send took %v with a 50ms timeout", took)
	}
}

// TestEmitterGoesOnPastAFailure: a transport that fails does not keep the
// event from the next one; the failure is returned and counted.
func TestEmitterGoesOnPastAFailure(t *testing.T) {
	srv := httptest.NewServer(&recorder{status: http.StatusServiceUnavailable})
	defer srv.Close()
	rec := &recorder{}
	ok := httptest.NewServer(rec)
	defer ok.Close()
	down := &HTTPTransport{URL: srv.URL}
	e := NewEmitter(down, &HTTPTransport{URL: ok.URL})
	tr := newTestTracker(t, t.TempDir())
	for _, ev := range []RunEvent{tr.Start(testStart), tr.End(failedReport())} {
		failed := e.Emit(context.Background(), ev)
		if len(failed) != 1 || failed[0].Transport != down || failed[0].Event != ev.EventType {
			t.Fatalf("failed deliveries %v, want the %s event to %s", failed, ev.EventType, srv.URL)
		}
		if msg := failed[0].Error(); !strings.Contains(msg, string(ev.EventType)) || !strings.Contains(msg, "503") {
			t.Errorf("error %q", msg)
		}
	}
	if n := len(rec.requests()); n != 2 {
		t.Errorf("the working endpoint got %d events, want 2", n)
	}
	if e.Undelivered() != 2 {
		t.Errorf("Undelivered() = %d, want 2", e.Undelivered())
	}
	var m map[string]any
	if err := json.Unmarshal(rec.requests()[1].body, &m); err != nil || m["eventType"] != "FAIL" {
		t.Errorf("second event %v (%v)", m["eventType"], err)
	}
}
