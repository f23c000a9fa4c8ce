package cli

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestDemoServeKeepsTheCatalogUpToCheckRunChangeAndTakeDown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan int)
	go func() { done <- demoServe(ctx, Env{Stdout: &out, Stderr: &out}, dir, "127.0.0.1:0", 30) }()
	var base string
	for range 200 {
		if m := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+) until`).FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("demo --serve ended with %d:\n%s", code, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if base == "" {
		t.Fatalf("no URL printed:\n%s", out.String())
	}
	cfg := filepath.Join(dir, "books.toml")
	for _, want := range []string{" check " + cfg, " run " + cfg, "curl -X POST " + base + "/_demo/change"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("the hints lack %q:\n%s", want, out.String())
		}
	}
	if res := runMain(t, "check", cfg); res.code != ExitOK {
		t.Fatalf("check: exit %d", res.code)
	}
	if res := runMain(t, "run", cfg); res.code != ExitOK || !strings.Contains(res.stderr, "30 new") {
		t.Fatalf("run: exit %d:\n%s", res.code, res.stderr)
	}
	post := func(path string) {
		t.Helper()
		resp, err := http.Post(base+path, "", nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %v %v", path, resp, err)
		}
		resp.Body.Close()
	}
	post("/_demo/change")
	if res := runMain(t, "run", cfg); res.code != ExitOK || !strings.Contains(res.stderr, "4 new · 3 changed") {
		t.Fatalf("run after a change: exit %d:\n%s", res.code, res.stderr)
	}
	post("/_demo/outage?status=503")
	if res := runMain(t, "run", cfg, "--max-requests", "40"); res.code != ExitFailed {
		t.Fatalf("run during the outage: exit %d, want %d:\n%s", res.code, ExitFailed, res.stderr)
	}
	post("/_demo/outage?off=1")
	// An edited config is kept by the next demo --serve.
	if err := os.WriteFile(cfg, []byte("# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("demo --serve ended with %d", code)
	}
	var out2 syncBuffer
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { done <- demoServe(ctx2, Env{Stdout: &out2, Stderr: &out2}, dir, "127.0.0.1:0", 30) }()
	for range 200 {
		if strings.Contains(out2.String(), "kept as you left it") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel2()
	<-done
	if b, _ := os.ReadFile(cfg); string(b) != "# edited\n" || !strings.Contains(out2.String(), "kept as you left it") {
		t.Fatalf("the edited config was replaced: %q\n%s", b, out2.String())
	}
}

// TestDemoServeRewritesTheConfigAnEarlierDemoLeftForAnotherPort: make demo
// serves on a free port and leaves its config behind; demo --serve then
// points that config at its own catalog, unless it was edited.
func TestDemoServeRewritesTheConfigAnEarlierDemoLeftForAnotherPort(t *testing.T) {
	gone := "http://127.0.0.1:1/catalogue/page-1.html"
	for _, c := range []struct {
		name, cfg string
		stale     bool
	}{
		{"left by a demo", demoConfig(gone), true},
		{"edited", demoConfig(gone) + "# mine\n", false},
		{"another start URL", demoConfig("http://127.0.0.1:1/x"), true},
		{"no start URL", "# edited\n", false},
	} {
		if got := staleDemoConfig([]byte(c.cfg), "http://127.0.0.1:8390"); got != c.stale {
			t.Errorf("%s: stale = %v, want %v", c.name, got, c.stale)
		}
	}
	if staleDemoConfig([]byte(demoConfig("http://127.0.0.1:8390/catalogue/page-1.html")), "http://127.0.0.1:8390") {
		t.Error("a config for this very catalog is stale")
	}

	dir := filepath.Join(t.TempDir(), "demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "books.toml")
	if err := os.WriteFile(cfg, []byte(demoConfig(gone)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan int)
	go func() { done <- demoServe(ctx, Env{Stdout: &out, Stderr: &out}, dir, "127.0.0.1:0", 30) }()
	var base string
	for range 500 {
		if m := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+) until`).FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != ExitOK || base == "" {
		t.Fatalf("demo --serve ended with %d:\n%s", code, out.String())
	}
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != demoConfig(base+"/catalogue/page-1.html") || !strings.Contains(out.String(), "written for it") {
		t.Fatalf("the config left for another port was not written anew:\n%s\n%s", b, out.String())
	}
}
