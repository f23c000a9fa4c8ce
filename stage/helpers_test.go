package stage

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(holdLockEnv); dir != "" {
		holdLock(dir)
		return
	}
	goleak.VerifyTestMain(m)
}

// fixture is a catalog site on loopback and a storage folder.
type fixture struct {
	t    testing.TB
	site *catalogsite.Site
	srv  *httptest.Server
	dir  string
	// output is the configs' output; "" means "out".
	output string
}

func newFixture(t testing.TB, opts catalogsite.Options) *fixture {
	t.Helper()
	f := &fixture{t: t, site: catalogsite.New(opts), dir: t.TempDir()}
	f.srv = httptest.NewServer(f.site)
	t.Cleanup(f.srv.Close)
	return f
}

// wrap serves h in front of the site: h may answer, or call next.
func (f *fixture) wrap(h func(w http.ResponseWriter, r *http.Request, next http.Handler)) {
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(w, r, f.site) })
}

func (f *fixture) startURL() string { return catalogsite.StartURL(f.srv.URL) }

// fastPolicy keeps waits in milliseconds so a test of retries, retry
// passes and stop rules runs quickly.
var fastPolicy = map[string]string{
	"concurrency":      "4",
	"timeout":          `"2s"`,
	"backoff":          `"1ms"`,
	"max_backoff":      `"5ms"`,
	"retry_pass_delay": `"10ms"`,
	"pause":            `"0s"`,
	"respect_robots":   "true",
}

const itemSection = catalogsite.ExtractConfig

// config builds a config for the site; policy entries override fastPolicy
// (values are TOML literals); extra is appended as TOML.
func (f *fixture) config(policy map[string]string, extra string, startURLs ...string) config.Config {
	f.t.Helper()
	return f.configOf(itemSection, policy, extra, startURLs...)
}

// configOf is config with another extraction ([listing], [item] and
// [item.fields] tables) than the catalog's.
func (f *fixture) configOf(extraction string, policy map[string]string, extra string, startURLs ...string) config.Config {
	f.t.Helper()
	if len(startURLs) == 0 {
		startURLs = []string{f.startURL()}
	}
	p := maps.Clone(fastPolicy)
	maps.Copy(p, policy)
	var b strings.Builder
	output := f.output
	if output == "" {
		output = "out"
	}
	fmt.Fprintf(&b, "name = \"books\"\nstart_urls = [\"%s\"]\nstorage = \"state\"\noutput = %q\n\n[policy]\n", strings.Join(startURLs, `", "`), output)
	for _, k := range slices.Sorted(maps.Keys(p)) {
		fmt.Fprintf(&b, "%s = %s\n", k, p[k])
	}
	b.WriteString(extraction)
	b.WriteString(extra)
	cfg, err := config.Parse(filepath.Join(f.dir, "books.toml"), []byte(b.String()))
	if err != nil {
		f.t.Fatalf("test config: %v\n%s", err, b.String())
	}
	return *cfg
}

func (f *fixture) run(cfg config.Config, opts Options) verdict.RunReport {
	f.t.Helper()
	return f.runCtx(context.Background(), cfg, opts)
}

func (f *fixture) runCtx(ctx context.Context, cfg config.Config, opts Options) verdict.RunReport {
	f.t.Helper()
	rep, err := Run(ctx, cfg, opts)
	if err != nil {
		f.t.Fatalf("run: %v (%s)", err, rep.Summary())
	}
	f.t.Log(rep.Summary())
	return rep
}

// expect checks the verdict.
func expect(t *testing.T, rep verdict.RunReport, stop verdict.Stop, outcome verdict.Outcome, rule verdict.Rule) {
	t.Helper()
	if rep.Stop != stop || rep.Outcome != outcome || rep.Rule != rule {
		t.Fatalf("verdict = %s (%s, rule %d, detail %q), want %s (%s, rule %d)\nreport: %+v",
			rep.Outcome, rep.Stop, rep.Rule, rep.Detail, outcome, stop, rule, rep)
	}
}

// itemPath reports whether r asks for an item page, and which item.
func itemID(r *http.Request) (int, bool) {
	var id int
	_, err := fmt.Sscanf(r.URL.Path, "/catalogue/item-%d.html", &id)
	return id, err == nil
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// assertItemsMatchSite reads every published export back and checks that
// it holds n rows and that each holds the site's own title and price for
// its UPC: no stub or error page became an item.
func assertItemsMatchSite(t testing.TB, f *fixture, n int) {
	t.Helper()
	byUPC := map[string]catalogsite.Item{}
	for _, it := range f.site.Items() {
		byUPC[it.UPC] = it
	}
	cfg := f.config(nil, "")
	dirs, _ := filepath.Glob(filepath.Join(cfg.Output, "dt=*", "run=*"))
	count := 0
	for _, dir := range dirs {
		for _, r := range readRun(t, dir) {
			count++
			it, ok := byUPC[r.key]
			if !ok {
				t.Fatalf("exported item %q is not on the site", r.key)
			}
			if r.title != it.Title || r.price != it.Price {
				t.Fatalf("item %s exported as %v %v, site has %q %v", r.key, r.title, r.price, it.Title, it.Price)
			}
		}
	}
	if count != n {
		t.Fatalf("%d items exported, want %d", count, n)
	}
}

// stopAfter is middleware that ends the run as blocked after n responses:
// an incomplete, productive (partial) run.
func stopAfter(n int64) []crawl.Middleware {
	var seen atomic.Int64
	return []crawl.Middleware{func(rc *crawl.RunContext, _ *crawl.Response) {
		if seen.Add(1) == n {
			rc.Stop("test stop")
		}
	}}
}
