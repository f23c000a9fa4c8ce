package stallproxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// get asks the proxy for /, giving up after a while, and returns the
// body, or the error and whether the head (status and headers) came.
func get(t *testing.T, p *Proxy) (body string, head bool, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.Endpoint()+"/", nil)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", false, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), true, err
}

// TestProxy: the proxy forwards; frozen, nothing answers; thawed, it
// forwards again; stalling bodies, the head comes and the body never
// does; frozen on a pattern, the request holding it is not answered.
func TestProxy(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello "+r.URL.Query().Get("n"))
	}))
	defer backend.Close()
	p := Start(t, strings.TrimPrefix(backend.URL, "http://"))

	if body, _, err := get(t, p); err != nil || body != "hello " {
		t.Fatalf("forwarding: %q, %v", body, err)
	}
	p.Freeze()
	if _, head, err := get(t, p); !errors.Is(err, context.DeadlineExceeded) || head {
		t.Fatalf("frozen: head %v, err %v; want no answer", head, err)
	}
	select {
	case <-p.Stalls():
	default:
		t.Fatal("Stalls got nothing for a dropped request")
	}
	if n := p.Stalled(); n != 1 {
		t.Fatalf("Stalled = %d, want 1", n)
	}
	p.Thaw()
	if body, _, err := get(t, p); err != nil || body != "hello " {
		t.Fatalf("thawed: %q, %v", body, err)
	}
	p.StallBodies()
	if body, head, err := get(t, p); !errors.Is(err, context.DeadlineExceeded) || !head || body != "" {
		t.Fatalf("stalling bodies: %q, head %v, err %v; want the head and no body", body, head, err)
	}
	p.Thaw()
	p.FreezeOn("^GET / ")
	if _, head, err := get(t, p); !errors.Is(err, context.DeadlineExceeded) || head {
		t.Fatalf("frozen on a pattern: head %v, err %v; want no answer", head, err)
	}
	p.Thaw()
	if body, _, err := get(t, p); err != nil || body != "hello " {
		t.Fatalf("thawed again: %q, %v", body, err)
	}
	p.LoseAnswerOn("^GET / ")
	if _, head, err := get(t, p); err == nil || errors.Is(err, context.DeadlineExceeded) || head {
		t.Fatalf("an answer lost: head %v, err %v; want a reset connection", head, err)
	}
	if body, _, err := get(t, p); err != nil || body != "hello " {
		t.Fatalf("after the lost answer: %q, %v", body, err)
	}
}
