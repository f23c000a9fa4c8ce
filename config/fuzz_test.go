package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/cascadia"
	"github.com/pelletier/go-toml/v2"
	"github.com/rogpeppe/go-internal/txtar"
	"golang.org/x/net/http/httpguts"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/docs"
)

// FuzzParse decodes arbitrary documents: a config that parses keeps every
// invariant the rest of the stage relies on, and one that does not is
// refused with located errors.
func FuzzParse(f *testing.F) {
	for _, doc := range seedConfigs(f) {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		file := filepath.Join("conf", "site.toml")
		cfg, err := Parse(file, doc)
		if err != nil {
			checkErrors(t, file, doc, err)
			return
		}
		checkConfig(t, file, doc, cfg)
		for range 3 { // a map's order would show in a few parses
			again, err := Parse(file, doc)
			if err != nil || !reflect.DeepEqual(cfg, again) {
				t.Fatalf("parsing the same document again differs:\n%+v\n%+v (%v)", cfg, again, err)
			}
		}
	})
}

// seedConfigs returns the documentation's config walkthrough and every
// other toml block of README.md and docs/*.md, the catalog site's
// extraction wrapped into a full config, and the configs of the CLI's
// test scripts.
func seedConfigs(t testing.TB) [][]byte {
	t.Helper()
	pages, err := docs.Pages("..")
	if err != nil {
		t.Fatal(err)
	}
	var walk string
	if _, section, ok := docs.Section(pages, "Config walkthrough"); ok {
		if bs := (docs.Page{Text: section}).Blocks(); len(bs) > 0 && bs[0].Lang == "toml" {
			walk = bs[0].Text
		}
	}
	if walk == "" {
		t.Fatal("the documentation has no toml block in its config walkthrough")
	}
	seeds := [][]byte{
		[]byte(walk),
		[]byte("name = \"catalog\"\nstart_urls = [\"http://127.0.0.1:8390/catalogue/page-1.html\"]\n" + catalogsite.ExtractConfig),
		[]byte(good),
		[]byte(realSite),
		[]byte(`name = "shop"
start_urls = ["https://shop.example/"]
[listing]
item_links = "article h3 a"
next_page = { css = "#grid", attr = "data-next-api" }
[item]
key = "sku"
rows = "tr.variant"
[item.fields]
sku   = { css = ["td.sku", ":scope"], attr = "data-sku", required = true }
name  = { jsonld = "Product", json = "name", scope = "page" }
data  = { css = "script#__NEXT_DATA__", json = "props.pageProps.product.sku", scope = "page" }
eur   = { css = [".promo .amount", ".price-regular .amount"], type = "float64", decimal = "," }
stock = { css = "td.v-stock", type = "int64", map = { "Sold out" = 0, "*left*" = "1" }, default = -1 }
when  = { css = "time", type = "timestamp", default = 2025-03-03T00:00:00Z }
`),
		[]byte(good + "[request]\nheaders = { Accept-Language = \"de-DE\", X-Cost = \"$$5\" }\ncookies = { cc_consent = \"1\" }\ncookie_jar = false\n"),
	}
	for _, p := range pages {
		for _, b := range p.Blocks() {
			if b.Lang == "toml" && b.Text != walk {
				seeds = append(seeds, []byte(b.Text))
			}
		}
	}
	scripts, err := filepath.Glob(filepath.Join("..", "cmd", "databrew-stage", "testdata", "script", "*.txtar"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no test scripts found (%v)", err)
	}
	env := func(name string) string {
		if name == "START" {
			return "http://127.0.0.1:8390/catalogue/page-1.html"
		}
		return "http://127.0.0.1:8390/"
	}
	for _, script := range scripts {
		a, err := txtar.ParseFile(script)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range a.Files {
			if strings.HasSuffix(file.Name, ".toml") {
				seeds = append(seeds, []byte(os.Expand(string(file.Data), env)))
			}
		}
	}
	return seeds
}

// checkErrors asserts that err lists located problems: each names the
// file, a line within the document, and a line at all when the key it
// names sits in a table the document writes.
func checkErrors(t *testing.T, file string, doc []byte, err error) {
	t.Helper()
	var es Errors
	if !errors.As(err, &es) || len(es) == 0 {
		t.Fatalf("error is not a non-empty config.Errors: %#v", err)
	}
	lines := 1 + bytes.Count(doc, []byte("\n"))
	var written map[string]any
	if toml.Unmarshal(doc, &written) != nil {
		written = nil // the decoder's own error; which tables exist is unknown
	}
	for i, e := range es {
		if e.File != file || e.Msg == "" || !strings.HasPrefix(e.Error(), file+":") {
			t.Fatalf("problem %d does not name the file or says nothing: %#v", i, e)
		}
		if e.Line < 0 || e.Line > lines {
			t.Fatalf("problem %d at line %d of a %d-line document: %v", i, e.Line, lines, e)
		}
		if e.Key != "" && e.Line == 0 && written != nil {
			top, _, _ := strings.Cut(e.Key, ".")
			for k := range written {
				if strings.EqualFold(k, top) { // the decoder ignores case
					t.Fatalf("problem %d names %q, which the document writes, but no line: %v", i, top, e)
				}
			}
		}
		if i > 0 && e.Line < es[i-1].Line {
			t.Fatalf("problems not in line order:\n%v", es)
		}
	}
}

// checkConfig asserts the invariants of a config that parsed.
func checkConfig(t *testing.T, file string, doc []byte, cfg *Config) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("accepted config breaks an invariant: "+format+"\n%s", append(args, doc)...)
	}
	if cfg.File != file {
		fail("File = %q", cfg.File)
	}
	if len(cfg.Name) > 64 || !namePattern.MatchString(cfg.Name) {
		fail("name %q", cfg.Name)
	}
	if len(cfg.StartURLs) == 0 {
		fail("no start URLs")
	}
	for _, s := range cfg.StartURLs {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			fail("start URL %q is not an http(s) URL with a host", s)
		}
	}
	if !slices.IsSorted(cfg.AllowedDomains) || len(slices.Compact(slices.Clone(cfg.AllowedDomains))) != len(cfg.AllowedDomains) {
		fail("allowed domains %q not sorted and unique", cfg.AllowedDomains)
	}
	for _, d := range cfg.AllowedDomains {
		if d == "" || d != strings.ToLower(d) || strings.HasPrefix(d, ".") {
			fail("allowed domain %q is not a lower-case host", d)
		}
	}
	var written map[string]any
	_ = toml.Unmarshal(doc, &written)
	checkKeys(fail, "", written)
	if set, _ := written["allowed_domains"].([]any); len(set) == 0 {
		for _, s := range cfg.StartURLs {
			u, _ := url.Parse(s)
			if !slices.Contains(cfg.AllowedDomains, strings.ToLower(u.Hostname())) {
				fail("start URL %q is outside the default domains %q", s, cfg.AllowedDomains)
			}
		}
	}
	for _, p := range []string{cfg.Storage, cfg.Output} {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			fail("path %q is not absolute and clean", p)
		}
	}
	if cfg.Storage == cfg.Output {
		fail("storage and output are both %q", cfg.Storage)
	}
	checkPolicy(t, fail, cfg.Policy)
	if len(cfg.Extract.Fields) == 0 {
		fail("no fields")
	}
	if _, err := extract.Compile(cfg.Extract); err != nil {
		fail("extraction does not compile: %v", err)
	}
	for _, s := range cfg.Block.Selectors {
		if _, err := cascadia.ParseGroup(s); err != nil {
			fail("block selector %q: %v", s, err)
		}
	}
	for _, s := range cfg.Block.Texts {
		if strings.TrimSpace(s) == "" {
			fail("blank block text")
		}
	}
	for _, s := range cfg.Block.Statuses {
		if s < 400 || s > 599 {
			fail("block status %d", s)
		}
	}
	e := cfg.Export
	if (e.Format != FormatParquet && e.Format != FormatArrow) || (e.PublishWhen != PublishWhenPartial && e.PublishWhen != PublishWhenSuccess) ||
		e.RowGroupRows < 1 || e.RowGroupRows > 1<<24 || e.MaxFileRows < 1 {
		fail("export %+v", e)
	}
	if cfg.Notify.Timeout < time.Second {
		fail("notify timeout %v", cfg.Notify.Timeout)
	}
	checkRequest(fail, cfg.Request)
}

