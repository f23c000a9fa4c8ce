package catalogsite

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// statuses GETs path n times and returns the statuses.
func statuses(t *testing.T, c *http.Client, base, path string, n int) []int {
	t.Helper()
	var out []int
	for i := 0; i < n; i++ {
		out = append(out, fetch(t, c, base+path).status)
	}
	return out
}

func TestFaultStatus(t *testing.T) {
	site, srv := newServer(t, Options{})
	site.AddFault(Fault{Kind: FaultStatus, PathPrefix: "/catalogue/item-1.html"})
	site.AddFault(Fault{Kind: FaultStatus, Status: 503, RetryAfter: "5", PathPrefix: "/catalogue/item-2.html"})
	c := srv.Client()
	r := fetch(t, c, srv.URL+"/catalogue/item-1.html")
	if r.status != 500 || r.header.Get("Retry-After") != "" || !strings.Contains(string(r.body), "500") {
		t.Errorf("default status fault: %d %q %q", r.status, r.header.Get("Retry-After"), r.body)
	}
	r = fetch(t, c, srv.URL+"/catalogue/item-2.html")
	if r.status != 503 || r.header.Get("Retry-After") != "5" {
		t.Errorf("503 fault: %d %q", r.status, r.header.Get("Retry-After"))
	}
	fetchOK(t, c, srv.URL+"/catalogue/item-3.html")
	if site.Served(FaultStatus) != 2 {
		t.Errorf("Served(FaultStatus) = %d, want 2", site.Served(FaultStatus))
	}
}

func TestFaultTooMany(t *testing.T) {
	site, srv := newServer(t, Options{})
	site.AddFault(Fault{Kind: FaultTooMany, To: 2})
	site.AddFault(Fault{Kind: FaultTooMany, RetryAfter: "Wed, 21 Oct 2037 07:28:00 GMT", To: 3})
	c := srv.Client()
	for _, want := range []string{"1", "Wed, 21 Oct 2037 07:28:00 GMT"} {
		r := fetch(t, c, StartURL(srv.URL))
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != want {
			t.Errorf("got %d Retry-After %q, want 429 %q", r.status, r.header.Get("Retry-After"), want)
		}
	}
	fetchOK(t, c, StartURL(srv.URL))
	if site.Served(FaultTooMany) != 2 {
		t.Errorf("Served(FaultTooMany) = %d", site.Served(FaultTooMany))
	}
}

func TestFaultHangUntilClientGivesUp(t *testing.T) {
	site, srv := newServer(t, Options{})
	site.AddFault(Fault{Kind: FaultHang, To: 2})
	c := srv.Client()
	c.Timeout = 150 * time.Millisecond
	start := time.Now()
	_, err := c.Get(StartURL(srv.URL))
	var uerr *url.Error
	if !errors.As(err, &uerr) || !uerr.Timeout() {
		t.Fatalf("want a client timeout, got %v", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("returned after %v", d)
	}
	c.Timeout = 5 * time.Second
	fetchOK(t, c, StartURL(srv.URL))
	if site.Served(FaultHang) != 1 {
		t.Errorf("Served(FaultHang) = %d", site.Served(FaultHang))
	}
}

func TestFaultHangThenAnswer(t *testing.T) {
	site, srv := newServer(t, Options{})
	site.AddFault(Fault{Kind: FaultHang, Hang: 120 * time.Millisecond})
	start := time.Now()
	r := fetchOK(t, srv.Client(), srv.URL+"/catalogue/item-5.html")
	if d := time.Since(start); d < 120*time.Millisecond {
		t.Errorf("answered after %v, want >= 120ms", d)
	}
	it, _ := site.Item(5)
	checkItemDoc(t, parse(t, r.body), it)
}

func TestFaultReset(t *testing.T) {
	site, srv := newServer(t, Options{})
	site.AddFault(Fault{Kind: FaultReset, From: 1, To: 2})
	_, err := noKeepAlive().Get(StartURL(srv.URL))
	if err == nil {
		t.Fatal("want an error from a reset connection")
	}
	// On Linux a SO_LINGER 0 close reliably reaches the client as a reset;
	// elsewhere accept what the brief allows.
	msg := err.Error()
	if runtime.GOOS == "linux" && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("error %v is not ECONNRESET", err)
	} else if !errors.Is(err, syscall.ECONNRESET) && !strings.Contains(msg, "reset") && !strings.Contains(msg, "EOF") {
		t.Errorf("error %v is not a connection reset", err)
	}
	fetchOK(t, noKeepAlive(), StartURL(srv.URL))
	if site.Served(FaultReset) != 1 || site.Requests() != 2 {
		t.Errorf("Served(FaultReset) = %d, Requests = %d", site.Served(FaultReset), site.Requests())
	}
}

