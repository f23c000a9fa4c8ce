package render

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/verdict"
)

// TestCrashedBrowserRestartsOnce: a browser killed under the renderer is
// started again once, the page it was loading a failure to retry; killed
// again, every fetch is fatal and names the browser.
func TestCrashedBrowserRestartsOnce(t *testing.T) {
	s := newSite(t, shop)
	r := start(t, Options{Idle: 50 * time.Millisecond})
	kill := func() {
		t.Helper()
		pid := r.PID()
		if pid == 0 {
			t.Fatal("no browser runs")
		}
		if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Fetch(t.Context(), item(s.URL+"/p")); err != nil {
		t.Fatal(err)
	}
	kill()
	_, err := r.Fetch(t.Context(), item(s.URL+"/p"))
	var fe *crawl.FetchError
	if !errors.As(err, &fe) || fe.Fatal || fe.Class != verdict.ClassFailure || !strings.Contains(fe.Reason, "crashed") {
		t.Fatalf("after the first crash: %v; want a failure to retry", err)
	}
	if _, err := r.Fetch(t.Context(), item(s.URL+"/p")); err != nil {
		t.Fatalf("the restarted browser: %v", err)
	}
	kill()
	for range 2 {
		_, err = r.Fetch(t.Context(), item(s.URL+"/p"))
		if !errors.As(err, &fe) || !fe.Fatal || !strings.Contains(fe.Reason, "render: the browser "+browserPath(t)+" crashed again after its restart") {
			t.Fatalf("after the second crash: %v; want a fatal error naming the browser", err)
		}
	}
	if f := r.Facts(); f.Restarts != 1 || r.PID() != 0 {
		t.Fatalf("facts %+v, pid %d; want one restart and no browser left", f, r.PID())
	}
}

// TestHungBrowserRestartsOnce: a browser that stops answering (stopped
// with SIGSTOP) makes the page a render timeout, and is killed and
// started again; hung again, the run must stop.
func TestHungBrowserRestartsOnce(t *testing.T) {
	s := newSite(t, shop)
	// The timeout must let a page of the restarted browser render on a
	// loaded machine; a hung browser costs a timeout and the ping.
	r := start(t, Options{Timeout: 4 * time.Second, PingTimeout: 500 * time.Millisecond, Idle: 50 * time.Millisecond})
	hang := func() {
		t.Helper()
		if err := syscall.Kill(-r.PID(), syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	hang()
	_, err := r.Fetch(t.Context(), item(s.URL+"/p"))
	var fe *crawl.FetchError
	if !errors.As(err, &fe) || fe.Fatal || !strings.Contains(fe.Reason, "hung") {
		t.Fatalf("after the first hang: %v; want a failure to retry", err)
	}
	if _, err := r.Fetch(t.Context(), item(s.URL+"/p")); err != nil {
		t.Fatalf("the restarted browser: %v", err)
	}
	hang()
	_, err = r.Fetch(t.Context(), item(s.URL+"/p"))
	if !errors.As(err, &fe) || !fe.Fatal || !strings.Contains(fe.Reason, "hung again after its restart") {
		t.Fatalf("after the second hang: %v; want a fatal error", err)
	}
	if f := r.Facts(); f.Restarts != 1 || f.Timeouts != 2 {
		t.Fatalf("facts %+v; want one restart and two render timeouts", f)
	}
}

// TestStartNamesWhatFailed: a browser that does not start says so with
// the first line it wrote; Find names what it looked for.
func TestStartNamesWhatFailed(t *testing.T) {
	_, err := Find(func(string) string { return "" }, func(string) (string, error) { return "", errors.New("not found") })
	if want := "no browser found: CHROMIUM is not set and none of chromium, chromium-browser, google-chrome, headless-shell is on PATH"; err == nil || err.Error() != want {
		t.Fatalf("Find: %v, want %q", err, want)
	}
	_, err = Find(func(string) string { return "/nowhere/chrome" }, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "no browser found: CHROMIUM=/nowhere/chrome: ") {
		t.Fatalf("Find with CHROMIUM: %v", err)
	}
	dir := t.TempDir()
	fake := dir + "/chromium"
	if err := writeScript(fake, "#!/bin/sh\necho 'error while loading shared libraries: libnss3.so' >&2\nexit 127\n"); err != nil {
		t.Fatal(err)
	}
	_, err = Start(Options{Browser: fake, StartTimeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "the browser "+fake+" did not start") || !strings.Contains(err.Error(), "libnss3.so") {
		t.Fatalf("Start: %v; want the browser named and its first line of output", err)
	}
}