// checkRequest asserts that every header and cookie of an accepted config
// can be sent as it is: valid, not one the client sets, and printed
// redacted.
func checkRequest(fail func(string, ...any), r Request) {
	for name, v := range r.Headers {
		if name != http.CanonicalHeaderKey(name) || !httpguts.ValidHeaderFieldName(name) || !httpguts.ValidHeaderFieldValue(v.Value()) {
			fail("header %q is not a canonical, valid header", name)
		}
		if _, reserved := reservedHeaders[name]; reserved {
			fail("header %q is one a config may not set", name)
		}
	}
	for name, v := range r.Cookies {
		if (&http.Cookie{Name: name, Value: v.Value()}).Valid() != nil {
			fail("cookie %q is not a valid cookie", name)
		}
	}
	if s := fmt.Sprintf("%v %+v %#v", r, r, r); strings.Contains(s, "value:") {
		fail("a request prints its values: %s", s)
	}
}

// checkKeys asserts that every key of an accepted document is spelt as
// documented, table by table (item.fields holds names).
func checkKeys(fail func(string, ...any), table string, m map[string]any) {
	for k, v := range m {
		path := join(table, k)
		switch {
		case table == "item.fields":
			path = "item.fields.*"
		case !slices.Contains(knownKeys[table], k):
			fail("key %q of table %q is not a documented key", k, table)
		}
		if sub, ok := v.(map[string]any); ok && (len(knownKeys[path]) > 0 || path == "item.fields") {
			checkKeys(fail, path, sub)
		}
	}
}

