package stage

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/testkit/shopsites"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/sink/sinktest"
	"github.com/databrew/databrew-stage/verdict"
)

// shopRun crawls a fixture shop built like a real site with its own
// config, and returns the verdict and every exported row by key, read
// back with arrow-go.
func shopRun(t *testing.T, kind shopsites.Kind, opts shopsites.Options) (*shopsites.Shop, string, verdict.RunReport, map[string]map[string]any) {
	t.Helper()
	return shopRunWith(t, kind, opts, (*shopsites.Shop).Config)
}

// shopRunWith is shopRun with the config configFor writes for the shop
// served at base.
func shopRunWith(t *testing.T, kind shopsites.Kind, opts shopsites.Options, configFor func(shop *shopsites.Shop, base string) string) (*shopsites.Shop, string, verdict.RunReport, map[string]map[string]any) {
	t.Helper()
	c := newShopCrawl(t, kind, opts, configFor)
	rep := c.run()
	return c.shop, c.base, rep, exportedRows(t, c.cfg.Output)
}

// shopCrawl is a fixture shop on a loopback server and a config for it
// with its own storage, for tests that crawl it more than once.
type shopCrawl struct {
	t    *testing.T
	shop *shopsites.Shop
	base string
	cfg  config.Config
}

// newShopCrawl serves a new shop of kind and parses the config configFor
// writes for it.
func newShopCrawl(t *testing.T, kind shopsites.Kind, opts shopsites.Options, configFor func(shop *shopsites.Shop, base string) string) *shopCrawl {
	t.Helper()
	shop, err := shopsites.New(kind, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(shop)
	t.Cleanup(srv.Close)
	text := configFor(shop, srv.URL)
	cfg, err := config.Parse(filepath.Join(t.TempDir(), "shop.toml"), []byte(text))
	if err != nil {
		t.Fatalf("%s's config: %v\n%s", kind, err, text)
	}
	return &shopCrawl{t: t, shop: shop, base: srv.URL, cfg: *cfg}
}

// run crawls the shop once and checks its type errors (expectTypeErrors).
func (c *shopCrawl) run() verdict.RunReport {
	c.t.Helper()
	var log strings.Builder
	rep, err := Run(c.t.Context(), c.cfg, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		c.t.Fatalf("run: %v (%s)", err, rep.Summary())
	}
	c.t.Log(rep.Summary())
	expectTypeErrors(c.t, c.shop, rep, log.String())
	return rep
}

// expectTypeErrors checks that the verdict counts per field the type
// errors the shop prints on purpose (Shop.TypeErrors), and none besides;
// and that a run that succeeded warned of nothing but those, once per
// field.
func expectTypeErrors(t *testing.T, shop *shopsites.Shop, rep verdict.RunReport, log string) {
	t.Helper()
	want := shop.TypeErrors()
	for _, c := range shop.Columns() {
		if got := rep.Fields[c.Name].TypeErrors; got != want[c.Name] {
			t.Errorf("field %s: %d type errors in the verdict, want %d", c.Name, got, want[c.Name])
		}
	}
	if rep.Outcome != verdict.OutcomeSuccess {
		return
	}
	warned := map[string]int{}
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "level=WARN") {
			continue
		}
		name, ok := typeErrorWarning(line, want)
		if !ok {
			t.Errorf("a run that succeeded on a shop its config fits warned:\n%s", log)
			return
		}
		warned[name]++
	}
	for name := range want {
		if warned[name] != 1 {
			t.Errorf("field %s: warned of its type errors %d times, want once:\n%s", name, warned[name], log)
		}
	}
}

// typeErrorWarning reports which of the fields of want a WARN line tells
// the type errors of, with their count.
func typeErrorWarning(line string, want map[string]int) (string, bool) {
	for name, n := range want {
		if strings.Contains(line, fmt.Sprintf(`msg="field %s: %d values are not `, name, n)) {
			return name, true
		}
	}
	return "", false
}

// exportedRows reads every published file under output with arrow-go's
// Parquet reader, keyed by _key; each row maps column names to values.
func exportedRows(t *testing.T, output string) map[string]map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(output, "dt=*", "run=*", "*.parquet"))
	sharded, _ := filepath.Glob(filepath.Join(output, "dt=*", "run=*", "shard=*", "*.parquet"))
	return parquetRows(t, append(files, sharded...))
}

// runRows reads the files of one published run folder as exportedRows
// does.
func runRows(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if len(files) == 0 {
		t.Fatalf("%s holds no Parquet file", dir)
	}
	return parquetRows(t, files)
}

// parquetRows reads published part files, keyed by _key.
func parquetRows(t *testing.T, files []string) map[string]map[string]any {
	t.Helper()
	rows := map[string]map[string]any{}
	for _, f := range files {
		if !sink.IsComplete(runFolder(f)) {
			t.Fatalf("%s is in a folder without _SUCCESS", f)
		}
		rb := sinktest.ReadParquet(t, f)
		for _, r := range rb.Rows {
			row := map[string]any{}
			for i, c := range rb.Columns {
				row[c.Name] = r[i]
			}
			key := row["_key"].(string)
			if _, dup := rows[key]; dup {
				t.Fatalf("key %q exported twice", key)
			}
			rows[key] = row
		}
	}
	return rows
}

// runFolder is the run folder (dt=D/run=ID) a part file is in, one level
// up for the part of a shard.
func runFolder(part string) string {
	dir := filepath.Dir(part)
	if strings.HasPrefix(filepath.Base(dir), "shard=") {
		return filepath.Dir(dir)
	}
	return dir
}

