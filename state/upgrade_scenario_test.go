package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
)

// The upgrade scenario's site: a listing page, a second listing page, and
// five item pages, each yielding one item.
const upgradeSite = "http://shop.test"

func upgradeListing(n int) string { return fmt.Sprintf("%s/list/%d", upgradeSite, n) }
func upgradeItem(n int) string    { return fmt.Sprintf("%s/item/%d", upgradeSite, n) }

// upgradeURLs lists every URL of the scenario.
func upgradeURLs() []string {
	urls := []string{upgradeListing(1), upgradeListing(2)}
	for i := 1; i <= 5; i++ {
		urls = append(urls, upgradeItem(i))
	}
	return urls
}

// upgradeItemDone is item page n finished in a traversal: its item, and a
// memo with validators and a revisit schedule.
func upgradeItemDone(seq uint64, n int, price string) crawl.Done {
	url := upgradeItem(n)
	// The hash stands for the values; the fixture's items all cost 10.00.
	h := n*1000 + len(price)
	if price != "10.00" {
		h += 500
	}
	key, hash := fmt.Sprintf("sku-%d", n), fmt.Sprintf("%032x", h)
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return crawl.Done{Seq: seq, Entry: crawl.Entry{URL: url, Kind: crawl.KindItem, Card: "card-" + key},
		Items: []crawl.ItemVersion{{Key: key, URL: url, Hash: hash, Values: []any{key, price}, FetchedAt: at, RunID: "run-1"}},
		Memo: &crawl.PageMemo{Tag: "tag", ETag: fmt.Sprintf(`"e%d"`, n), LastModified: "Mon, 30 Nov 2026 12:00:00 GMT",
			Items:    []crawl.ItemRef{{Key: key, URL: url, Hash: hash}},
			Interval: 24 * time.Hour, Due: at.Add(24 * time.Hour), Card: "card-" + key}}
}

// upgradeListingDone is listing page n finished, with its links in its memo.
func upgradeListingDone(seq uint64, n int, links []crawl.Entry) crawl.Done {
	return crawl.Done{Seq: seq, Entry: crawl.Entry{URL: upgradeListing(n), Kind: crawl.KindListing, Start: n == 1},
		Memo: &crawl.PageMemo{Tag: "tag", ETag: fmt.Sprintf(`"l%d"`, n), Links: links, Chain: &crawl.ChainMark{Held: len(links)}}}
}

// writeUpgradeScenario runs the scenario's first part on db: a whole
// traversal of the site, then a second traversal that skips item pages 1
// and 2 (not due under a revisit policy), queues 3 to 5 and listing 2, and
// stops there. The state it leaves, written by the format 7 layout (state
// at commit ada16ae), is testdata/format7.db.gz.
func writeUpgradeScenario(t *testing.T, db *DB) {
	t.Helper()
	items := func(from uint64, ns ...int) ([]crawl.Queued, []crawl.Entry) {
		var qs []crawl.Queued
		var links []crawl.Entry
		for i, n := range ns {
			e := crawl.Entry{URL: upgradeItem(n), Kind: crawl.KindItem, Card: fmt.Sprintf("card-sku-%d", n)}
			qs = append(qs, crawl.Queued{Seq: from + uint64(i), Entry: e})
			links = append(links, e)
		}
		return qs, links
	}
	commit := func(b *crawl.Batch) {
		t.Helper()
		if _, err := db.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	st, err := db.Begin([]crawl.Entry{{URL: upgradeListing(1), Kind: crawl.KindListing, Start: true}})
	if err != nil {
		t.Fatal(err)
	}
	seq := st.NextSeq
	qs, links := items(seq, 1, 2, 3)
	next := crawl.Queued{Seq: seq + 3, Entry: crawl.Entry{URL: upgradeListing(2), Kind: crawl.KindListing}}
	commit(&crawl.Batch{Enqueue: append(qs, next), Done: []crawl.Done{upgradeListingDone(seq-1, 1, append(links, next.Entry))}, NextSeq: seq + 4})
	qs2, links2 := items(seq+4, 4, 5)
	commit(&crawl.Batch{Enqueue: qs2, Done: []crawl.Done{upgradeListingDone(seq+3, 2, links2)}, NextSeq: seq + 6})
	var done []crawl.Done
	for i, n := range []int{1, 2, 3, 4, 5} {
		s := seq + uint64(i)
		if n > 3 {
			s++
		}
		done = append(done, upgradeItemDone(s, n, "10.00"))
	}
	commit(&crawl.Batch{Done: done, NextSeq: seq + 6})
	if _, err := db.Finish(0); err != nil {
		t.Fatal(err)
	}
	st, err = db.Begin([]crawl.Entry{{URL: upgradeListing(1), Kind: crawl.KindListing, Start: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !st.NewTraversal {
		t.Fatal("the second Begin did not start a traversal")
	}
	seq = st.NextSeq
	qs, _ = items(seq, 3)
	next = crawl.Queued{Seq: seq + 1, Entry: next.Entry}
	qs2, _ = items(seq+2, 4, 5)
	skips := []crawl.Skip{
		{URL: upgradeItem(1), Items: len(done[0].Memo.Items)},
		{URL: upgradeItem(2), Items: len(done[1].Memo.Items)},
	}
	commit(&crawl.Batch{Enqueue: append(append(qs, next), qs2...), Skipped: skips,
		Done: []crawl.Done{upgradeListingDone(seq-1, 1, append(links, next.Entry))}, NextSeq: seq + 4})
}