func checkPolicy(t *testing.T, fail func(string, ...any), p Policy) {
	t.Helper()
	for _, d := range []struct {
		name string
		v    int64
	}{{"delay", int64(p.Delay)}, {"backoff", int64(p.Backoff)}, {"max_backoff", int64(p.MaxBackoff)},
		{"retry_pass_delay", int64(p.RetryPassDelay)}, {"pause", int64(p.Pause)}, {"min_body_bytes", p.MinBodyBytes}} {
		if d.v < 0 {
			fail("%s is negative: %d", d.name, d.v)
		}
	}
	switch {
	case p.Timeout < time.Millisecond:
		fail("timeout %v", p.Timeout)
	case p.MaxBackoff < p.Backoff:
		fail("max_backoff %v below backoff %v", p.MaxBackoff, p.Backoff)
	case p.Concurrency < 1 || p.Concurrency > 256:
		fail("concurrency %d", p.Concurrency)
	case p.Retries < 0 || p.Retries > 10:
		fail("retries %d", p.Retries)
	case p.MaxRequests < 0 || p.MaxConsecutiveFailures < 0:
		fail("max_requests %d, max_consecutive_failures %d", p.MaxRequests, p.MaxConsecutiveFailures)
	case math.IsNaN(p.MaxErrorRate) || p.MaxErrorRate < 0 || p.MaxErrorRate > 1:
		fail("max_error_rate %v", p.MaxErrorRate)
	case p.ErrorMinSamples < 1 || p.ErrorMinSamples > p.ErrorWindow || p.ErrorWindow > 1_000_000:
		fail("error_min_samples %d, error_window %d", p.ErrorMinSamples, p.ErrorWindow)
	case p.MinBodyBytes >= p.MaxBodyBytes:
		fail("min_body_bytes %d, max_body_bytes %d", p.MinBodyBytes, p.MaxBodyBytes)
	case p.MaxRedirects < 0 || p.MaxRedirects > 100:
		fail("max_redirects %d", p.MaxRedirects)
	case p.ProbeRequests < 1 || p.MaxProbes < 1 || p.MaxProbes > 1000:
		fail("probe_requests %d, max_probes %d", p.ProbeRequests, p.MaxProbes)
	case p.UserAgent != strings.TrimSpace(p.UserAgent) || p.UserAgent != "" && !httpguts.ValidHeaderFieldValue(p.UserAgent):
		fail("user agent %q is not a usable header value", p.UserAgent)
	}
	if th := p.Thresholds(); th.MaxErrorRate != p.MaxErrorRate || th.ErrorWindow != p.ErrorWindow ||
		th.ErrorMinSamples != p.ErrorMinSamples || th.MaxConsecutiveFailures != p.MaxConsecutiveFailures {
		fail("thresholds %+v differ from the policy", th)
	}
}
