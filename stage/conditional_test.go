package stage

import (
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// TestConditional_AnUnchangedSiteAnswers304ToEveryPage: the second run
// sends every page's ETag back; the site answers 304 to all of them, so
// the run reads no body, replays the listings' links from the state and
// counts every item unchanged; nothing is exported.
func TestConditional_AnUnchangedSiteAnswers304ToEveryPage(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	cfg := f.config(nil, "")
	rep := f.run(cfg, Options{})
	if rep.Items.New != 60 || rep.Requests.NotModified != 0 {
		t.Fatalf("run 1: %d new, %d not modified", rep.Items.New, rep.Requests.NotModified)
	}
	pages := rep.Requests.OK
	f.site.ResetStats()
	rep = f.run(cfg, Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Requests.NotModified != pages || rep.Requests.OK != pages || rep.Items.Unchanged != 60 || rep.Items.New+rep.Items.Changed != 0 {
		t.Fatalf("run 2: requests %+v, items %+v; want all %d pages not modified and 60 unchanged", rep.Requests, rep.Items, pages)
	}
	if got := f.site.NotModified(); got != int64(pages) {
		t.Fatalf("the site answered %d requests with 304, want %d", got, pages)
	}
	if b := f.site.BytesSent(); b != 0 {
		t.Fatalf("the site sent %d body bytes to a run of 304s", b)
	}
	if rep.Export.Published {
		t.Fatalf("an unchanged site published: %+v", rep.Export)
	}
}

// TestConditional_AChangedPageIsReadWhole: a price change alters the item
// page and the listing card that shows it: both are fetched whole, the
// change is exported, and every other page answers 304.
func TestConditional_AChangedPageIsReadWhole(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	cfg := f.config(nil, "")
	first := f.run(cfg, Options{})
	f.site.SetPrice(7, 1234.5)
	rep := f.run(cfg, Options{})
	if rep.Items.Changed != 1 || rep.Items.Unchanged != 59 || rep.Export.Rows != 1 {
		t.Fatalf("items %+v, export %+v; want the one change exported", rep.Items, rep.Export)
	}
	// Item 7's page and its listing page are read whole.
	if want := first.Requests.OK - 2; rep.Requests.NotModified != want {
		t.Fatalf("%d pages not modified, want %d", rep.Requests.NotModified, want)
	}
	rows := readRun(t, rep.Export.Path)
	if it, _ := f.site.Item(7); len(rows) != 1 || rows[0].key != it.UPC || rows[0].price != 1234.5 {
		t.Fatalf("run 2 exported %+v, want item 7 at its new price", rows)
	}
}

// TestConditional_TombstonesAfterATraversalOf304s: items whose pages
// answered 304 were seen; only the item the site removed is exported as
// removed.
func TestConditional_TombstonesAfterATraversalOf304s(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	cfg := f.config(nil, "\n[export]\ntombstones = true\n")
	f.run(cfg, Options{})
	f.site.Remove(12)
	rep := f.run(cfg, Options{})
	if rep.Items.Removed != 1 || rep.Items.Unchanged != 59 || rep.Requests.NotModified < 50 {
		t.Fatalf("items %+v, requests %+v; want 1 removed, 59 unchanged mostly by 304", rep.Items, rep.Requests)
	}
	// The removed item comes back: its page is fetched whole (its memo
	// went with the tombstone) and it is exported again.
	f.site.Restore(12)
	rep = f.run(cfg, Options{})
	if rep.Items.Changed != 1 || rep.Export.Rows != 1 {
		t.Fatalf("restored item: items %+v, export %+v; want it exported again", rep.Items, rep.Export)
	}
}

// TestConditional_AChangedConfigReadsEveryPageAnew: memos are tied to the
// config's extraction; after a selector changes, no memo is reused, so
// the new field is read from every page.
func TestConditional_AChangedConfigReadsEveryPageAnew(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	cfg := f.config(nil, "")
	f.run(cfg, Options{})
	extraction := strings.Replace(itemSection, "[item.fields]", "[item.fields]\nheading = { css = \"h1\" }", 1)
	if extraction == itemSection {
		t.Fatal("the test could not add a field")
	}
	changed := f.configOf(extraction, nil, "")
	if memoTag(changed) == memoTag(cfg) || memoTag(cfg) == "" {
		t.Fatalf("memo tags %q and %q", memoTag(cfg), memoTag(changed))
	}
	rep := f.run(changed, Options{})
	if rep.Requests.NotModified != 0 || rep.Items.Changed != 20 {
		t.Fatalf("after the config changed: requests %+v, items %+v; want every page read, every item changed", rep.Requests, rep.Items)
	}
	rep = f.run(changed, Options{})
	if rep.Requests.NotModified != rep.Requests.OK {
		t.Fatalf("with the new config unchanged: requests %+v, want every page not modified", rep.Requests)
	}
}