// expectTruth checks the export holds exactly the shop's products, column
// by column.
func expectTruth(t *testing.T, shop *shopsites.Shop, base string, rows map[string]map[string]any) {
	t.Helper()
	truth := shop.Truth(base)
	if len(rows) != len(truth) {
		keys := make([]string, 0, len(rows))
		for k := range rows {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		t.Fatalf("%d rows exported, the shop has %d products; exported keys %v", len(rows), len(truth), keys)
	}
	for _, p := range truth {
		row, ok := rows[p.Key]
		if !ok {
			t.Fatalf("product %q was not exported", p.Key)
		}
		if row["_url"] != p.URL {
			t.Errorf("%s: _url %v, want %v", p.Key, row["_url"], p.URL)
		}
		for _, c := range shop.Columns() {
			if got, want := row[c.Name], p.Values[c.Name]; !sameValue(got, want) {
				t.Errorf("%s.%s = %#v, want %#v", p.Key, c.Name, got, want)
			}
		}
	}
}

// sameValue compares an exported value with the truth: times to the
// microsecond, lists element by element; a multiple field that found
// nothing is an empty list, which the truth may write as none.
func sameValue(got, want any) bool {
	if g, ok := got.([]string); ok && len(g) == 0 && want == nil {
		return true
	}
	switch w := want.(type) {
	case time.Time:
		g, ok := got.(time.Time)
		return ok && g.Equal(w.Truncate(time.Microsecond))
	case []string:
		g, _ := got.([]string)
		return slices.Equal(g, w)
	}
	return fmt.Sprint(got) == fmt.Sprint(want) && fmt.Sprintf("%T", got) == fmt.Sprintf("%T", want)
}

// shopCases are the fixture shops, each built like a common real catalog
// site (SPEC 6b), and the options that vary them.
var shopCases = []struct {
	name string
	kind shopsites.Kind
	opts shopsites.Options
}{
	{"json-ld", shopsites.JSONLD, shopsites.Options{}},
	{"microdata and data attributes", shopsites.Microdata, shopsites.Options{}},
	{"sitemaps only", shopsites.Sitemaps, shopsites.Options{}},
	{"parameter pagination ending on an empty page", shopsites.Params, shopsites.Options{}},
	{"parameter pagination ending on a 404", shopsites.Params, shopsites.Options{EndWith404: true}},
	{"json api with every field", shopsites.JSONAPI, shopsites.Options{API: shopsites.APIFull}},
	{"json api with item urls", shopsites.JSONAPI, shopsites.Options{API: shopsites.APILinks}},
	{"next page in a data attribute", shopsites.JSONAPI, shopsites.Options{API: shopsites.APIGrid}},
	{"messy values", shopsites.Messy, shopsites.Options{}},
	{"gated by a consent cookie", shopsites.Gated, shopsites.Options{}},
	{"gated by a bearer token", shopsites.Gated, shopsites.Options{Token: "s3cr3t-t0ken"}},
	{"variants", shopsites.Variants, shopsites.Options{}},
	{"shopify products.json", shopsites.Shopify, shopsites.Options{}},
	{"woocommerce store api by link headers", shopsites.WooCommerce, shopsites.Options{API: shopsites.WooStore}},
	{"wordpress core api ending on a 400", shopsites.WooCommerce, shopsites.Options{API: shopsites.WooCore}},
	{"offset api", shopsites.Offset, shopsites.Options{API: shopsites.OffsetPages}},
	{"cursor api", shopsites.Offset, shopsites.Options{API: shopsites.OffsetCursor}},
	{"graphql storefront", shopsites.GraphQL, shopsites.Options{Token: "shpat-st0refr0nt"}},
	{"next.js listing data", shopsites.NextJS, shopsites.Options{}},
	{"vue initial state", shopsites.Vue, shopsites.Options{}},
	{"oscommerce in windows-1252 with session ids", shopsites.OsCommerce, shopsites.Options{}},
	{"swiss java shop", shopsites.Swiss, shopsites.Options{}},
}

// TestShops crawls each fixture shop, built like a common real catalog
// site, with the config a user would write for it (SPEC 6b), and reads
// the export back: it must hold exactly the shop's products, column by
// column.
func TestShops(t *testing.T) {
	for _, tt := range shopCases {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.Token != "" {
				t.Setenv(shopsites.TokenEnv, tt.opts.Token)
			}
			shop, base, rep, rows := shopRun(t, tt.kind, tt.opts)
			expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
			if rep.CoverageGaps != 0 {
				t.Fatalf("gaps: %+v", rep.Gaps)
			}
			expectTruth(t, shop, base, rows)
		})
	}
}

func TestShop_SitemapsFetchNoImageBlogOrCategoryPage(t *testing.T) {
	shop, _, _, _ := shopRun(t, shopsites.Sitemaps, shopsites.Options{})
	for _, path := range []string{"/blog/", "/category/", "/cdn/"} {
		if n := shop.PageRequests(path); n != 0 {
			t.Errorf("%d requests under %s", n, path)
		}
	}
}

// TestShop_MarkupDrift: a JSON-LD shop that moves its product data out of
// JSON-LD halfway through the run trips error_rate with the drift detail,
// and the run does not end success.
func TestShop_MarkupDrift(t *testing.T) {
	_, _, rep, _ := shopRun(t, shopsites.JSONLD, shopsites.Options{Products: 200, DriftAfter: 60})
	want := "item pages were unusable (threshold 50%): the markup may have changed"
	if rep.Stop != verdict.StopErrorRate || !strings.Contains(rep.Detail, want) || rep.Outcome == verdict.OutcomeSuccess {
		t.Fatalf("verdict %s (%s): %q; want error_rate with the drift detail", rep.Outcome, rep.Stop, rep.Detail)
	}
	if rep.Items.New == 0 || rep.Items.New >= 60 {
		t.Fatalf("stored %d items, want those read before the redesign", rep.Items.New)
	}
}
