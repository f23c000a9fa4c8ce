package stage

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// revisitSection revisits item pages between one and four days apart, and
// fetches one at once when its card on a listing changes.
const revisitSection = `
[revisit]
card = "article.product_pod"
min_after = "1d"
max_after = "4d"

[export]
tombstones = true
`

// TestRevisit_ItemPagesAreFetchedWhenNewCardChangedOrDue walks a catalog
// of 60 items through simulated days: a rerun fetches only the listing
// pages; a price change (on the card) and a new item are fetched at once;
// a stock change (on the item page only) is found when its page is due;
// a removed item is tombstoned though the other items' pages were
// skipped.
func TestRevisit_ItemPagesAreFetchedWhenNewCardChangedOrDue(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	cfg := f.config(nil, revisitSection)
	day0 := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	at := func(d time.Duration) Options { return Options{Clock: fixedClock{at: day0.Add(d)}} }

	rep := f.run(cfg, at(0))
	if rep.Items.New != 60 || rep.Items.Skipped != 0 {
		t.Fatalf("run 1: items %+v", rep.Items)
	}
	listings := rep.Requests.OK - 60

	// An hour later nothing is due: only the listing pages are fetched.
	f.site.ResetStats()
	rep = f.run(cfg, at(time.Hour))
	if rep.Items.Skipped != 60 || rep.Requests.Total != listings || rep.Items.New+rep.Items.Changed+rep.Items.Unchanged != 0 {
		t.Fatalf("rerun within min_after: requests %+v, items %+v; want %d listing pages and 60 skipped", rep.Requests, rep.Items, listings)
	}
	if rep.Traversal.Gaps != 0 || !rep.Traversal.Completed {
		t.Fatalf("skips made the traversal unclean: %+v", rep.Traversal)
	}

	// A card-visible change, a page-only change, a new item, a removal.
	f.site.SetPrice(7, 777.7)
	f.site.SetStock(9, 3)
	f.site.Add(1)
	f.site.Remove(12)
	f.site.ResetStats()
	rep = f.run(cfg, at(2*time.Hour))
	if rep.Items.Changed != 1 || rep.Items.New != 1 || rep.Items.Removed != 1 || rep.Items.Skipped != 58 {
		t.Fatalf("after one catalog step: items %+v; want item 7 changed, 1 new, item 12 removed, the rest skipped", rep.Items)
	}
	for _, id := range []int{7, 61} {
		if n := f.site.PageRequests(itemPath(id)); n != 1 {
			t.Fatalf("item %d fetched %d times, want once", id, n)
		}
	}
	if n := f.site.PageRequests(itemPath(9)); n != 0 {
		t.Fatalf("item 9, whose change shows only on its page, was fetched before it was due (%d)", n)
	}

	// A day later every page is due: the stock change is found, the
	// unchanged pages answer 304.
	rep = f.run(cfg, at(26*time.Hour))
	if rep.Items.Changed != 1 || rep.Items.Skipped != 0 || rep.Requests.NotModified < 55 {
		t.Fatalf("a day later: requests %+v, items %+v; want item 9 changed, every page fetched", rep.Requests, rep.Items)
	}
	rows := readRun(t, rep.Export.Path)
	if it, _ := f.site.Item(9); len(rows) != 1 || rows[0].key != it.UPC {
		t.Fatalf("a day later exported %+v, want item 9", rows)
	}

	// Unchanged pages now wait one and a half days (less jitter): an hour
	// past a day, nothing is due again.
	rep = f.run(cfg, at(26*time.Hour+25*time.Hour))
	if rep.Items.Skipped < 58 {
		t.Fatalf("after the intervals grew: items %+v; want the unchanged pages skipped", rep.Items)
	}
}

func itemPath(id int) string { return "/catalogue/item-" + strconv.Itoa(id) + ".html" }

// TestRevisit_ListingChainIsRequestedAhead: an unchanged rerun under a
// revisit policy requests the listing pages its memos remember ahead of
// the chain (see crawl's lookahead), so more than one is in flight at
// once, but never more requests than concurrency allows; every request
// the site saw is in the verdict's count, and the rerun comes to what a
// rerun one page after another does. A catalog that shrank leaves pages
// requested ahead that no worker takes: they are counted too.
func TestRevisit_ListingChainIsRequestedAhead(t *testing.T) {
	listingChain(t, []int{1}, true)
}

// TestRevisit_RequestsAheadStayWithinConcurrency: with four ways into
// the chain, the lookahead follows it from each, and the requests in
// flight still never exceed concurrency.
func TestRevisit_RequestsAheadStayWithinConcurrency(t *testing.T) {
	listingChain(t, []int{1, 5, 9, 13}, false)
}

