package state

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// recentSite is URL n of the recent part's tests.
func recentSite(n int) string { return fmt.Sprintf("http://h/item/%d", n) }

// queueRecent commits batches of size new URLs each, up to n URLs, and
// returns each URL's page number as the store gave it out.
func queueRecent(t *testing.T, db *DB, next uint64, n, size int) map[string]uint64 {
	t.Helper()
	for from := 0; from < n; from += size {
		var qs []crawl.Queued
		for i := from; i < min(from+size, n); i++ {
			qs = append(qs, crawl.Queued{Seq: next, Entry: entry(recentSite(i), crawl.KindItem)})
			next++
		}
		if _, err := db.Commit(&crawl.Batch{Enqueue: qs, NextSeq: next}); err != nil {
			t.Fatal(err)
		}
	}
	return pagesOf(t, db, n)
}

// pagesOf returns the page numbers the seen set gives the first n URLs,
// failing for a URL it does not hold or a number given twice.
func pagesOf(t *testing.T, db *DB, n int) map[string]uint64 {
	t.Helper()
	pages, owners := map[string]uint64{}, map[uint64]string{}
	err := db.readSeen(func(tx *bolt.Tx) error {
		seen := db.seenOf(tx)
		for i := range n {
			u := recentSite(i)
			m, ok := seen.get(seenKey(u))
			switch {
			case !ok:
				t.Errorf("%s is not in the seen set", u)
			case owners[m.page] != "":
				t.Errorf("%s has page number %d, %s's", u, m.page, owners[m.page])
			case m.traversal != 1:
				t.Errorf("%s has the mark %+v, want traversal 1", u, m)
			}
			pages[u], owners[m.page] = m.page, u
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// sizes counts the entries of a tree and of its recent part: of the URL
// index (bucketURLs) or the item records (bucketItems).
func sizes(t *testing.T, db *DB, tree []byte) (main, recent int) {
	t.Helper()
	recentOf := map[string][]byte{string(bucketURLs): bucketURLsRecent, string(bucketItems): bucketItemsRecent}
	runsOf := map[string]*runSet{string(bucketURLs): db.urlRuns, string(bucketItems): db.itemRuns}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		// The base and the runs, each key once.
		c := runsOf[string(tree)].view(tx).cursor()
		for k, _ := c.first(); k != nil; k, _ = c.next() {
			main++
		}
		recent = db.count(tx.Bucket(recentOf[string(tree)]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return main, recent
}

// TestNewURLsFoldIntoTheIndex: new URLs go to the URL index's recent part
// and, once it holds foldAt, into the index, in transactions within the
// write budget; every URL keeps its page number through folds and
// reopening, and lookups find it throughout.
func TestNewURLsFoldIntoTheIndex(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{WriteBudget: 4 * nodeBytes})
	if err != nil {
		t.Fatal(err)
	}
	db.recent.foldAt = 100
	st, err := db.Begin([]crawl.Entry{{URL: "http://h/list", Kind: crawl.KindListing, Start: true}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1030
	pages := queueRecent(t, db, st.NextSeq, n, 70)
	index, recent := sizes(t, db, bucketURLs)
	if recent >= 100 || index+recent != n+1 {
		t.Errorf("%d URLs in the index, %d in its recent part; want %d in all, fewer than 100 recent", index, recent, n+1)
	}
	if db.recent.size() != recent {
		t.Errorf("the map holds %d URLs, the recent part %d", db.recent.size(), recent)
	}
	urls := make([]string, n)
	for i := range urls {
		urls[i] = recentSite(i)
	}
	if seen, err := db.Seen(urls); err != nil {
		t.Fatal(err)
	} else {
		for i, ok := range seen {
			if !ok {
				t.Errorf("Seen(%s) = false", urls[i])
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open(t, dir)
	if db.recent.size() != recent {
		t.Errorf("Open loaded %d recent URLs, want %d", db.recent.size(), recent)
	}
	for u, page := range pagesOf(t, db, n) {
		if page != pages[u] {
			t.Errorf("%s has page number %d after reopening, had %d", u, page, pages[u])
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	h, err := Check(dir, Options{})
	if err != nil || len(h.Problems) != 0 {
		t.Errorf("check = %v, %v", h.Problems, err)
	}
}

// TestRecentURLsSizesTheRecentParts: Options.RecentURLs is the URL
// index's fold size and half of it the item records'; a state reopened
// with a smaller size than the one that wrote it loads its whole recent
// part and folds it at the next commit, every URL keeping its page number.
func TestRecentURLsSizesTheRecentParts(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{RecentURLs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if db.recent.foldAt != 1000 || db.recentItems.foldAt != 500 {
		t.Fatalf("fold sizes %d and %d, want 1000 and 500", db.recent.foldAt, db.recentItems.foldAt)
	}
	st, err := db.Begin([]crawl.Entry{{URL: "http://h/list", Kind: crawl.KindListing, Start: true}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 600
	pages := queueRecent(t, db, st.NextSeq, n, 50)
	if index, recent := sizes(t, db, bucketURLs); index != 0 || recent != n+1 {
		t.Fatalf("%d URLs in the index, %d in its recent part; want all %d recent", index, recent, n+1)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(dir, Options{RecentURLs: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.recent.size() != n+1 {
		t.Fatalf("Open loaded %d recent URLs, want %d", db.recent.size(), n+1)
	}
	if st, err = db.Begin(nil); err != nil || st.NewTraversal {
		t.Fatalf("begin = %+v, %v; want the traversal resumed", st, err)
	}
	if _, err := db.Commit(&crawl.Batch{Enqueue: []crawl.Queued{{Seq: st.NextSeq, Entry: entry(recentSite(n), crawl.KindItem)}},
		NextSeq: st.NextSeq + 1}); err != nil {
		t.Fatal(err)
	}
	if index, recent := sizes(t, db, bucketURLs); recent >= 200 || index+recent != n+2 {
		t.Errorf("%d URLs in the index, %d in its recent part after a commit; want %d in all, fewer than 200 recent", index, recent, n+2)
	}
	for u, page := range pagesOf(t, db, n) {
		if page != pages[u] {
			t.Errorf("%s has page number %d after the fold, had %d", u, page, pages[u])
		}
	}
}

// TestFoldCutShortGoesOnAtTheNextOpen: a crash after a fold wrote some
// URLs to the index and before it deleted them from the recent part leaves
// them in both, with the same page number; the next Open finds them, and
// the next fold finishes.
func TestFoldCutShortGoesOnAtTheNextOpen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.Begin([]crawl.Entry{{URL: "http://h/list", Kind: crawl.KindListing, Start: true}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	pages := queueRecent(t, db, st.NextSeq, n, 50)
	// What the fold's first transactions write: half of the recent URLs
	// in the index, still in the recent part.
	hashes := recentKeys(db.recent)
	err = cutFold(db, db.urlRuns, func(tx *bolt.Tx, out *bolt.Bucket) error {
		seen := db.seenOf(tx)
		for _, h := range hashes[:len(hashes)/2] {
			e, _ := seen.recent.get(h[:])
			if err := out.Put(h[:], encodeIndex(e.page, e.first)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open(t, dir)
	for u, page := range pagesOf(t, db, n) {
		if page != pages[u] {
			t.Errorf("%s has page number %d after the cut, had %d", u, page, pages[u])
		}
	}
	// A URL found again is not new: it keeps its number, gets none more.
	next := st.NextSeq + n
	if _, err := db.Commit(&crawl.Batch{Enqueue: []crawl.Queued{{Seq: next, Entry: entry(recentSite(0), crawl.KindItem)}},
		NextSeq: next + 1}); err != nil {
		t.Fatal(err)
	}
	if err := db.fold(); err != nil {
		t.Fatal(err)
	}
	if index, recent := sizes(t, db, bucketURLs); index != n+1 || recent != 0 || db.recent.size() != 0 {
		t.Errorf("after the fold: %d URLs in the index, %d recent, %d in the map; want %d, 0, 0",
			index, recent, db.recent.size(), n+1)
	}
	for u, page := range pagesOf(t, db, n) {
		if page != pages[u] {
			t.Errorf("%s has page number %d after the fold, had %d", u, page, pages[u])
		}
	}
}

// TestFailedCommitLeavesNoRecentURL: the URLs a transaction adds reach
// the map before it commits; a transaction that does not commit leaves
// none there.
func TestFailedCommitLeavesNoRecentURL(t *testing.T) {
	db := open(t, t.TempDir())
	if _, err := db.Begin([]crawl.Entry{{URL: "http://h/list", Kind: crawl.KindListing, Start: true}}); err != nil {
		t.Fatal(err)
	}
	before := db.recent.size()
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		if err := db.enqueue(tx, crawl.Queued{Seq: 10, Entry: entry(recentSite(1), crawl.KindItem)}, 1); err != nil {
			return err
		}
		return errors.New("cut short")
	})
	if err == nil {
		t.Fatal("the update did not fail")
	}
	if db.recent.size() != before {
		t.Errorf("the map holds %d URLs after a rolled back transaction, %d before", db.recent.size(), before)
	}
	if seen, _ := db.Seen([]string{recentSite(1)}); seen[0] {
		t.Error("a URL of a rolled back transaction is seen")
	}
}

// recentKeys returns the keys a recent part's map holds, in no order.
func recentKeys[K comparable, V any](r *recentMap[K, V]) []K {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Collect(maps.Keys(r.m))
}

// TestFoldKeepsAURLQueuedDuringIt: a URL added to the recent part between
// a fold's two steps stays there (the fold then drops its own entries one
// by one instead of emptying the bucket), and every URL keeps its number.
func TestFoldKeepsAURLQueuedDuringIt(t *testing.T) {
	db := open(t, t.TempDir())
	st, err := db.Begin([]crawl.Entry{{URL: "http://h/list", Kind: crawl.KindListing, Start: true}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	pages := queueRecent(t, db, st.NextSeq, n, 50)
	late := recentSite(n)
	db.between = func(string) {
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			return db.enqueue(tx, crawl.Queued{Seq: st.NextSeq + n, Entry: entry(late, crawl.KindItem)}, 1)
		})
		if err != nil {
			t.Error(err)
		}
	}
	if err := db.fold(); err != nil {
		t.Fatal(err)
	}
	if index, recent := sizes(t, db, bucketURLs); index != n+1 || recent != 1 || db.recent.size() != 1 {
		t.Errorf("after the fold: %d URLs in the index, %d recent, %d in the map; want %d, 1, 1",
			index, recent, db.recent.size(), n+1)
	}
	pages[late] = 0
	for u, page := range pagesOf(t, db, n+1) {
		if u != late && page != pages[u] {
			t.Errorf("%s has page number %d after the fold, had %d", u, page, pages[u])
		}
	}
	db.between = nil
	if err := db.fold(); err != nil {
		t.Fatal(err)
	}
	if index, recent := sizes(t, db, bucketURLs); index != n+2 || recent != 0 || db.recent.size() != 0 {
		t.Errorf("after the next fold: %d URLs in the index, %d recent, %d in the map; want %d, 0, 0",
			index, recent, db.recent.size(), n+2)
	}
}

// TestKeySpanBoundsARecentPart: the span of a recent part's keys, which
// sizes its map as it loads, is the count of numbers from the first key
// to the last, within the limit.
func TestKeySpanBoundsARecentPart(t *testing.T) {
	scratchBucket(t, func(b *bolt.Bucket) error {
		if got := keySpan(b, 100); got != 0 {
			t.Errorf("empty bucket: span %d, want 0", got)
		}
		for _, n := range []uint64{5, 6, 9} {
			if err := b.Put(seqKey(n), nil); err != nil {
				return err
			}
		}
		if got := keySpan(b, 100); got != 5 {
			t.Errorf("keys 5, 6 and 9: span %d, want 5", got)
		}
		if got := keySpan(b, 3); got != 3 {
			t.Errorf("keys 5, 6 and 9 under a limit of 3: span %d, want 3", got)
		}
		if err := b.Put([]byte("short"), nil); err != nil {
			return err
		}
		if got := keySpan(b, 100); got != 0 {
			t.Errorf("a key of 5 bytes: span %d, want 0", got)
		}
		return nil
	})
}