func TestFaultStub(t *testing.T) {
	site, srv := newServer(t, Options{})
	site.AddFault(Fault{Kind: FaultStub})
	r := fetch(t, srv.Client(), StartURL(srv.URL))
	if r.status != 200 || len(r.body) != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("stub: %d, %d bytes, %q", r.status, len(r.body), r.header.Get("Content-Type"))
	}
	if !strings.Contains(string(r.body), "</html>") {
		t.Errorf("stub body %q", r.body)
	}
}

func TestFaultTruncated(t *testing.T) {
	site, srv := newServer(t, Options{})
	site.AddFault(Fault{Kind: FaultTruncated, PathPrefix: "/catalogue/"})
	for _, p := range []string{"/catalogue/item-1.html", "/catalogue/item-999.html"} {
		resp, err := srv.Client().Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: status %d, read error %v, want 200 and unexpected EOF", p, resp.StatusCode, err)
		}
		if len(body) == 0 || int64(len(body)) >= resp.ContentLength {
			t.Errorf("%s: read %d of %d bytes", p, len(body), resp.ContentLength)
		}
	}
	if site.Served(FaultTruncated) != 2 {
		t.Errorf("Served(FaultTruncated) = %d", site.Served(FaultTruncated))
	}
}

func TestFaultNotFoundGoneEmpty(t *testing.T) {
	site, srv := newServer(t, Options{})
	site.AddFault(Fault{Kind: FaultNotFound, From: 1, To: 2})
	site.AddFault(Fault{Kind: FaultGone, From: 2, To: 3})
	site.AddFault(Fault{Kind: FaultEmpty, From: 3, To: 4})
	c := srv.Client()
	u := srv.URL + "/catalogue/item-1.html"
	if r := fetch(t, c, u); r.status != 404 {
		t.Errorf("not-found fault: %d", r.status)
	}
	if r := fetch(t, c, u); r.status != 410 {
		t.Errorf("gone fault: %d", r.status)
	}
	if r := fetch(t, c, u); r.status != 200 || len(r.body) != 0 || r.header.Get("Content-Length") != "0" {
		t.Errorf("empty fault: %d, %d bytes", r.status, len(r.body))
	}
	fetchOK(t, c, u)
	for k, want := range map[FaultKind]int64{FaultNotFound: 1, FaultGone: 1, FaultEmpty: 1, FaultStub: 0} {
		if got := site.Served(k); got != want {
			t.Errorf("Served(%v) = %d, want %d", k, got, want)
		}
	}
}

func TestFaultOrdinalRange(t *testing.T) {
	site, srv := newServer(t, Options{})
	site.AddFault(Fault{Kind: FaultStatus, Status: 502, From: 3, To: 5})
	site.AddFault(Fault{Kind: FaultStatus, Status: 503, From: 7})
	got := statuses(t, srv.Client(), srv.URL, "/catalogue/item-1.html", 8)
	if want := []int{200, 200, 502, 502, 200, 200, 503, 503}; !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
}

func TestFaultTimeWindow(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	site, srv := newServer(t, Options{Now: clock})
	c := srv.Client()
	site.AddFault(Fault{Kind: FaultStatus, Status: 503, Until: 300 * time.Millisecond, PathPrefix: "/catalogue/item-1."})
	site.AddFault(Fault{Kind: FaultStatus, Status: 502, After: 300 * time.Millisecond, PathPrefix: "/catalogue/item-2."})
	advance(time.Hour)
	site.Rebase()
	advance(299 * time.Millisecond)
	a, b := fetch(t, c, srv.URL+"/catalogue/item-1.html"), fetch(t, c, srv.URL+"/catalogue/item-2.html")
	if a.status != 503 || b.status != 200 {
		t.Errorf("inside the first window: %d %d, want 503 200", a.status, b.status)
	}
	advance(time.Millisecond)
	a, b = fetch(t, c, srv.URL+"/catalogue/item-1.html"), fetch(t, c, srv.URL+"/catalogue/item-2.html")
	if a.status != 200 || b.status != 502 {
		t.Errorf("at 300ms: %d %d, want 200 502", a.status, b.status)
	}
	site.Rebase()
	if a = fetch(t, c, srv.URL+"/catalogue/item-1.html"); a.status != 503 {
		t.Errorf("after Rebase: %d, want 503", a.status)
	}
}

