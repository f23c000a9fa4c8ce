package stage

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/databrew/databrew-stage/internal/gctune"
	"github.com/databrew/databrew-stage/internal/testkit/bigjson"
	"github.com/databrew/databrew-stage/internal/testkit/heappeak"
	"github.com/databrew/databrew-stage/verdict"
)

// bigJSONListing reads the cards of the bigjson listing pages.
const bigJSONListing = `
[listing]
format    = "json"
items     = "data.products"
next_page = "next"

[item]
key = "sku"

[item.fields]
sku          = { json = "sku", required = true }
title        = { json = "title", required = true }
price        = { json = "price", type = "float64" }
variant_skus = { json = "variants[].sku", multiple = true }
stock        = { json = "sum(variants[].stock)", type = "int64" }
`

// TestRun_9MBJSONPagesUnderTheSoftLimit runs the stage on a loopback JSON
// API with two start URLs, each answering one 9 MB listing page of 18,000
// products (without a Content-Length, as a gunzipped page arrives), under
// the binary's own GOGC and the soft memory limit it sets in a 64 MiB
// cgroup (internal/gctune): every
// product is exported with its values, and the run holds at most 56 MiB
// more than before at its peak (about 41 MiB: a page's body, its 18,000
// items and the next page's read; reading the pages as trees held
// 84 MiB).
func TestRun_9MBJSONPagesUnderTheSoftLimit(t *testing.T) {
	const n = 18000
	pages := [][]byte{bigjson.Listing(1, n), bigjson.Listing(n+1, n)}
	for i, p := range pages {
		pages[i] = bytes.Replace(p, []byte(`"\/api\/products?page=2"`), []byte("null"), 1)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var chain int
		if _, err := fmt.Sscanf(r.URL.Query().Get("chain"), "%d", &chain); err != nil || r.URL.Path != "/api/products" || chain >= len(pages) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(pages[chain])
	}))
	t.Cleanup(srv.Close)
	f := &fixture{t: t, srv: srv, dir: t.TempDir()}
	cfg := f.configOf(bigJSONListing, map[string]string{"max_links_per_page": "20000", "respect_robots": "false", "timeout": `"30s"`}, "",
		srv.URL+"/api/products?chain=0", srv.URL+"/api/products?chain=1")

	defer debug.SetGCPercent(debug.SetGCPercent(gctune.DefaultGCPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(gctune.MemoryLimitFor(64 << 20)))
	var rep verdict.RunReport
	peak, before := heappeak.Measure(func() { rep = f.run(cfg, Options{}) })
	t.Logf("live heap %.1f MB before the run, %.1f MB at its peak", float64(before)/1e6, float64(peak)/1e6)

	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Export.Rows != 2*n {
		t.Fatalf("%d rows exported, want %d", rep.Export.Rows, 2*n)
	}
	dirs, _ := filepath.Glob(filepath.Join(cfg.Output, "dt=*", "run=*"))
	if len(dirs) != 1 {
		t.Fatalf("run folders %q, want one", dirs)
	}
	rows := map[string]exported{}
	for _, r := range readRun(t, dirs[0]) {
		rows[r.key] = r
	}
	for _, id := range []int{1, 3, n, n + 1, 2 * n} {
		r, ok := rows[bigjson.SKU(id)]
		want := []any{bigjson.SKU(id), bigjson.Title(id), float64(bigjson.Price(id)) / 100, int64(bigjson.Stock(id))}
		if !ok || fmt.Sprint(r.values[0], r.values[1], r.values[2], r.values[4]) != fmt.Sprint(want...) {
			t.Errorf("product %d: exported %v, want %v", id, r.values, want)
		}
	}
	if held := peak - min(peak, before); held > 56<<20 {
		t.Errorf("the run held %.1f MiB more than before at its peak, want at most 56 MiB", float64(held)/(1<<20))
	}
}
