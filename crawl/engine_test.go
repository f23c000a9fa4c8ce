package crawl_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/pages"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// netFetcher is a plain net/http Fetcher for the engine's own tests.
type netFetcher struct{ c *http.Client }

func (f netFetcher) Fetch(ctx context.Context, r crawl.Request) (*crawl.Response, error) {
	u := r.URL
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.c.Do(req)
	if err == nil {
		defer resp.Body.Close()
		var body []byte
		if body, err = io.ReadAll(resp.Body); err == nil {
			return &crawl.Response{URL: u, FinalURL: resp.Request.URL, Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
		}
	}
	if ctx.Err() != nil {
		return nil, &crawl.FetchError{Canceled: true, Reason: "canceled", Err: err}
	}
	return nil, &crawl.FetchError{Class: verdict.ClassFailure, Reason: "connection error", Err: err}
}

// countingStore counts the transactions and the page memos the engine
// asks for.
type countingStore struct {
	*state.DB
	commits, memos atomic.Int64
}

func (s *countingStore) Commit(b *crawl.Batch) (crawl.Committed, error) {
	s.commits.Add(1)
	return s.DB.Commit(b)
}

func (s *countingStore) Memo(url string) (*crawl.PageMemo, error) {
	s.memos.Add(1)
	return s.DB.Memo(url)
}

var spec = extract.Spec{
	Listing: extract.ListingSpec{ItemLinks: "article.product_pod h3 a", NextPage: "li.next a"},
	Key:     "upc",
	Fields: []extract.FieldSpec{
		{Name: "title", CSS: []string{"div.product_main h1"}, Required: true},
		{Name: "price", CSS: []string{"div.product_main p.price_color"}, Type: extract.TypeFloat64, Regex: `[0-9]+\.[0-9]+`, Required: true},
		{Name: "upc", CSS: []string{"table tr:nth-child(1) td"}, Required: true},
	},
}

type harness struct {
	t      *testing.T
	srv    *httptest.Server
	site   *catalogsite.Site
	dir    string
	client *http.Client
	// memos counts the page memos the last run asked its store for.
	memos int64
}

func newHarness(t *testing.T, opts catalogsite.Options) *harness {
	h := &harness{t: t, site: catalogsite.New(opts), dir: t.TempDir(), client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	h.srv = httptest.NewServer(h.site)
	t.Cleanup(func() {
		h.client.CloseIdleConnections()
		h.srv.Close()
	})
	return h
}

func (h *harness) run(ctx context.Context, concurrency int) (crawl.Result, int64) {
	h.t.Helper()
	db, err := state.Open(h.dir, state.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	defer db.Close()
	x, err := extract.Compile(spec)
	if err != nil {
		h.t.Fatal(err)
	}
	store := &countingStore{DB: db}
	u, _ := url.Parse(h.srv.URL)
	e, err := crawl.New(crawl.Settings{
		RunID: "test", StartURLs: []string{catalogsite.StartURL(h.srv.URL)}, AllowedDomains: []string{u.Hostname()},
		Concurrency: concurrency, Retries: 2, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		Thresholds: verdict.DefaultThresholds(),
	}, crawl.Deps{Fetcher: netFetcher{c: h.client}, Store: store, Readers: htmlReaders(h.t, x, 512)})
	if err != nil {
		h.t.Fatal(err)
	}
	res, err := e.Run(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	h.memos = store.memos.Load()
	return res, store.commits.Load()
}

// TestEngineAsksNoMemoOfAPageItQueuedFresh crawls a site twice: the first
// crawl queues every page but the start fresh (the state never held its
// URL, crawl.FreshTeller), so it asks the state for the start's memo
// only; the second asks for the memo of every page.
func TestEngineAsksNoMemoOfAPageItQueuedFresh(t *testing.T) {
	h := newHarness(t, catalogsite.Options{Items: 300})
	first, _ := h.run(context.Background(), 8)
	firstMemos := h.memos
	if first.Stop != verdict.StopQueueEmpty || first.Items.New != 300 || firstMemos != 1 {
		t.Fatalf("first crawl: %d memos asked, result %+v; want 1 (the start's)", firstMemos, first)
	}
	second, _ := h.run(context.Background(), 8)
	if second.Stop != verdict.StopQueueEmpty || h.memos < int64(second.Requests.Total)-1 {
		t.Fatalf("second crawl: %d memos asked for %d requests, result %+v; want one a page", h.memos, second.Requests.Total, second)
	}
	t.Logf("memos asked: %d in the first crawl, %d in the second (%d requests)", firstMemos, h.memos, second.Requests.Total)
}

func TestEngineCommitsManyItemsPerTransaction(t *testing.T) {
	h := newHarness(t, catalogsite.Options{Items: 3000})
	res, commits := h.run(context.Background(), 16)
	if res.Stop != verdict.StopQueueEmpty || res.Items.New != 3000 {
		t.Fatalf("result = %+v", res)
	}
	// 3,150 pages: far fewer transactions than pages.
	if commits > 300 {
		t.Fatalf("%d commits for %d pages: batches are too small", commits, res.Requests.Total)
	}
	t.Logf("%d pages in %d transactions", res.Requests.Total, commits)
}

// TestEngineLosesNothingAcrossInterruptions interrupts runs at arbitrary
// moments until a traversal completes without gaps: every item is stored
// exactly once as new, however the runs were cut. (A loaded machine can
// make a request fail; its URL is fetched again by a later run.)
func TestEngineLosesNothingAcrossInterruptions(t *testing.T) {
	const items = 1500
	h := newHarness(t, catalogsite.Options{Items: items, Latency: time.Millisecond})
	total, runs := 0, 0
	for ; runs < 50; runs++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(30+runs*7)*time.Millisecond)
		res, _ := h.run(ctx, 8)
		cancel()
		total += res.Items.New
		if res.Items.Changed != 0 {
			t.Fatalf("run %d: %d changed items on an unchanged site", runs, res.Items.Changed)
		}
		if res.Requests.Failed > 0 {
			t.Logf("run %d: %d failed requests (%v); the next runs fetch them again", runs, res.Requests.Failed, res.Gaps)
		}
		if res.Stop == verdict.StopQueueEmpty {
			if res.CoverageGaps == 0 {
				break
			}
			continue
		}
		if res.Stop != verdict.StopInterrupted || res.Detail != "Deadline reached" {
			t.Fatalf("run %d stopped %s (%s)", runs, res.Stop, res.Detail)
		}
		if res.Traversal.Queued == 0 {
			t.Fatalf("run %d was interrupted but left nothing queued", runs)
		}
	}
	if total != items {
		t.Fatalf("%d runs stored %d new items, want exactly %d", runs+1, total, items)
	}
	t.Logf("%d interrupted runs, then a complete one", runs)
}

func TestEngineRefusesBadSettings(t *testing.T) {
	x, _ := extract.Compile(spec)
	_, err := crawl.New(crawl.Settings{StartURLs: []string{"http://a.example/"}, AllowedDomains: []string{"b.example"}},
		crawl.Deps{Fetcher: netFetcher{}, Store: &countingStore{}, Readers: htmlReaders(t, x, 0)})
	if err == nil {
		t.Fatal("a start URL outside allowed_domains must be refused")
	}
	if _, err := crawl.New(crawl.Settings{StartURLs: []string{"http://a.example/"}}, crawl.Deps{}); err == nil {
		t.Fatal("missing collaborators must be refused")
	}
	var fe *crawl.FetchError
	if !errors.As(error(&crawl.FetchError{Reason: "x"}), &fe) {
		t.Fatal("FetchError must be an error")
	}
}

// htmlReaders are the readers of HTML listing and item pages that x
// extracts.
func htmlReaders(t testing.TB, x *extract.Extractor, minBody int64) map[crawl.Kind]crawl.PageReader {
	t.Helper()
	h := pages.HTML{MinBodyBytes: minBody}
	listing, err := pages.NewHTMLListing(x, h)
	if err != nil {
		t.Fatal(err)
	}
	item, err := pages.NewHTMLItem(x, h)
	if err != nil {
		t.Fatal(err)
	}
	return map[crawl.Kind]crawl.PageReader{crawl.KindListing: listing, crawl.KindItem: item}
}
