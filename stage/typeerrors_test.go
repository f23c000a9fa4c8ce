package stage

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// swissShop serves item pages /p/N with prices as a Swiss shop writes
// them, CHF 1'234.50, and a bad price on item 7: "auf Anfrage" ("on
// request"), which is no number.
func swissShop(f *fixture, items int) {
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		w.Header().Set("Content-Type", "text/html")
		switch {
		case r.URL.Path == "/list":
			var b strings.Builder
			for id := 1; id <= items; id++ {
				fmt.Fprintf(&b, `<a class="p" href="/p/%d">%d</a>`, id, id)
			}
			fmt.Fprintf(w, "<html><body>%s%s</body></html>", b.String(), strings.Repeat("<p>list</p>", 40))
		case strings.HasPrefix(r.URL.Path, "/p/"):
			id, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
			price := fmt.Sprintf("CHF %d'%03d.50", id, 100+id)
			if id%2 == 0 {
				price = fmt.Sprintf("CHF %d\u2019%03d.50", id, 100+id)
			}
			if id == 7 {
				price = "auf Anfrage"
			}
			fmt.Fprintf(w, `<html><body><h1>Produkt %d</h1><span class="sku">SKU-%d</span><span class="price">%s</span><span class="stock">%s</span>%s</body></html>`,
				id, id, price, map[bool]string{true: "viele", false: "12"}[id == 3], strings.Repeat("<p>product</p>", 40))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

const swissExtraction = `
[listing]
item_links = "a.p"

[item]
key = "sku"

[item.fields]
sku   = { css = "span.sku", required = true }
title = { css = "h1" }
price = { css = "span.price", type = "float64" }
stock = { css = "span.stock", type = "int64" }
note  = { css = "span.note" }
`

func TestTypeErrors_AreCountedPerFieldAndLoggedWithAnExample(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 1})
	swissShop(f, 12)
	var logs bytes.Buffer
	rep := f.run(f.configOf(swissExtraction, nil, "", f.srv.URL+"/list"), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	want := map[string]verdict.FieldCounts{
		"sku": {}, "title": {}, "price": {TypeErrors: 1}, "stock": {TypeErrors: 1}, "note": {FoundNothing: 12},
	}
	if rep.Items.New != 12 || rep.Items.TypeErrors != 2 || fmt.Sprint(rep.Fields) != fmt.Sprint(want) {
		t.Fatalf("items %+v, fields %+v; want 12 items, 2 type errors, %+v", rep.Items, rep.Fields, want)
	}
	prices := map[string]any{}
	for _, r := range readRun(t, rep.Export.Path) {
		prices[r.key] = r.price
	}
	if prices["SKU-12"] != 12112.5 || prices["SKU-11"] != 11111.5 || prices["SKU-7"] != nil {
		t.Fatalf("prices %v: want CHF 12’112.50 and 11'111.50 read, the price on request NULL", prices)
	}
	for _, line := range []string{
		`field price: 1 values are not float64, e.g. \"auf Anfrage\" (` + f.srv.URL + `/p/7)`,
		`field stock: 1 values are not int64, e.g. \"viele\" (` + f.srv.URL + `/p/3)`,
		`field \"note\" found nothing on any of the 12 items read`,
	} {
		if strings.Count(logs.String(), line) != 1 {
			t.Fatalf("log does not say once %q:\n%s", line, logs.String())
		}
	}
}

func TestTypeErrors_StrictTypesMakeTheItemUnusable(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 1})
	swissShop(f, 12)
	extraction := strings.Replace(swissExtraction, `key = "sku"`, "key = \"sku\"\nstrict_types = true", 1)
	rep := f.run(f.configOf(extraction, nil, "", f.srv.URL+"/list"), Options{})
	if rep.Items.New != 10 || rep.CoverageGaps != 2 || rep.Items.TypeErrors != 2 {
		t.Fatalf("items %+v, gaps %+v; want items 3 and 7 unusable", rep.Items, rep.Gaps)
	}
}
