package crawl_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/crawl/memstore"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/verdict"
)

// fakeSite is a catalog site in memory, served through crawl.Fetcher:
// listing pages /list/1 to /list/<listings>, each linking perPage item
// pages and the next listing page, and item pages /item/<n> with the key
// upc-<n>. A URL can be given scripted answers, served in turn, the last
// one for good.
type fakeSite struct {
	listings, perPage int

	mu      sync.Mutex
	script  map[string][]answer
	fetched []string
}

// answer is one scripted answer: an error, or a status with a body; the
// zero answer is the page the site serves at the URL.
type answer struct {
	status int
	body   string
	err    error
}

// Scripted answers.
var (
	thePage     = answer{}
	unavailable = answer{status: http.StatusServiceUnavailable, body: "try later"}
	timeout     = answer{err: &crawl.FetchError{Class: verdict.ClassFailure, Reason: "timeout"}}
)

const siteHost = "shop.test"

func listURL(n int) string { return fmt.Sprintf("http://%s/list/%d", siteHost, n) }
func itemURL(n int) string { return fmt.Sprintf("http://%s/item/%d", siteHost, n) }

func newFakeSite(listings, perPage int) *fakeSite {
	return &fakeSite{listings: listings, perPage: perPage, script: map[string][]answer{}}
}

// answer scripts the answers to a URL.
func (s *fakeSite) answer(u string, as ...answer) { s.script[u] = as }

// Fetch answers a request from the script or with the site's page.
func (s *fakeSite) Fetch(ctx context.Context, req crawl.Request) (*crawl.Response, error) {
	u := req.URL
	if err := ctx.Err(); err != nil {
		return nil, &crawl.FetchError{Canceled: true, Reason: "canceled", Err: err}
	}
	s.mu.Lock()
	s.fetched = append(s.fetched, u)
	a := thePage
	if as := s.script[u]; len(as) > 0 {
		a = as[0]
		if len(as) > 1 {
			s.script[u] = as[1:]
		}
	}
	s.mu.Unlock()
	if a.err != nil {
		return nil, a.err
	}
	if a == thePage {
		a = s.page(u)
	}
	final, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	return &crawl.Response{URL: u, FinalURL: final, Status: a.status, Header: http.Header{}, Body: []byte(a.body)}, nil
}

// page is what the site serves at u.
func (s *fakeSite) page(u string) answer {
	path := strings.TrimPrefix(u, "http://"+siteHost)
	if n, ok := number(path, "/list/"); ok && n <= s.listings {
		var links []int
		for i := (n-1)*s.perPage + 1; i <= n*s.perPage; i++ {
			links = append(links, i)
		}
		next := 0
		if n < s.listings {
			next = n + 1
		}
		return answer{status: http.StatusOK, body: listingHTML(links, next)}
	}
	if n, ok := number(path, "/item/"); ok && n <= s.listings*s.perPage {
		return answer{status: http.StatusOK, body: itemHTML(n, fmt.Sprintf("upc-%d", n))}
	}
	return answer{status: http.StatusNotFound, body: "not found"}
}

func number(path, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(path, prefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

// listingHTML is a listing page with links to the items and to the next
// listing page (none when next is 0).
func listingHTML(items []int, next int) string {
	var b strings.Builder
	b.WriteString("<html><body><ol>\n")
	for _, n := range items {
		fmt.Fprintf(&b, "<li><article class=\"product_pod\"><h3><a href=\"/item/%d\">Item %d</a></h3></article></li>\n", n, n)
	}
	b.WriteString("</ol>\n")
	if next > 0 {
		fmt.Fprintf(&b, "<ul class=\"pager\"><li class=\"next\"><a href=\"/list/%d\">next</a></li></ul>\n", next)
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// itemHTML is item n's page, with key upc.
func itemHTML(n int, upc string) string {
	return fmt.Sprintf("<html><body><div class=\"product_main\"><h1>Item %d</h1><p class=\"price_color\">£%d.50</p></div>\n"+
		"<table><tr><th>UPC</th><td>%s</td></tr></table></body></html>\n", n, n, upc)
}

// fetches returns the URLs fetched, in order, and forgets them.
func (s *fakeSite) fetches() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.fetched
	s.fetched = nil
	return f
}

// fakeClock stands still, and its Sleep returns at once, noting how long
// it was asked to wait.
type fakeClock struct {
	mu    sync.Mutex
	slept []time.Duration
}

func (c *fakeClock) Now() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	return ctx.Err()
}

// sleeps counts the waits of d.
func (c *fakeClock) sleeps(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.slept {
		if s == d {
			n++
		}
	}
	return n
}

// The waits the unit tests configure, told apart by their length.
const (
	retryPassDelay = 7 * time.Minute
	pause          = time.Hour
)

// unit runs the engine on a fake site and a memstore: no HTTP, no state
// file. Tests adjust settings and deps before run.
type unit struct {
	t        *testing.T
	site     *fakeSite
	store    *memstore.Store
	clock    *fakeClock
	log      bytes.Buffer
	settings crawl.Settings
	deps     crawl.Deps
}

func newUnit(t *testing.T, listings, perPage int) *unit {
	x, err := extract.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	u := &unit{t: t, site: newFakeSite(listings, perPage), store: memstore.New(), clock: &fakeClock{}}
	u.settings = crawl.Settings{
		RunID: "unit", StartURLs: []string{listURL(1)}, AllowedDomains: []string{siteHost},
		Concurrency: 1, Retries: 2, Backoff: time.Millisecond, MaxBackoff: time.Millisecond,
		RetryPassDelay: retryPassDelay, Thresholds: verdict.DefaultThresholds(),
	}
	u.deps = crawl.Deps{Fetcher: u.site, Store: u.store, Readers: htmlReaders(t, x, 0), Clock: u.clock,
		Logger: slog.New(slog.NewTextHandler(&u.log, nil))}
	return u
}

// run runs the engine once and returns its result.
func (u *unit) run() crawl.Result {
	u.t.Helper()
	e, err := crawl.New(u.settings, u.deps)
	if err != nil {
		u.t.Fatal(err)
	}
	res, err := e.Run(context.Background())
	if err != nil {
		u.t.Fatalf("run: %v", err)
	}
	return res
}
