package state

import (
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// TestSweepKeepsTheItemsOfSkippedPages: the tombstone sweep finds the
// pages the traversal skipped by the page numbers the item records carry;
// the items of skipped pages stay, those of pages not linked or no longer
// yielding them go.
func TestSweepKeepsTheItemsOfSkippedPages(t *testing.T) {
	db := open(t, t.TempDir())
	page := func(i int) string { return fmt.Sprintf("http://h/item/%d", i) }
	const pages = 6
	// Traversal 1 reads every page: each yields its item, with a memo.
	traversal(t, db)
	b := &crawl.Batch{}
	for i := 1; i <= pages; i++ {
		q := crawl.Queued{Seq: uint64(100 + i), Entry: entry(page(i), crawl.KindItem)}
		v := at(page(i), fmt.Sprintf("k%d", i), i)
		b.Enqueue = append(b.Enqueue, q)
		b.Done = append(b.Done, crawl.Done{Seq: q.Seq, Entry: q.Entry, Items: []crawl.ItemVersion{v},
			Memo: &crawl.PageMemo{ETag: `"e"`, Items: []crawl.ItemRef{{Key: v.Key, URL: v.URL, Hash: v.Hash}}}})
	}
	if _, err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	records := storedRecords(t, db)
	for i := 1; i <= pages; i++ {
		if rec := records[fmt.Sprintf("k%d", i)]; rec.flags&itemPage == 0 || rec.page == 0 {
			t.Fatalf("the record of k%d carries no page number: %+v", i, rec)
		}
	}

	// Traversal 2 skips pages 1 to 3, reads 4 again, which no longer
	// yields its item, and does not link 5 or 6.
	tr := traversal(t, db)
	memos, err := db.Memos([]string{page(1), page(2), page(3)})
	if err != nil {
		t.Fatal(err)
	}
	b = &crawl.Batch{}
	for i, m := range memos {
		b.Skipped = append(b.Skipped, crawl.Skip{URL: page(i + 1), Items: len(m.Items)})
	}
	q := crawl.Queued{Seq: 200, Entry: entry(page(4), crawl.KindItem)}
	b.Enqueue = append(b.Enqueue, q)
	b.Done = append(b.Done, crawl.Done{Seq: q.Seq, Entry: q.Entry, Memo: &crawl.PageMemo{ETag: `"f"`}})
	if c, err := db.Commit(b); err != nil || c.Skipped != 3 {
		t.Fatalf("commit = %+v, %v; want 3 items skipped", c, err)
	}
	if f, err := db.Finish(0); err != nil || f.Queued != 0 {
		t.Fatalf("finish = %+v, %v", f, err)
	}
	if _, err := db.MarkRemoved(tr, "r2", time.Unix(100, 0)); err != nil {
		t.Fatal(err)
	}
	records = storedRecords(t, db)
	for i := 1; i <= pages; i++ {
		key := fmt.Sprintf("k%d", i)
		removed := records[key].flags&itemRemoved != 0 || pendingOf(t, db, key).Key == ""
		if want := i > 3; removed != want {
			t.Errorf("%s removed = %v, want %v (record %+v)", key, removed, want, records[key])
		}
	}
}

// storedRecords reads every item record, by key, in the items bucket and
// its recent part (in a write transaction, the only kind that reads them).
func storedRecords(t *testing.T, db *DB) map[string]itemRecord {
	t.Helper()
	out := map[string]itemRecord{}
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		return db.itemRecordsOf(tx).ForEach(func(k, v []byte) error {
			rec, err := decodeItemRecord(v)
			out[string(k)] = rec
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSweepRemovesAnItemItsSkippedPageNoLongerLists: a skip stands for
// what the page yielded when it was last read. A page read in a traversal
// that removed nothing (its sweep did not run) no longer yields its item;
// skipped in the next, it does not keep the item there: the sweep
// removes it.
func TestSweepRemovesAnItemItsSkippedPageNoLongerLists(t *testing.T) {
	db := open(t, t.TempDir())
	page := func(i int) string { return fmt.Sprintf("http://h/item/%d", i) }
	read := func(seq uint64, i int, items ...crawl.ItemVersion) {
		t.Helper()
		q := crawl.Queued{Seq: seq, Entry: entry(page(i), crawl.KindItem)}
		memo := &crawl.PageMemo{ETag: fmt.Sprintf(`"%d"`, seq)}
		for _, v := range items {
			memo.Items = append(memo.Items, crawl.ItemRef{Key: v.Key, URL: v.URL, Hash: v.Hash})
		}
		if _, err := db.Commit(&crawl.Batch{Enqueue: []crawl.Queued{q},
			Done: []crawl.Done{{Seq: q.Seq, Entry: q.Entry, Items: items, Memo: memo}}}); err != nil {
			t.Fatal(err)
		}
	}
	finish := func() {
		t.Helper()
		if f, err := db.Finish(0); err != nil || f.Queued != 0 {
			t.Fatalf("finish = %+v, %v", f, err)
		}
	}
	// Traversal 1: pages 1 and 2 each yield their item.
	traversal(t, db)
	read(101, 1, at(page(1), "k1", 1))
	read(102, 2, at(page(2), "k2", 2))
	finish()
	// Traversal 2 reads both again; page 1 yields nothing now. Its sweep
	// does not run, as after a traversal with a gap.
	traversal(t, db)
	read(201, 1)
	read(202, 2, at(page(2), "k2", 2))
	finish()
	// Traversal 3 skips both pages.
	tr := traversal(t, db)
	memos, err := db.Memos([]string{page(1), page(2)})
	if err != nil {
		t.Fatal(err)
	}
	b := &crawl.Batch{}
	for i, m := range memos {
		b.Skipped = append(b.Skipped, crawl.Skip{URL: page(i + 1), Items: len(m.Items)})
	}
	if c, err := db.Commit(b); err != nil || c.Skipped != 1 {
		t.Fatalf("commit = %+v, %v; want 1 item skipped", c, err)
	}
	finish()
	if _, err := db.MarkRemoved(tr, "r3", time.Unix(300, 0)); err != nil {
		t.Fatal(err)
	}
	records := storedRecords(t, db)
	if records["k1"].flags&itemRemoved == 0 || records["k2"].flags&itemRemoved != 0 {
		t.Fatalf("k1 %+v, k2 %+v; want k1 removed, k2 kept", records["k1"], records["k2"])
	}
}
