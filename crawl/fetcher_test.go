package crawl_test

import (
	"context"
	"sync"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/verdict"
)

// framedSite is the fake site whose item pages each load one more
// document (a frame, as a rendered page does) and say no memo may answer
// for them; it records the kinds it was asked for.
type framedSite struct {
	*fakeSite
	mu          sync.Mutex
	kinds       map[string]crawl.Kind
	conditional int
}

func (s *framedSite) Fetch(ctx context.Context, req crawl.Request) (*crawl.Response, error) {
	resp, err := s.fakeSite.Fetch(ctx, req)
	s.mu.Lock()
	s.kinds[req.URL] = req.Kind
	if req.Header.Get("If-None-Match") != "" {
		s.conditional++
	}
	s.mu.Unlock()
	if resp != nil && req.Kind == crawl.KindItem {
		resp.Documents, resp.Replayless = 1, true
		resp.Header.Set("ETag", `"v1"`)
	}
	return resp, err
}

// TestEngineCountsTheDocumentsAResponseLoaded: a response's further
// documents are requests, in the count and against the budget; the
// fetcher is told each URL's kind; a replayless page is never requested
// conditionally.
func TestEngineCountsTheDocumentsAResponseLoaded(t *testing.T) {
	u := newUnit(t, 1, 4)
	site := &framedSite{fakeSite: u.site, kinds: map[string]crawl.Kind{}}
	u.deps.Fetcher = site
	res := u.run()
	expectStop(t, res, verdict.StopQueueEmpty, "")
	if res.Requests.Total != 1+2*4 || res.Requests.OK != 5 || res.Items.New != 4 {
		t.Fatalf("requests %+v, items %+v; want the listing, and each item page with its frame", res.Requests, res.Items)
	}
	if site.kinds[listURL(1)] != crawl.KindListing || site.kinds[itemURL(1)] != crawl.KindItem {
		t.Fatalf("kinds asked for: %v", site.kinds)
	}
	// Replayless pages keep no validators: the next traversal asks for
	// them unconditionally, though they answered with an ETag.
	if res = u.run(); res.Items.Unchanged != 4 || site.conditional != 0 {
		t.Fatalf("second run: items %+v, %d conditional requests", res.Items, site.conditional)
	}

	u = newUnit(t, 1, 4)
	u.deps.Fetcher = &framedSite{fakeSite: u.site, kinds: map[string]crawl.Kind{}}
	u.settings.MaxRequests = 4
	res = u.run()
	expectStop(t, res, verdict.StopMaxRequests, verdict.MaxRequestsDetail(4))
	if res.Requests.Total != 5 || res.Items.New != 2 {
		t.Fatalf("requests %+v, items %+v; want the listing and two framed item pages (5 documents, one past the budget of 4)",
			res.Requests, res.Items)
	}
}

// TestEngineStopsOnAFatalFetchError: a fetcher that cannot go on stops
// the run with the error stop and its reason; the URL stays queued.
func TestEngineStopsOnAFatalFetchError(t *testing.T) {
	u := newUnit(t, 1, 4)
	fatal := "render: the browser /usr/bin/chromium crashed again after its restart"
	u.site.answer(itemURL(2), answer{err: &crawl.FetchError{Fatal: true, Reason: fatal}})
	res := u.run()
	expectStop(t, res, verdict.StopError, fatal)
	if res.Items.New != 1 || res.Requests.Failed != 0 || res.Traversal.Queued != 3 || res.Traversal.Completed {
		t.Fatalf("items %+v, requests %+v, traversal %+v; want item 1 stored, no failure counted, the rest queued",
			res.Items, res.Requests, res.Traversal)
	}
}
