package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const robotsBody = `User-agent: *
Disallow: /private
Disallow: /search?q=
Crawl-delay: 2

User-agent: databrewbot
Disallow: /nobots
Crawl-delay: 0.5
`

// robotsServer serves robots.txt with the given status and body and counts
// its robots.txt requests.
func robotsServer(t *testing.T, status int, body string, delay time.Duration) (*url.URL, *atomic.Int64) {
	var hits atomic.Int64
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		time.Sleep(delay)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
	u, _ := url.Parse(srv.URL)
	return u, &hits
}

func at(base *url.URL, ref string) *url.URL {
	u, _ := base.Parse(ref)
	return u
}

func TestRobotsRules(t *testing.T) {
	base, hits := robotsServer(t, 200, robotsBody, 0)
	c := newTestClient(t, Config{})
	generic := NewRobots(c, "otherbot/2.0", time.Minute)
	specific := NewRobots(c, "DatabrewBot/1.0 (+https://example.com)", time.Minute)
	cases := []struct {
		r         *Robots
		path      string
		want      bool
		wantDelay time.Duration
	}{
		{generic, "/", true, 2 * time.Second},
		{generic, "/private/x", false, 2 * time.Second},
		{generic, "/search?q=go", false, 2 * time.Second},
		{generic, "/search?page=2", true, 2 * time.Second},
		{generic, "/nobots", true, 2 * time.Second},
		{specific, "/private/x", true, 500 * time.Millisecond},
		{specific, "/nobots/y", false, 500 * time.Millisecond},
	}
	for _, tc := range cases {
		ok, delay, err := tc.r.Allowed(context.Background(), at(base, tc.path))
		if err != nil || ok != tc.want || delay != tc.wantDelay {
			t.Errorf("%s %s: allowed %v delay %v err %v; want %v %v",
				tc.r.userAgent, tc.path, ok, delay, err, tc.want, tc.wantDelay)
		}
	}
	if generic.Fetches() != 1 || specific.Fetches() != 1 || hits.Load() != 2 {
		t.Errorf("fetches %d + %d, server hits %d; want one per Robots",
			generic.Fetches(), specific.Fetches(), hits.Load())
	}
}

func TestRobotsStatus(t *testing.T) {
	c := newTestClient(t, Config{})
	for status, want := range map[int]bool{404: true, 403: true, 500: false, 503: false} {
		base, _ := robotsServer(t, status, "User-agent: *\nDisallow: /\n", 0)
		ok, _, err := NewRobots(c, "bot", time.Minute).Allowed(context.Background(), at(base, "/page"))
		if err != nil || ok != want {
			t.Errorf("robots.txt status %d: allowed %v err %v, want %v", status, ok, err, want)
		}
	}
}

func TestRobotsOneFetchPerHost(t *testing.T) {
	base, hits := robotsServer(t, 200, robotsBody, 50*time.Millisecond)
	r := NewRobots(newTestClient(t, Config{}), "bot", time.Minute)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, _, err := r.Allowed(context.Background(), at(base, "/private")); ok || err != nil {
				t.Errorf("allowed %v err %v, want disallowed", ok, err)
			}
		}()
	}
	wg.Wait()
	if hits.Load() != 1 || r.Fetches() != 1 {
		t.Errorf("20 concurrent callers: %d server hits, %d fetches; want 1", hits.Load(), r.Fetches())
	}
	// Another scheme+host is a separate robots.txt.
	other := *base
	other.Host = "localhost:" + base.Port()
	r.Allowed(context.Background(), at(&other, "/x"))
	if r.Fetches() != 2 {
		t.Errorf("second host: %d fetches, want 2", r.Fetches())
	}
}

func TestRobotsNetworkErrorNotCached(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := &url.URL{Scheme: "http", Host: ln.Addr().String()}
	ln.Close()
	const retry = 100 * time.Millisecond
	r := NewRobots(newTestClient(t, Config{Timeout: time.Second}), "bot", retry)
	for i := 0; i < 3; i++ {
		ok, _, err := r.Allowed(context.Background(), at(base, "/page"))
		if !ok || err != nil {
			t.Fatalf("unreachable robots.txt: allowed %v err %v, want allowed", ok, err)
		}
	}
	if r.Fetches() != 1 {
		t.Errorf("within retryAfterError: %d fetches, want 1", r.Fetches())
	}
	time.Sleep(retry + 20*time.Millisecond)
	r.Allowed(context.Background(), at(base, "/page"))
	if r.Fetches() != 2 {
		t.Errorf("after retryAfterError: %d fetches, want 2", r.Fetches())
	}
}

func TestRobotsTimeoutAllows(t *testing.T) {
	base, _ := robotsServer(t, 200, "User-agent: *\nDisallow: /\n", 300*time.Millisecond)
	r := NewRobots(newTestClient(t, Config{Timeout: 50 * time.Millisecond}), "bot", time.Minute)
	ok, _, err := r.Allowed(context.Background(), at(base, "/page"))
	if !ok || err != nil {
		t.Errorf("robots.txt timeout: allowed %v err %v, want allowed", ok, err)
	}
}

func TestRobotsCallerCancel(t *testing.T) {
	base, _ := robotsServer(t, 200, robotsBody, 300*time.Millisecond)
	r := NewRobots(newTestClient(t, Config{}), "bot", time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, _, err := r.Allowed(ctx, at(base, "/private"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the caller's deadline", err)
	}
	// The fetch carries on for the callers that wait.
	ok, _, err := r.Allowed(context.Background(), at(base, "/private"))
	if ok || err != nil || r.Fetches() != 1 {
		t.Errorf("after a cancelled caller: allowed %v err %v fetches %d", ok, err, r.Fetches())
	}
}

func TestRobotsBadURL(t *testing.T) {
	r := NewRobots(newTestClient(t, Config{}), "bot", time.Minute)
	for _, raw := range []string{"mailto:a@b.c", "/relative", "ftp://host/x"} {
		u, _ := url.Parse(raw)
		if _, _, err := r.Allowed(context.Background(), u); err == nil {
			t.Errorf("Allowed(%q): no error", raw)
		}
	}
	if _, _, err := r.Allowed(context.Background(), nil); err == nil {
		t.Error("Allowed(nil): no error")
	}
}

func TestRobotsCrawlDelayTooLongToRepresent(t *testing.T) {
	base, _ := robotsServer(t, 200, "User-agent: *\nCrawl-delay: 1e300\n", 0)
	r := NewRobots(newTestClient(t, Config{}), "bot", time.Minute)
	ok, delay, err := r.Allowed(context.Background(), at(base, "/"))
	if err != nil || !ok || delay <= 24*time.Hour {
		t.Fatalf("allowed %v delay %v err %v; want a delay longer than any cap", ok, delay, err)
	}
}
