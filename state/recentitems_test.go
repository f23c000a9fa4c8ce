package state

import (
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// TestNewItemsFoldIntoTheItemsBucket: new item records go to the recent
// part and, once it holds foldAt, into the items bucket, in transactions
// within the write budget; wherever a record is, the next traversal finds
// it (unchanged, changed), reopening keeps it, and the tombstone sweep
// sees every record once.
func TestNewItemsFoldIntoTheItemsBucket(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{WriteBudget: 4 * nodeBytes})
	if err != nil {
		t.Fatal(err)
	}
	db.recentItems.foldAt = 40
	if _, err := db.Begin(nil); err != nil {
		t.Fatal(err)
	}
	const n = 530
	key := func(i int) string { return fmt.Sprintf("k%04d", i) }
	for from := 0; from < n; from += 30 {
		var vs []crawl.ItemVersion
		for i := from; i < min(from+30, n); i++ {
			vs = append(vs, version(key(i), hash(i)))
		}
		if c := store(t, db, vs...); c.New != len(vs) {
			t.Fatalf("batch from %d: %+v, want %d new", from, c, len(vs))
		}
	}
	items, recent := sizes(t, db, bucketItems)
	if recent >= 40 || items+recent != n || db.recentItems.size() != recent {
		t.Errorf("%d records in the items bucket, %d recent (%d in the map); want %d in all, fewer than 40 recent",
			items, recent, db.recentItems.size(), n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open(t, dir)
	db.recentItems.foldAt = 40
	if db.recentItems.size() != recent {
		t.Errorf("Open loaded %d recent records, want %d", db.recentItems.size(), recent)
	}
	f, err := db.Finish(0)
	if err != nil || f.Queued != 0 {
		t.Fatalf("finish = %+v, %v", f, err)
	}
	st, err := db.Begin(nil)
	if err != nil || st.Traversal != 2 {
		t.Fatalf("begin = %+v, %v; want traversal 2", st, err)
	}
	// Traversal 2 sees all but the last ten items, the first ten changed.
	var vs []crawl.ItemVersion
	for i := range n - 10 {
		h := hash(i)
		if i < 10 {
			h = hash(10000 + i)
		}
		vs = append(vs, version(key(i), h))
	}
	db.recentItems.foldAt = n // no fold: what reaches the recent part stays there
	if c := store(t, db, vs...); c.New != 0 || c.Changed != 10 || c.Unchanged != n-20 {
		t.Errorf("traversal 2 counts %+v, want 10 changed and %d unchanged", c, n-20)
	}
	db.recentItems.foldAt = 40
	// A record is rewritten where it is: none moved to the recent part.
	if items2, recent2 := sizes(t, db, bucketItems); items2 != items || recent2 != recent {
		t.Errorf("after traversal 2: %d records in the items bucket, %d recent; want %d, %d as before",
			items2, recent2, items, recent)
	}
	if _, err := db.Finish(0); err != nil {
		t.Fatal(err)
	}
	if got, err := db.MarkRemoved(2, "run-2", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	} else if got != 0 {
		t.Errorf("MarkRemoved queued %d removed versions of items no export held, want 0", got)
	}
	records := storedRecords(t, db)
	if len(records) != n {
		t.Errorf("%d records, want %d", len(records), n)
	}
	for i := range n {
		rec, ok := records[key(i)]
		removed := rec.flags&itemRemoved != 0
		if !ok || removed != (i >= n-10) {
			t.Errorf("record of %s: %+v (present %v), want removed %v", key(i), rec, ok, i >= n-10)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if h, err := Check(dir, Options{}); err != nil || len(h.Problems) != 0 {
		t.Errorf("check = %v, %v", h.Problems, err)
	}
}

// TestRepairKeepsRecentItemRecords: a repair copies the records of the
// recent part into the items bucket, a record in both (a fold cut short)
// as the recent part holds it; the check does not read the other copy.
func TestRepairKeepsRecentItemRecords(t *testing.T) {
	dir := t.TempDir()
	db := open(t, dir)
	if _, err := db.Begin(nil); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		store(t, db, version(fmt.Sprintf("k%03d", i), hash(i)))
	}
	// What a fold's first step writes: half the records in the items
	// bucket too, the first one there stale.
	keys := recentKeys(db.recentItems)
	err := cutFold(db, db.itemRuns, func(tx *bolt.Tx, out *bolt.Bucket) error {
		r := db.itemRecordsOf(tx)
		for i, k := range keys[:100] {
			v := r.Get([]byte(k))
			if i == 0 {
				// Stale: of another traversal, pointing at a version the
				// log does not hold.
				rec, _ := decodeItemRecord(v)
				rec.traversal, rec.pending = 99, 1<<40
				v = rec.encode()
			}
			if err := out.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := storedRecords(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The stale copy is not read: the check finds nothing wrong.
	if h, err := Check(dir, Options{}); err != nil || len(h.Problems) != 0 {
		t.Errorf("check = %v, %v; want no problem", h.Problems, err)
	}
	// Damage elsewhere, so that the repair copies the file.
	garble(t, statePath(dir), leavesOf(t, statePath(dir), string(bucketVersions))[0])
	if _, err := Repair(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	db = open(t, dir)
	got := storedRecords(t, db)
	if items, recent := sizes(t, db, bucketItems); items != 200 || recent != 0 || len(got) != 200 {
		t.Errorf("after the repair: %d records in the items bucket, %d recent, %d read; want 200, 0, 200", items, recent, len(got))
	}
	// Their pending versions were lost with the versions' leaves, so the
	// repair clears their hashes; the rest is as the state held it.
	for k, rec := range want {
		if g := got[k]; g.traversal != rec.traversal || g.url != rec.url || g.flags&itemFullKey != rec.flags&itemFullKey {
			t.Errorf("record of %s = %+v after the repair, want %+v", k, g, rec)
		}
	}
}

// TestFoldKeepsARecordRewrittenDuringIt: a record rewritten in the recent
// part between a fold's two steps reaches the items bucket as rewritten
// (the fold then drops the records one by one, writing that one again,
// instead of emptying the bucket).
func TestFoldKeepsARecordRewrittenDuringIt(t *testing.T) {
	db := open(t, t.TempDir())
	if _, err := db.Begin(nil); err != nil {
		t.Fatal(err)
	}
	const n = 100
	key := func(i int) string { return fmt.Sprintf("k%04d", i) }
	for i := range n {
		store(t, db, version(key(i), hash(i)))
	}
	rewritten := []byte("rewritten during the fold")
	db.between = func(string) {
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			return db.itemRecordsOf(tx).Put([]byte(key(7)), rewritten)
		})
		if err != nil {
			t.Error(err)
		}
	}
	if err := db.foldItems(); err != nil {
		t.Fatal(err)
	}
	if items, recent := sizes(t, db, bucketItems); items != n || recent != 0 || db.recentItems.size() != 0 {
		t.Errorf("after the fold: %d records in the items bucket, %d recent, %d in the map; want %d, 0, 0",
			items, recent, db.recentItems.size(), n)
	}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		if got := db.itemRuns.view(tx).get([]byte(key(7))); string(got) != string(rewritten) {
			t.Errorf("the items bucket holds %q for %s, want %q", got, key(7), rewritten)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAFoldedRecordIsFoundInTheSameSession: a record a fold moved into the
// items bucket is found there by the next traversal without reopening
// (the fold adds its key to the filter of the bucket's keys).
func TestAFoldedRecordIsFoundInTheSameSession(t *testing.T) {
	db := open(t, t.TempDir())
	if _, err := db.Begin(nil); err != nil {
		t.Fatal(err)
	}
	const n = 50
	key := func(i int) string { return fmt.Sprintf("k%04d", i) }
	var vs []crawl.ItemVersion
	for i := range n {
		vs = append(vs, version(key(i), hash(i)))
	}
	store(t, db, vs...)
	if err := db.foldItems(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Finish(0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Begin(nil); err != nil {
		t.Fatal(err)
	}
	if c := store(t, db, vs...); c.New != 0 || c.Unchanged != n {
		t.Errorf("traversal 2 counts %+v, want %d unchanged", c, n)
	}
	if items, recent := sizes(t, db, bucketItems); items != n || recent != 0 {
		t.Errorf("%d records in the items bucket, %d recent; want %d, 0", items, recent, n)
	}
}