// listingChain runs the lookahead's trials from the listing pages starts
// (their numbers); ahead checks that listing pages were in flight at once
// in the unchanged rerun, which several start pages give anyway.
func listingChain(t *testing.T, starts []int, ahead bool) {
	f := newFixture(t, catalogsite.Options{Items: 400, Latency: 5 * time.Millisecond})
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if strings.Contains(r.URL.Path, "page-") {
			// Slower than an item page: a listing page requested ahead
			// is still in flight while the workers request item pages.
			time.Sleep(20 * time.Millisecond)
		}
		next.ServeHTTP(w, r)
	})
	// Requests in flight, counted where the stage makes them: from the
	// transport's RoundTrip until the response's body is closed.
	tr := &inFlightTransport{next: http.DefaultTransport}
	var startURLs []string
	for _, n := range starts {
		startURLs = append(startURLs, fmt.Sprintf("%s/catalogue/page-%d.html", f.srv.URL, n))
	}
	cfg := f.config(map[string]string{"concurrency": "3"}, revisitSection, startURLs...)
	day0 := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	at := func(d time.Duration) Options { return Options{Clock: fixedClock{at: day0.Add(d)}, Transport: tr} }

	rep := f.run(cfg, at(0))
	listings := rep.Requests.OK - 400
	if rep.Items.New != 400 || listings != f.site.ListingPages() {
		t.Fatalf("run 1: requests %+v, items %+v", rep.Requests, rep.Items)
	}
	reset := func() {
		f.site.ResetStats()
		tr.reset()
	}

	reset()
	rep = f.run(cfg, at(time.Hour))
	gotMost, gotListings := tr.most()
	site := int(f.site.Requests())
	if rep.Items.Skipped != 400 || rep.Requests.Total != listings || rep.Requests.NotModified != listings || site != listings {
		t.Fatalf("rerun: requests %+v (the site saw %d), items %+v; want %d listing pages answering 304 and 400 skipped",
			rep.Requests, site, rep.Items, listings)
	}
	if ahead && gotListings < 3 {
		t.Errorf("rerun: at most %d listing requests in flight at once, concurrency is 3; the chain was not followed as its requests went out", gotListings)
	}
	if gotMost > 3 {
		t.Errorf("rerun: %d requests in flight at once, concurrency is 3", gotMost)
	}
	if rep.Traversal.Gaps != 0 || !rep.Traversal.Completed || rep.Items.Removed != 0 {
		t.Fatalf("rerun: traversal %+v, items %+v", rep.Traversal, rep.Items)
	}

	// The last 100 items go: the last listing pages answer 404 or end
	// sooner, and what was requested ahead of them is not taken.
	for id := 301; id <= 400; id++ {
		f.site.Remove(id)
	}
	reset()
	rep = f.run(cfg, at(2*time.Hour))
	site = int(f.site.Requests())
	if rep.Requests.Total != site {
		t.Errorf("shrunk: the verdict counts %d requests, the site saw %d", rep.Requests.Total, site)
	}
	t.Logf("shrunk: %d requests, %d listing pages before", site, listings)
	if rep.Items.Removed != 100 || rep.Items.Skipped != 300 {
		t.Errorf("shrunk: items %+v; want 100 removed and 300 skipped", rep.Items)
	}

	// Past max_after every item page is due: the workers request them
	// while the listing pages are requested ahead, all within
	// concurrency.
	reset()
	rep = f.run(cfg, at(5*24*time.Hour))
	gotMost, _ = tr.most()
	if rep.Items.Skipped != 0 || rep.Requests.NotModified < 300 || rep.Requests.Total != int(f.site.Requests()) {
		t.Errorf("all due: requests %+v (the site saw %d), items %+v; want every page requested", rep.Requests, f.site.Requests(), rep.Items)
	}
	if gotMost > 3 {
		t.Errorf("all due: %d requests in flight at once, concurrency is 3", gotMost)
	}
}

// inFlightTransport counts the page requests in flight through it (not
// robots.txt), all and of listing pages, and the most at once.
type inFlightTransport struct {
	next http.RoundTripper

	mu                      sync.Mutex
	all, listings           int
	mostAll, mostOfListings int
}

func (t *inFlightTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/robots.txt" {
		return t.next.RoundTrip(r)
	}
	listing := strings.Contains(r.URL.Path, "page-")
	t.add(listing, 1)
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		t.add(listing, -1)
		return nil, err
	}
	resp.Body = &countedBody{ReadCloser: resp.Body, done: func() { t.add(listing, -1) }}
	return resp, nil
}

func (t *inFlightTransport) add(listing bool, d int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.all += d
	t.mostAll = max(t.mostAll, t.all)
	if listing {
		t.listings += d
		t.mostOfListings = max(t.mostOfListings, t.listings)
	}
}

func (t *inFlightTransport) most() (all, listings int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mostAll, t.mostOfListings
}

func (t *inFlightTransport) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mostAll, t.mostOfListings = 0, 0
}

// countedBody calls done once, when the body is closed.
type countedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *countedBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}
