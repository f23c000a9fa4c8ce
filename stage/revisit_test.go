package stage

import (
	"strconv"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// revisitSection revisits item pages between one and four days apart, and
// fetches one at once when its card on a listing changes.
const revisitSection = `
[revisit]
card = "article.product_pod"
min_after = "1d"
max_after = "4d"

[export]
tombstones = true
`

// TestRevisit_ItemPagesAreFetchedWhenNewCardChangedOrDue walks a catalog
// of 60 items through simulated days: a rerun fetches only the listing
// pages; a price change (on the card) and a new item are fetched at once;
// a stock change (on the item page only) is found when its page is due;
// a removed item is tombstoned though the other items' pages were
// skipped.
func TestRevisit_ItemPagesAreFetchedWhenNewCardChangedOrDue(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	cfg := f.config(nil, revisitSection)
	day0 := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	at := func(d time.Duration) Options { return Options{Clock: fixedClock{at: day0.Add(d)}} }

	rep := f.run(cfg, at(0))
	if rep.Items.New != 60 || rep.Items.Skipped != 0 {
		t.Fatalf("run 1: items %+v", rep.Items)
	}
	listings := rep.Requests.OK - 60

	// An hour later nothing is due: only the listing pages are fetched.
	f.site.ResetStats()
	rep = f.run(cfg, at(time.Hour))
	if rep.Items.Skipped != 60 || rep.Requests.Total != listings || rep.Items.New+rep.Items.Changed+rep.Items.Unchanged != 0 {
		t.Fatalf("rerun within min_after: requests %+v, items %+v; want %d listing pages and 60 skipped", rep.Requests, rep.Items, listings)
	}
	if rep.Traversal.Gaps != 0 || !rep.Traversal.Completed {
		t.Fatalf("skips made the traversal unclean: %+v", rep.Traversal)
	}

	// A card-visible change, a page-only change, a new item, a removal.
	f.site.SetPrice(7, 777.7)
	f.site.SetStock(9, 3)
	f.site.Add(1)
	f.site.Remove(12)
	f.site.ResetStats()
	rep = f.run(cfg, at(2*time.Hour))
	if rep.Items.Changed != 1 || rep.Items.New != 1 || rep.Items.Removed != 1 || rep.Items.Skipped != 58 {
		t.Fatalf("after one catalog step: items %+v; want item 7 changed, 1 new, item 12 removed, the rest skipped", rep.Items)
	}
	for _, id := range []int{7, 61} {
		if n := f.site.PageRequests(itemPath(id)); n != 1 {
			t.Fatalf("item %d fetched %d times, want once", id, n)
		}
	}
	if n := f.site.PageRequests(itemPath(9)); n != 0 {
		t.Fatalf("item 9, whose change shows only on its page, was fetched before it was due (%d)", n)
	}

	// A day later every page is due: the stock change is found, the
	// unchanged pages answer 304.
	rep = f.run(cfg, at(26*time.Hour))
	if rep.Items.Changed != 1 || rep.Items.Skipped != 0 || rep.Requests.NotModified < 55 {
		t.Fatalf("a day later: requests %+v, items %+v; want item 9 changed, every page fetched", rep.Requests, rep.Items)
	}
	rows := readRun(t, rep.Export.Path)
	if it, _ := f.site.Item(9); len(rows) != 1 || rows[0].key != it.UPC {
		t.Fatalf("a day later exported %+v, want item 9", rows)
	}

	// Unchanged pages now wait one and a half days (less jitter): an hour
	// past a day, nothing is due again.
	rep = f.run(cfg, at(26*time.Hour+25*time.Hour))
	if rep.Items.Skipped < 58 {
		t.Fatalf("after the intervals grew: items %+v; want the unchanged pages skipped", rep.Items)
	}
}

func itemPath(id int) string { return "/catalogue/item-" + strconv.Itoa(id) + ".html" }
