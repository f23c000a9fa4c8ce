package render

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/internal/testkit/browsertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// browserPath is the browser the tests run, or a skip where there is
// none and it cannot be installed (not root): `make tools` and .ci/run
// install it, so in CI these tests run.
func browserPath(t *testing.T) string {
	t.Helper()
	path, err := Find(nil, nil)
	browsertest.Need(t, err)
	return path
}

// start starts a Renderer with o over the test defaults, closed with the
// test.
func start(t *testing.T, o Options) *Renderer {
	t.Helper()
	o.Browser = browserPath(t)
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	r, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// site is a test server that records the requests it answers.
type site struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
}

func newSite(t *testing.T, h http.HandlerFunc) *site {
	s := &site{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Clone(r.Context()))
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// all returns every request the site saw, in order.
func (s *site) all() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.seen...)
}

// requests returns the requests for path.
func (s *site) requests(path string) []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*http.Request
	for _, r := range s.seen {
		if r.URL.Path == path {
			out = append(out, r)
		}
	}
	return out
}

func item(url string) crawl.Request { return crawl.Request{URL: url, Kind: crawl.KindItem} }

// writeScript writes an executable script.
func writeScript(path, text string) error { return os.WriteFile(path, []byte(text), 0o755) }