func TestFaultPathPrefixMatchAndOrder(t *testing.T) {
	site, srv := newServer(t, Options{})
	c := srv.Client()
	site.AddFault(Fault{Kind: FaultStatus, Status: 403, PathPrefix: "/catalogue/item-",
		Match: func(ord int64, r *http.Request) bool { return ord%2 == 0 && r.Method == http.MethodGet }})
	site.AddFault(Fault{Kind: FaultStatus, Status: 408, PathPrefix: "/catalogue/item-"})
	got := []int{
		fetch(t, c, srv.URL+"/catalogue/item-1.html").status, // 1
		fetch(t, c, srv.URL+"/catalogue/item-1.html").status, // 2
		fetch(t, c, StartURL(srv.URL)).status,                // 3
		fetch(t, c, StartURL(srv.URL)).status,                // 4
		fetch(t, c, srv.URL+"/catalogue/item-2.html").status, // 5
	}
	if want := []int{408, 403, 200, 200, 408}; !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
	site.ClearFaults()
	fetchOK(t, c, srv.URL+"/catalogue/item-1.html")
}

func TestFaultOnMissingPage(t *testing.T) {
	site, srv := newServer(t, Options{Items: 5})
	c := srv.Client()
	site.AddFault(Fault{Kind: FaultStub, PathPrefix: "/catalogue/item-99."})
	site.AddFault(Fault{Kind: FaultHang, Hang: time.Millisecond, PathPrefix: "/catalogue/item-98."})
	if r := fetch(t, c, srv.URL+"/catalogue/item-99.html"); r.status != 200 || len(r.body) != 200 {
		t.Errorf("stub on a missing page: %d, %d bytes", r.status, len(r.body))
	}
	if r := fetch(t, c, srv.URL+"/catalogue/item-98.html"); r.status != 404 {
		t.Errorf("hang then answer on a missing page: %d", r.status)
	}
}

func TestRobotsNeverFaulted(t *testing.T) {
	site, srv := newServer(t, Options{})
	site.AddFault(Fault{Kind: FaultStatus})
	if r := fetch(t, srv.Client(), srv.URL+"/robots.txt"); r.status != 200 {
		t.Errorf("robots status %d", r.status)
	}
	if site.Requests() != 0 || site.Served(FaultStatus) != 0 {
		t.Errorf("robots counted: %d %d", site.Requests(), site.Served(FaultStatus))
	}
}

func TestFaultKindNames(t *testing.T) {
	for k := FaultKind(0); k < numFaultKinds; k++ {
		if got, ok := ParseFaultKind(k.String()); !ok || got != k {
			t.Errorf("ParseFaultKind(%q) = %v, %v", k.String(), got, ok)
		}
	}
	if _, ok := ParseFaultKind("nope"); ok {
		t.Error("ParseFaultKind accepted nope")
	}
	if FaultReset.String() != "reset" || FaultKind(42).String() != "FaultKind(42)" {
		t.Error("String")
	}
	if len(stubBody) != 200 {
		t.Errorf("stub is %d bytes", len(stubBody))
	}
}

func TestStepChangesAboutOnePercentEach(t *testing.T) {
	s := New(Options{Items: 10000})
	before := map[int]Item{}
	for _, it := range s.Items() {
		before[it.ID] = it
	}
	c := s.Step(1)
	if c != (StepCounts{Removed: 100, Repriced: 200, Restocked: 100, Added: 100}) {
		t.Fatalf("step = %+v", c)
	}
	var removed, repriced, restocked, added int
	for _, it := range s.Items() {
		old, ok := before[it.ID]
		switch {
		case !ok:
			added++
		case it.Removed:
			removed++
		case it.Price != old.Price:
			repriced++
		case it.Stock != old.Stock:
			restocked++
		}
	}
	if removed != 100 || repriced != 200 || restocked != 100 || added != 100 {
		t.Fatalf("the catalog shows %d removed, %d repriced, %d restocked, %d added", removed, repriced, restocked, added)
	}
	if c2 := s.Step(2); c2 != c {
		t.Fatalf("second step = %+v; 10,000 items are visible again, so want %+v", c2, c)
	}
}
