package state

import (
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
)

// at is an item version of key k with hash h, yielded by the page url.
func at(url, k string, h int) crawl.ItemVersion {
	v := version(k, hash(h))
	v.URL = url
	return v
}

// traversal starts a new traversal: the queue is empty between them.
func traversal(t *testing.T, db *DB) uint64 {
	t.Helper()
	st, err := db.Begin(nil)
	if err != nil || !st.NewTraversal {
		t.Fatalf("begin = %+v, %v; want a new traversal", st, err)
	}
	return st.Traversal
}

// pendingOf returns key k's pending version, or a zero Version.
func pendingOf(t *testing.T, db *DB, k string) Version {
	t.Helper()
	var got Version
	if err := db.ForEachPending(^uint64(0), func(v Version) error {
		if v.Key == k {
			got = v
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestDuplicateKeys_OnePageHoldsAKeyWhateverTheFetchOrder(t *testing.T) {
	db := open(t, t.TempDir())
	const a, b = "http://h/a", "http://h/b"
	traversal(t, db)
	c := store(t, db, at(a, "k", 1), at(b, "k", 2))
	if c.New != 1 || c.DuplicateKeys != 1 || *c.FirstDuplicate != (crawl.DuplicateKey{Key: "k", HeldBy: a, AlsoAt: b}) {
		t.Fatalf("traversal 1: %+v %+v, want k new from a and b a duplicate", c, c.FirstDuplicate)
	}
	if v := pendingOf(t, db, "k"); v.URL != a || v.Hash != hash(1) {
		t.Fatalf("pending %+v, want a's values", v)
	}
	// The other fetch order changes nothing: b is a duplicate, a unchanged.
	for range 3 {
		traversal(t, db)
		c = store(t, db, at(b, "k", 2), at(a, "k", 1))
		if c.New+c.Changed != 0 || c.Unchanged != 1 || c.DuplicateKeys != 1 || c.FirstDuplicate.HeldBy != a {
			t.Fatalf("a later traversal: %+v; want a unchanged, b a duplicate", c)
		}
	}
	// a is still linked but stops yielding k; b's values are not taken
	// while a may still come, and k is not removed: b yielded it.
	tr := traversal(t, db)
	link(t, db, a)
	if c = store(t, db, at(b, "k", 2)); c.DuplicateKeys != 1 || c.Changed != 0 {
		t.Fatalf("traversal without a: %+v", c)
	}
	if n, err := db.MarkRemoved(tr, "r", time.Unix(0, 0)); err != nil || n != 0 {
		t.Fatalf("removed %d, %v: a key another page yielded is not removed", n, err)
	}
	// After a whole traversal without a, b takes k over: one change.
	if st, err := db.Begin(nil); err != nil || !st.NewTraversal || st.Moves.Moved != 0 {
		t.Fatalf("begin = %+v, %v; want a new traversal and no move (a was linked)", st, err)
	}
	if c = store(t, db, at(b, "k", 2)); c.Changed != 1 || c.DuplicateKeys != 0 {
		t.Fatalf("takeover: %+v, want one change", c)
	}
	if v := pendingOf(t, db, "k"); v.URL != b || v.Hash != hash(2) {
		t.Fatalf("pending %+v, want b's values", v)
	}
	// a comes back: now it is the duplicate.
	traversal(t, db)
	if c = store(t, db, at(a, "k", 1), at(b, "k", 2)); c.Unchanged != 1 || c.DuplicateKeys != 1 || c.FirstDuplicate.HeldBy != b {
		t.Fatalf("a back: %+v", c)
	}
}

func TestDuplicateKeys_TheFirstValuesOfAPageWinWithinATraversal(t *testing.T) {
	db := open(t, t.TempDir())
	traversal(t, db)
	// Two cards of one listing page with one key.
	c := store(t, db, at("http://h/list", "k", 1))
	c = c.Add(store(t, db, at("http://h/list", "k", 2)))
	if c.New != 1 || c.DuplicateKeys != 1 {
		t.Fatalf("%+v, want one new and one duplicate", c)
	}
	traversal(t, db)
	c = store(t, db, at("http://h/list", "k", 1))
	c = c.Add(store(t, db, at("http://h/list", "k", 2)))
	if c.Unchanged != 1 || c.Changed != 0 || c.DuplicateKeys != 1 {
		t.Fatalf("next traversal: %+v, want unchanged and a duplicate, not a change", c)
	}
}

func TestLongKeysAndURLsAreStored(t *testing.T) {
	db := open(t, t.TempDir())
	st := traversalStart(t, db)
	longURL := "http://h/" + strings.Repeat("u", 100_000)
	longKey := strings.Repeat("k", 40_000)
	nulKey := "\x00short"
	b := &crawl.Batch{Done: []crawl.Done{
		{Seq: st, Entry: entry(longURL, crawl.KindItem), Failed: true},
		{Seq: st + 1, Entry: entry("http://h/x", crawl.KindItem), Items: []crawl.ItemVersion{at("http://h/x", longKey, 1), at("http://h/x", nulKey, 2), at("http://h/x", "", 3)}},
	}}
	c, err := db.Commit(b)
	if err != nil || c.New != 3 {
		t.Fatalf("commit = %+v, %v", c, err)
	}
	for _, k := range []string{longKey, nulKey, ""} {
		if v := pendingOf(t, db, k); v.Hash == "" {
			t.Fatalf("no pending version for a key of %d bytes", len(k))
		}
	}
	// The failed URL is queued again whole.
	st2, err := db.Begin(nil)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := db.Read(0, 10)
	if err != nil || len(qs) != 1 || qs[0].URL != longURL || st2.Queued != 1 {
		t.Fatalf("queue = %d entries, %v", len(qs), err)
	}
	// Once published, a long key that is gone is exported as removed under
	// its full key.
	db.Commit(&crawl.Batch{Done: []crawl.Done{{Seq: qs[0].Seq, Entry: qs[0].Entry}}})
	p, _ := db.PendingSummary()
	if err := db.BeginPublish(Publication{RunID: "r1", MaxSeq: p.MaxSeq}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CommitPublish("r1"); err != nil {
		t.Fatal(err)
	}
	tr := traversal(t, db)
	if _, err := db.Commit(&crawl.Batch{Done: []crawl.Done{{Seq: 1, Entry: entry("http://h/x", crawl.KindItem), Items: []crawl.ItemVersion{at("http://h/x", nulKey, 2), at("http://h/x", "", 3)}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.MarkRemoved(tr, "r", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if v := pendingOf(t, db, longKey); v.Change != ChangeRemoved {
		t.Fatalf("the long key's pending version = %+v, want a removal", v.Change)
	}
	if v := pendingOf(t, db, nulKey); v.Change != "" {
		t.Fatalf("a key seen again has a pending %s", v.Change)
	}
}

// traversalStart begins a traversal and returns its first free sequence
// number.
func traversalStart(t *testing.T, db *DB) uint64 {
	t.Helper()
	st, err := db.Begin(nil)
	if err != nil {
		t.Fatal(err)
	}
	return st.NextSeq
}

func TestDuplicateKeys_WithTwoOtherPagesTheKeyChangesHandsOnce(t *testing.T) {
	const a, b, c = "http://h/a", "http://h/b", "http://h/c"
	for name, order := range map[string]func(tr int) [2]string{
		"b then c":    func(int) [2]string { return [2]string{b, c} },
		"c then b":    func(int) [2]string { return [2]string{c, b} },
		"alternating": func(tr int) [2]string { return [2][2]string{{b, c}, {c, b}}[tr%2] },
	} {
		// a never yields the key again; b and c do, each traversal. Linked
		// but yielding nothing, a loses the key after a traversal it
		// missed; gone from the traversal, when the traversal completes.
		for _, aLinked := range []bool{true, false} {
			db := open(t, t.TempDir())
			traversal(t, db)
			store(t, db, at(a, "k", 1))
			values := map[string]int{b: 2, c: 3}
			changes := 0
			for tr := range 6 {
				st, err := db.Begin(nil)
				if err != nil || !st.NewTraversal {
					t.Fatalf("begin = %+v, %v", st, err)
				}
				changes += st.Moves.Changed
				if aLinked {
					link(t, db, a)
				}
				pages := order(tr)
				got := store(t, db, at(pages[0], "k", values[pages[0]]), at(pages[1], "k", values[pages[1]]))
				changes += got.Changed
			}
			if holder := pendingOf(t, db, "k").URL; changes != 1 || holder == a {
				t.Fatalf("%s, a linked %v: %d changes, the key held by %s; want it taken over once by b or c", name, aLinked, changes, holder)
			}
		}
	}
}

// link queues item pages in the current traversal and finishes them,
// yielding nothing.
func link(t *testing.T, db *DB, urls ...string) {
	t.Helper()
	b := &crawl.Batch{}
	for i, u := range urls {
		q := crawl.Queued{Seq: uint64(5000 + i), Entry: entry(u, crawl.KindItem)}
		b.Enqueue = append(b.Enqueue, q)
		b.Done = append(b.Done, crawl.Done{Seq: q.Seq, Entry: q.Entry})
	}
	if _, err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
}
