package stage

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// sessionLinks serves the catalog site with a session ID in every item
// link of its listing pages, as osCommerce (?osCsid=) and Java shops
// (;jsessionid=) do: a fresh one each time the test calls renew. Item
// pages answer whatever session ID their URL carries. The parameter names
// are the test's: "query" and "path" use names the built-in ignore_params
// list lacks (?sid=, ;sessid=), so only the moves hold them; "oscsid" and
// "jsessionid" the real ones.
type sessionLinks struct {
	mu    sync.Mutex
	token int
	style string
}

var itemHref = regexp.MustCompile(`href="(item-[0-9]+\.html)"`)

func newSessionLinks(f *fixture, style string) *sessionLinks {
	s := &sessionLinks{token: 1, style: style}
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if path, _, ok := strings.Cut(r.URL.Path, ";"); ok {
			r.URL.Path = path // ;jsessionid=... names no other page
		}
		if !strings.HasPrefix(r.URL.Path, "/catalogue/page-") {
			next.ServeHTTP(w, r)
			return
		}
		s.mu.Lock()
		sid := fmt.Sprintf("%08x", s.token*2654435761)
		style := s.style
		s.mu.Unlock()
		repl := map[string]string{
			"query":      `href="$1?sid=` + sid + `"`,
			"path":       `href="$1;sessid=` + sid + `"`,
			"oscsid":     `href="$1?osCsid=` + sid + `"`,
			"jsessionid": `href="$1;jsessionid=` + strings.ToUpper(sid) + `"`,
		}[style]
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(itemHref.ReplaceAllString(httptestRecorder(next, r), repl)))
	})
	return s
}

func (s *sessionLinks) renew() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token++
}

func TestMoves_ChangesBehindSessionIDsInLinksAreExportedEveryRun(t *testing.T) {
	for _, style := range []string{"query", "path"} {
		t.Run(style, func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 36, PerPage: 12})
			s := newSessionLinks(f, style)
			cfg := f.config(nil, tombstonesOn)
			rep := f.run(cfg, Options{})
			if rep.Items.New != 36 {
				t.Fatalf("first run: items %+v", rep.Items)
			}
			for run := 2; run <= 4; run++ {
				s.renew()
				for id := 1; id <= 12; id++ {
					f.site.SetPrice(id, float64(100*run+id))
				}
				rep = f.run(cfg, Options{})
				expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
				if rep.Items.Changed != 12 || rep.Items.Unchanged != 24 || rep.Items.DuplicateKeys != 0 || rep.Items.Removed != 0 {
					t.Fatalf("run %d: items %+v; want the 12 price changes, 24 unchanged, no duplicate, nothing removed", run, rep.Items)
				}
				if !rep.Export.Published || rep.Export.Rows != 12 {
					t.Fatalf("run %d: export %+v; want the 12 changes published", run, rep.Export)
				}
			}
			assertItemsMatchSiteLatest(t, f)
		})
	}
}

func TestMoves_AKeyThatMovesIsNoDuplicateInTheLog(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 24, PerPage: 12})
	s := newSessionLinks(f, "query")
	cfg := f.config(nil, tombstonesOn)
	f.run(cfg, Options{})
	s.renew()
	var logs bytes.Buffer
	rep := f.run(cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if rep.Items.DuplicateKeys != 0 || rep.Items.Unchanged != 24 {
		t.Fatalf("items %+v; want every key moved, none a duplicate", rep.Items)
	}
	if strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "24 item keys moved") {
		t.Fatalf("the log calls keys that moved duplicates, or says nothing of the moves:\n%s", logs.String())
	}
}

func TestMoves_AKeyTwoLinkedPagesYieldStaysWithItsHolder(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	// Page 1 also links item 3's page under a second URL, every run.
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path == "/catalogue/page-1.html" {
			body := strings.Replace(httptestRecorder(next, r), "</ol>",
				`<li><article class="product_pod"><h3><a href="item-3.html?ref=promo">promo</a></h3></article></li></ol>`, 1)
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(body))
			return
		}
		next.ServeHTTP(w, r)
	})
	cfg := f.config(nil, tombstonesOn)
	for run := 1; run <= 3; run++ {
		rep := f.run(cfg, Options{})
		if rep.Items.DuplicateKeys != 1 || rep.Items.Changed != 0 || rep.Items.Removed != 0 {
			t.Fatalf("run %d: items %+v; want one duplicate key each run and nothing exported for it", run, rep.Items)
		}
	}
}

// assertItemsMatchSiteLatest reads every published export back, in the
// order the runs were published, and checks that the last row of each
// item holds the site's current title and price, and that every item on
// the site has one.
func assertItemsMatchSiteLatest(t *testing.T, f *fixture) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(f.config(nil, "").Output, "dt=*", "run=*"))
	sort.Strings(dirs) // run IDs start with the run's time
	latest := map[string]exported{}
	for _, dir := range dirs {
		for _, r := range readRun(t, dir) {
			latest[r.key] = r
		}
	}
	for _, it := range f.site.Items() {
		r, ok := latest[it.UPC]
		if !ok || r.title != it.Title || r.price != it.Price {
			t.Fatalf("item %s: last exported %+v, site has %q %v", it.UPC, r, it.Title, it.Price)
		}
	}
}

func TestMoves_BuiltInIgnoreParamsDropSessionIDsFromEveryURL(t *testing.T) {
	for _, style := range []string{"oscsid", "jsessionid"} {
		t.Run(style, func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 24, PerPage: 12})
			s := newSessionLinks(f, style)
			cfg := f.config(nil, tombstonesOn)
			rep := f.run(cfg, Options{})
			s.renew()
			f.site.SetPrice(5, 555)
			rep = f.run(cfg, Options{})
			if rep.Items.Changed != 1 || rep.Items.Unchanged != 23 || rep.Items.DuplicateKeys != 0 {
				t.Fatalf("items %+v; want item 5's change and no duplicate", rep.Items)
			}
			for _, r := range readRun(t, rep.Export.Path) {
				if strings.ContainsAny(r.url, ";?") {
					t.Fatalf("exported _url %q keeps the session ID", r.url)
				}
			}
		})
	}
}

func TestMoves_KeysMoveToTheURLWithoutAParameterIgnoreParamsNamesLater(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 24, PerPage: 12})
	newSessionLinks(f, "query") // ?sid=, the same every run
	f.run(f.config(nil, tombstonesOn), Options{})
	cfg := f.config(nil, tombstonesOn)
	cfg.IgnoreParams = append(cfg.IgnoreParams, "sid") // ignore_params = ["sid"]
	cfg.Extract.IgnoreParams = cfg.IgnoreParams
	f.site.SetPrice(5, 555)
	rep := f.run(cfg, Options{})
	if rep.Items.Changed != 1 || rep.Items.Unchanged != 23 || rep.Items.DuplicateKeys != 0 || rep.Items.Removed != 0 {
		t.Fatalf("items %+v; want every key moved to the URL without sid, item 5 changed", rep.Items)
	}
	for _, r := range readRun(t, rep.Export.Path) {
		if strings.Contains(r.url, "sid=") {
			t.Fatalf("exported _url %q keeps sid", r.url)
		}
	}
}
