package crawl_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/verdict"
)

// Four shards of one crawl each walk every listing page and fetch a
// disjoint part of the item pages; together they fetch and store each
// item exactly once.
func TestShardsSplitTheItemPages(t *testing.T) {
	const shards, listings, perPage = 4, 10, 10
	fetchedBy := map[string]int{}
	total := 0
	for i := range shards {
		u := newUnit(t, listings, perPage)
		u.settings.Shard = crawl.Shard{Index: i, Count: shards}
		res := u.run()
		expectStop(t, res, verdict.StopQueueEmpty, "")
		lists, items := 0, 0
		for _, f := range u.site.fetches() {
			switch {
			case strings.Contains(f, "/list/"):
				lists++
			case strings.Contains(f, "/item/"):
				items++
				if prev, dup := fetchedBy[f]; dup {
					t.Errorf("%s fetched by shards %d and %d", f, prev, i)
				}
				fetchedBy[f] = i
				if !u.settings.Shard.Owns(f) {
					t.Errorf("shard %d fetched %s, which it does not own", i, f)
				}
			}
		}
		if lists != listings {
			t.Errorf("shard %d fetched %d listing pages, want every one of %d", i, lists, listings)
		}
		if res.Items.New != items || items == 0 {
			t.Errorf("shard %d: %d new items from %d item pages", i, res.Items.New, items)
		}
		if o, _ := verdict.Decide(res.Facts); o != verdict.OutcomeSuccess {
			t.Errorf("shard %d: outcome %s, want success", i, o)
		}
		total += res.Items.New
	}
	if total != listings*perPage || len(fetchedBy) != listings*perPage {
		t.Fatalf("shards stored %d items from %d pages, want %d", total, len(fetchedBy), listings*perPage)
	}
}

func TestShardOwnsEveryTextOnce(t *testing.T) {
	for n := 1; n <= 8; n++ {
		for k := range 200 {
			text := fmt.Sprintf("https://shop.example/item/%d", k)
			owners := 0
			for i := range n {
				if (crawl.Shard{Index: i, Count: n}).Owns(text) {
					owners++
				}
			}
			if owners != 1 {
				t.Fatalf("%q has %d owners among %d shards, want 1", text, owners, n)
			}
		}
	}
	for _, bad := range []crawl.Shard{{Index: 4, Count: 4}, {Index: -1, Count: 2}, {Index: 1, Count: 0}} {
		if bad.Valid() == nil {
			t.Errorf("%+v: valid, want an error", bad)
		}
	}
}

// TestShardsSplitLookAlikeURLsEvenly: URLs that differ only in letters
// whose low bits agree (a, e, i, m, q, u, y) still spread over a power of
// two of shards, each within a few points of its share.
func TestShardsSplitLookAlikeURLsEvenly(t *testing.T) {
	const letters = "aeimquy"
	for _, n := range []int{2, 4, 8} {
		counts := make([]int, n)
		total := 0
		for a := range len(letters) {
			for b := range len(letters) {
				for c := range len(letters) {
					for d := range len(letters) {
						url := "https://shop.example/p/" + string([]byte{letters[a], letters[b], letters[c], letters[d]})
						for i := range n {
							if (crawl.Shard{Index: i, Count: n}).Owns(url) {
								counts[i]++
							}
						}
						total++
					}
				}
			}
		}
		for i, c := range counts {
			if share := float64(c) / float64(total); share < 0.8/float64(n) || share > 1.2/float64(n) {
				t.Errorf("%d shards: shard %d owns %d of %d look-alike URLs (%.1f%%), want about %.1f%%", n, i, c, total, 100*share, 100/float64(n))
			}
		}
	}
}
