package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/extract"
)

func TestLoadSpecExample(t *testing.T) {
	cfg, err := Load(filepath.Join("testdata", "books.toml"))
	if err != nil {
		t.Fatalf("the SPEC's example config must load: %v", err)
	}
	dir, _ := filepath.Abs("testdata")
	if cfg.Name != "books" || cfg.Storage != filepath.Join(dir, "state", "books") || cfg.Output != filepath.Join(dir, "out", "books") {
		t.Fatalf("paths not resolved against the config folder: %+v", cfg)
	}
	if got := strings.Join(cfg.AllowedDomains, ","); got != "127.0.0.1" {
		t.Fatalf("allowed domains default to the start URL hosts, got %q", got)
	}
	p := cfg.Policy
	if p.Concurrency != 8 || p.Retries != 2 || p.Pause != 5*time.Minute || p.MaxBodyBytes != 10<<20 || p.MinBodyBytes != 512 ||
		p.ErrorWindow != 200 || p.ErrorMinSamples != 50 || p.MaxErrorRate != 0.35 || !p.RespectRobots || p.ProbeRequests != 20 || p.MaxProbes != 3 {
		t.Fatalf("policy = %+v", p)
	}
	var names []string
	for _, f := range cfg.Extract.Fields {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "title,price,stock,upc,tags,image" {
		t.Fatalf("fields must keep declared order, got %s", got)
	}
	if cfg.Extract.Fields[1].Type != extract.TypeFloat64 || !cfg.Extract.Fields[4].Multiple || cfg.Extract.Key != "upc" {
		t.Fatalf("field specs = %+v", cfg.Extract.Fields)
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Parse("min.toml", []byte(`
name = "min"
start_urls = ["https://Example.COM/list"]
[listing]
item_links = "a.item"
[item.fields]
title = { css = "h1" }
`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(cfg.Storage, filepath.Join("state", "min")) || !strings.HasSuffix(cfg.Output, filepath.Join("out", "min")) {
		t.Fatalf("default paths: %s %s", cfg.Storage, cfg.Output)
	}
	if cfg.AllowedDomains[0] != "example.com" {
		t.Fatalf("domains: %v", cfg.AllowedDomains)
	}
	if cfg.Policy.UserAgent != "" {
		t.Fatalf("user agent: %q, want none: the default is the caller's", cfg.Policy.UserAgent)
	}
	if cfg.Export.Format != FormatParquet || cfg.Export.PublishWhen != PublishWhenPartial || cfg.Notify.Timeout != 30*time.Second {
		t.Fatalf("export/notify defaults: %+v %+v", cfg.Export, cfg.Notify)
	}
	if cfg.Policy.RetryPassDelay != 30*time.Second || cfg.Policy.Backoff != 500*time.Millisecond || cfg.Policy.MaxRedirects != 10 {
		t.Fatalf("retry defaults: %+v", cfg.Policy)
	}
	if cfg.Policy.MaxUnusableRate != 0.5 || cfg.Policy.Thresholds().MaxUnusableRate != 0.5 {
		t.Fatalf("max_unusable_rate = %v", cfg.Policy.MaxUnusableRate)
	}
	if cfg.Policy.MaxLinksPerPage != 10_000 || cfg.Extract.Listing.MaxLinks != 10_000 || cfg.Policy.MaxCrawlDelay != 30*time.Second {
		t.Fatalf("hostile-input defaults: %+v, listing %+v", cfg.Policy, cfg.Extract.Listing)
	}
}

const good = `name = "books"
start_urls = ["http://127.0.0.1:1/catalogue/page-1.html"]
[policy]
concurrency = 4
[listing]
item_links = "article h3 a"
[item.fields]
title = { css = "h1", required = true }
`

// TestBadConfigsNameFileLineKey checks that each kind of mistake is
// reported with the file, the line and the key.
func TestBadConfigsNameFileLineKey(t *testing.T) {
	cases := []struct {
		name, doc string
		line      int
		key, msg  string
	}{
		{"unknown top-level key", "start_url = \"x\"\n" + good, 1, "start_url", `unknown key (did you mean "start_urls"?)`},
		{"unknown policy key", strings.Replace(good, "concurrency = 4", "concurency = 4", 1), 4, "policy.concurency", `did you mean "concurrency"`},
		{"unknown field key", strings.Replace(good, `required = true`, `requird = true`, 1), 8, "item.fields.title.requird", `did you mean "required"`},
		{"wrong value type", strings.Replace(good, "concurrency = 4", `concurrency = "four"`, 1), 4, "policy.concurrency", "cannot decode"},
		{"bad duration", strings.Replace(good, "concurrency = 4", `pause = "5 minutes"`, 1), 4, "policy.pause", `invalid duration "5 minutes"`},
		{"negative delay", strings.Replace(good, "concurrency = 4", `delay = "-1s"`, 1), 4, "policy.delay", "must not be negative"},
		{"bad size", strings.Replace(good, "concurrency = 4", `max_body_bytes = "ten megs"`, 1), 4, "policy.max_body_bytes", "invalid size"},
		{"concurrency out of range", strings.Replace(good, "concurrency = 4", `concurrency = 0`, 1), 4, "policy.concurrency", "between 1 and 256"},
		{"error rate above one", strings.Replace(good, "concurrency = 4", `max_error_rate = 35`, 1), 4, "policy.max_error_rate", "between 0 and 1"},
		{"min samples above window", strings.Replace(good, "concurrency = 4", "error_window = 10\nerror_min_samples = 50", 1), 5, "policy.error_min_samples", "between 1 and error_window"},
		{"bad name", strings.Replace(good, `name = "books"`, `name = "Books!"`, 1), 1, "name", "must match"},
		{"missing name", strings.Replace(good, `name = "books"`, ``, 1), 0, "name", "required"},
		{"ftp start url", strings.Replace(good, "http://127.0.0.1:1", "ftp://127.0.0.1:1", 1), 2, "start_urls", "not an http or https URL"},
		{"bad selector", strings.Replace(good, `css = "h1"`, `css = "h1[[["`, 1), 8, "item.fields.title.css", ""},
		{"bad regex", strings.Replace(good, `css = "h1",`, `css = "h1", regex = "([0-9]",`, 1), 8, "item.fields.title.regex", ""},
		{"bad type", strings.Replace(good, `css = "h1",`, `css = "h1", type = "decimal",`, 1), 8, "item.fields.title.type", ""},
		{"key names no field", good + "[item]\nkey = \"upc\"\n", 10, "item.key", ""},
		{"no fields", strings.Replace(good, `title = { css = "h1", required = true }`, "", 1), 7, "item.fields", "at least one field"},
		{"bad export format", good + "[export]\nformat = \"csv\"\n", 10, "export.format", `"csv"`},
		{"bad block status", good + "[block]\nstatuses = [200]\n", 10, "block.statuses", "not an HTTP error status"},
		{"syntax error", good + "\n[policy\n", 10, "", ""},
		{"a sitemap that is not a URL", strings.Replace(good, `item_links = "article h3 a"`, "item_links = \"a\"\nsitemaps = [\"sitemap.xml\"]", 1), 7, "listing.sitemaps", `neither "robots" nor an http or https URL`},
		{"a bad sitemap_match", strings.Replace(good, `item_links = "article h3 a"`, "sitemaps = [\"robots\"]\nsitemap_match = '('", 1), 7, "listing.sitemap_match", "missing closing )"},
		{"sitemap_match without sitemaps", strings.Replace(good, `item_links = "article h3 a"`, "item_links = \"a\"\nsitemap_match = '/p/'", 1), 7, "listing.sitemap_match", "needs listing.sitemaps"},
		{"pages without a param", strings.Replace(good, `item_links = "article h3 a"`, "item_links = \"a\"\npages = { start = 2 }", 1), 7, "listing.pages.param", "not a query parameter name"},
		{"no item links and no sitemaps", strings.Replace(good, `item_links = "article h3 a"`, "", 1), 5, "listing.item_links", "required unless listing.items or listing.sitemaps is set"},
		{"unusable rate above one", strings.Replace(good, "concurrency = 4", `max_unusable_rate = 1.5`, 1), 4, "policy.max_unusable_rate", "between 0 and 1"},
		{"output at a file system root", `output = "/"` + "\n" + good, 1, "output", "file system root"},
		{"output inside storage", "storage = \"st\"\noutput = \"st/out\"\n" + good, 2, "output", "inside storage"},
		{"storage inside output", "storage = \"out/st\"\noutput = \"out\"\n" + good, 1, "storage", "inside output"},
		{"a start URL over the URL limit", strings.Replace(good, "http://127.0.0.1:1", "http://127.0.0.1:1/"+strings.Repeat("x", 9000), 1), 2, "start_urls", "at most 8192"},
		{"negative max_crawl_delay", strings.Replace(good, "concurrency = 4", `max_crawl_delay = "-1s"`, 1), 4, "policy.max_crawl_delay", "must not be negative"},
		{"max_links_per_page below zero", strings.Replace(good, "concurrency = 4", `max_links_per_page = -1`, 1), 4, "policy.max_links_per_page", "between 0 and"},
		{"error rate not a number", strings.Replace(good, "concurrency = 4", `max_error_rate = nan`, 1), 4, "policy.max_error_rate", "between 0 and 1"},
		{"revisit max_after below min_after", good + "[revisit]\nmin_after = \"2d\"\nmax_after = \"1d\"\n", 11, "revisit.max_after", "shorter than min_after"},
		{"revisit bad duration", good + "[revisit]\nmin_after = \"a day\"\n", 10, "revisit.min_after", `invalid duration "a day"`},
		{"revisit bad card", good + "[revisit]\ncard = \"article[[\"\n", 10, "revisit.card", ""},
		{"revisit with listing cards", strings.Replace(good, `item_links = "article h3 a"`, "items = \"article\"", 1) + "[item]\nkey = \"title\"\n[revisit]\n", 11, "revisit", "listing.items"},
		{"start url without host name", strings.Replace(good, "http://127.0.0.1:1", "http://:1", 1), 2, "start_urls", "has no host name"},
		{"start url host a dot", strings.Replace(good, "http://127.0.0.1:1", "http://.", 1), 2, "start_urls", "has no host name"},
		{"control character in user agent", strings.Replace(good, "concurrency = 4", `user_agent = "bot\nX-Evil: 1"`, 1), 4, "policy.user_agent", "header"},
		{"key in another case", strings.Replace(good, `name = "books"`, "NAME = \"x\"\nname = \"books\"", 1), 1, "NAME", `unknown key (did you mean "name"?)`},
		{"table in another case", strings.Replace(good, "[policy]", "[Policy]", 1), 3, "Policy", `unknown key (did you mean "policy"?)`},
		{"field key in another case", strings.Replace(good, `css = "h1"`, `CSS = "h1"`, 1), 8, "item.fields.title.CSS", `unknown key (did you mean "css"?)`},
		{"problem in a table in another case", strings.Replace(good, "[policy]\nconcurrency = 4", "[Policy]\nconcurrency = 0", 1), 4, "policy.concurrency", "between 1 and 256"},
		{"output with an unknown scheme", `output = "ftp://host/out"` + "\n" + good, 1, "output", `unknown scheme "ftp" in "ftp://host/out": use a local path, or s3://, gs://, azblob:// or iceberg://`},
		{"output naming no bucket", `output = "s3:///prefix"` + "\n" + good, 1, "output", "names no bucket"},
		{"output with credentials", `output = "s3://AKID:secret@lake/prefix"` + "\n" + good, 1, "output", "holds credentials"},
		{"output with a dot segment", `output = "s3://lake/a/../b"` + "\n" + good, 1, "output", `"." or ".." segments`},
		{"file output naming a host", `output = "file://host/out"` + "\n" + good, 1, "output", "a file URL is a local path"},
		{"dotted policy table", strings.Replace(good, "[policy]\nconcurrency = 4", "policy.error_window = 10", 1), 3, "policy.error_min_samples", "between 1 and error_window"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { expectConfigError(t, tc.doc, tc.line, tc.key, tc.msg) })
	}
}

func TestAllProblemsReportedAtOnce(t *testing.T) {
	doc := strings.Replace(good, "concurrency = 4", "concurrency = 0\ndelay = \"soon\"\nretries = 99", 1)
	_, err := Parse("site.toml", []byte(doc))
	es := AsErrors(err)
	if len(es) != 3 {
		t.Fatalf("want 3 problems, got %d:\n%v", len(es), err)
	}
	want := []string{"site.toml:4: policy.concurrency", "site.toml:5: policy.delay", "site.toml:6: policy.retries"}
	for i, w := range want {
		if !strings.HasPrefix(es[i].Error(), w) {
			t.Fatalf("problem %d = %q, want prefix %q", i, es[i].Error(), w)
		}
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.toml"))
	if !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "nope.toml: cannot read config") {
		t.Fatalf("missing file error = %v", err)
	}
}

func TestTableFormFieldsKeepOrder(t *testing.T) {
	doc := `name = "x"
start_urls = ["http://h/"]
[listing]
item_links = "a"
[item.fields.zeta]
css = "h1"
[item.fields.alpha]
css = "h2"
type = "int64"
`
	cfg, err := Parse("x.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Extract.Fields[0].Name != "zeta" || cfg.Extract.Fields[1].Name != "alpha" {
		t.Fatalf("order = %+v", cfg.Extract.Fields)
	}
}

// TestDottedFieldsKeepOrder: fields written as dotted keys keep their
// declared order too, on every parse (a map's order would shuffle the
// columns and so every item's hash).
func TestDottedFieldsKeepOrder(t *testing.T) {
	doc := `name = "x"
start_urls = ["http://h/"]
[listing]
item_links = "a"
[item.fields]
zeta.css = "h1"
alpha.css = "h2"
"m\u0069d".css = "h3"
last = { css = "h4" }
`
	for range 20 {
		cfg, err := Parse("x.toml", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range cfg.Extract.Fields {
			names = append(names, f.Name)
		}
		if got := strings.Join(names, ","); got != "zeta,alpha,mid,last" {
			t.Fatalf("order = %s, want zeta,alpha,mid,last", got)
		}
	}
}

func TestSitemapSourcesAndStartKinds(t *testing.T) {
	doc := `name = "shop"
start_urls = ["https://shop.example/", "https://shop.example/extra-sitemap.xml.gz"]
[listing]
sitemaps = ["robots", "https://shop.example/sitemaps/index.xml"]
sitemap_match = '/product/'
[item.fields]
title = { css = "h1", required = true }
`
	cfg, err := Parse("shop.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.HostsOnly() || len(cfg.Sources.Sitemaps) != 2 || !cfg.Sources.SitemapMatch.MatchString("https://shop.example/product/1") {
		t.Fatalf("sources = %+v, hosts only %v", cfg.Sources, cfg.HostsOnly())
	}
	listings, sitemaps, hosts := cfg.StartKinds()
	if len(listings) != 0 || len(sitemaps) != 1 || sitemaps[0] != "https://shop.example/extra-sitemap.xml.gz" || len(hosts) != 1 {
		t.Fatalf("start kinds: listings %v, sitemaps %v, hosts %v", listings, sitemaps, hosts)
	}
	// With a listing to read too, the start URL is a listing page.
	cfg, err = Parse("shop.toml", []byte(strings.Replace(doc, `sitemap_match = '/product/'`, "item_links = \"a.product\"", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if listings, _, _ := cfg.StartKinds(); cfg.HostsOnly() || len(listings) != 1 {
		t.Fatalf("with item_links: hosts only %v, listings %v", cfg.HostsOnly(), listings)
	}
}

func TestOutputURLs(t *testing.T) {
	urls := map[string]string{
		"s3://lake/exports/books/?region=eu-west-1&endpoint=http://127.0.0.1:7070": "s3://lake/exports/books?region=eu-west-1&endpoint=http://127.0.0.1:7070",
		"S3://lake":                "s3://lake",
		"azblob://container/books": "azblob://container/books",
		"file:///srv/out/books":    "/srv/out/books",
	}
	if GCSBuilt {
		urls["gs://lake/books"] = "gs://lake/books"
	} else {
		_, err := Parse("site.toml", []byte("output = \"gs://lake/books\"\n"+good))
		if err == nil || !strings.Contains(err.Error(), "gs:// needs a binary built with GCS: make build-gcs, or go build -tags gcs") {
			t.Errorf("gs:// without -tags gcs: %v; want a config error naming the build", err)
		}
	}
	for in, want := range urls {
		cfg, err := Parse("site.toml", []byte("output = \""+in+"\"\n"+good))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if cfg.Output != want {
			t.Errorf("output %s = %q, want %q", in, cfg.Output, want)
		}
		if IsObjectStore(cfg.Output) != strings.Contains(want, "://") {
			t.Errorf("IsObjectStore(%q) is wrong", cfg.Output)
		}
	}
	_, err := Parse("site.toml", []byte("output = \"s3://AKID:s3cr3t@lake/p\"\n"+good))
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "AKID") {
		t.Errorf("credentials in output: %v; want an error that does not repeat them", err)
	}
	// An object store output is no folder: storage may be anywhere.
	if _, err := Parse("site.toml", []byte("storage = \"out\"\noutput = \"s3://lake/out\"\n"+good)); err != nil {
		t.Errorf("storage beside an object store output: %v", err)
	}
}

func TestRevisitAndDurationsInDays(t *testing.T) {
	cfg, err := Parse("site.toml", []byte(good+"[revisit]\ncard = \"article\"\nmin_after = \"1d12h\"\nmax_after = \"14d\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Revisit; r == nil || r.MinAfter != 36*time.Hour || r.MaxAfter != 14*24*time.Hour || cfg.Extract.Listing.Card != "article" {
		t.Fatalf("revisit %+v, card %q", cfg.Revisit, cfg.Extract.Listing.Card)
	}
	cfg, err = Parse("site.toml", []byte(good+"[revisit]\n"))
	if err != nil || cfg.Revisit.MinAfter != DefaultRevisitMinAfter || cfg.Revisit.MaxAfter != DefaultRevisitMaxAfter {
		t.Fatalf("defaults: %+v, %v", cfg.Revisit, err)
	}
	if cfg, err = Parse("site.toml", []byte(good)); err != nil || cfg.Revisit != nil {
		t.Fatalf("no [revisit]: %+v, %v", cfg.Revisit, err)
	}
	for in, want := range map[string]time.Duration{"1d": 24 * time.Hour, "2d6h": 54 * time.Hour, "90m": 90 * time.Minute, " 3d ": 72 * time.Hour} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"d", "1.5d", "1dd", "-1d", "1d-2h", "99999999d"} {
		if got, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v; want an error", in, got)
		}
	}
}

// expectConfigError parses doc as site.toml and checks it is refused with
// an error at line for key (any key when key is empty) whose message holds
// msg.
func expectConfigError(t *testing.T, doc string, line int, key, msg string) {
	t.Helper()
	_, err := Parse("site.toml", []byte(doc))
	if err == nil {
		t.Fatal("bad config accepted")
	}
	es := AsErrors(err)
	if len(es) == 0 {
		t.Fatalf("error carries no location: %v", err)
	}
	var found *Error
	for _, e := range es {
		if e.Key == key || (key == "" && e.Line == line) {
			found = e
		}
	}
	if found == nil {
		t.Fatalf("no error for key %q in:\n%v", key, err)
	}
	if found.File != "site.toml" || found.Line != line {
		t.Fatalf("located at %s:%d, want site.toml:%d (%v)", found.File, found.Line, line, found)
	}
	if msg != "" && !strings.Contains(found.Msg, msg) {
		t.Fatalf("message %q lacks %q", found.Msg, msg)
	}
	if !strings.HasPrefix(found.Error(), "site.toml:") {
		t.Fatalf("error text must start with the file: %q", found.Error())
	}
}
