package state

import (
	"errors"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
)

// store commits one finished URL per item version.
func store(t *testing.T, db *DB, versions ...crawl.ItemVersion) crawl.Committed {
	t.Helper()
	b := &crawl.Batch{}
	for i, v := range versions {
		b.Done = append(b.Done, crawl.Done{Seq: uint64(1000 + i), Entry: entry(v.URL, crawl.KindItem), Items: []crawl.ItemVersion{v}})
	}
	c, err := db.Commit(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pendingChanges(t *testing.T, db *DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := db.ForEachPending(^uint64(0), func(v Version) error { out[v.Key] = v.Change; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPublishTakesWhatWasPendingAndNothingLater(t *testing.T) {
	db := open(t, t.TempDir())
	db.Begin(nil)
	store(t, db, version("a", hash(1)), version("b", hash(1)))
	p, err := db.PendingSummary()
	if err != nil || p.Count != 2 {
		t.Fatalf("pending = %+v, %v", p, err)
	}
	if err := db.BeginPublish(Publication{RunID: "r1", MaxSeq: p.MaxSeq}); err != nil {
		t.Fatal(err)
	}
	// A version stored after the publish began (in the next traversal, as
	// a shard's retry does while its earlier attempt waits for the commit)
	// is added beside the staged one, as a change: the publish may still
	// make the staged one visible.
	db.Begin(nil)
	store(t, db, version("b", hash(2)))
	if got, _ := db.Publishing(); len(got) != 1 || got[0].RunID != "r1" {
		t.Fatalf("publishing = %+v", got)
	}
	if p, _ := db.PendingSummary(); p.Count != 3 {
		t.Fatalf("pending = %+v, want a, b and b's newer version", p)
	}
	n, err := db.CommitPublish("r1")
	if err != nil || n != 2 {
		t.Fatalf("commit removed %d, %v; want a and b's staged version", n, err)
	}
	if got := pendingChanges(t, db); len(got) != 1 || got["b"] != ChangeChanged {
		t.Fatalf("pending after commit = %v, want b as changed (its staged version was published)", got)
	}
	if ok, _ := db.IsPublished("r1"); !ok {
		t.Fatal("r1 must be recorded as published")
	}
	if _, err := db.CommitPublish("r1"); !errors.Is(err, ErrNoPublication) {
		t.Fatalf("committing twice = %v", err)
	}
	// a was published: its next change is "changed", as b's is.
	store(t, db, version("a", hash(3)))
	if got := pendingChanges(t, db); got["a"] != ChangeChanged || got["b"] != ChangeChanged {
		t.Fatalf("changes = %v", got)
	}
}

func TestAbortedPublishLeavesEverythingPending(t *testing.T) {
	db := open(t, t.TempDir())
	db.Begin(nil)
	store(t, db, version("a", hash(1)))
	p, _ := db.PendingSummary()
	db.BeginPublish(Publication{RunID: "r1", MaxSeq: p.MaxSeq})
	if err := db.AbortPublish("r1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Publishing(); len(got) != 0 {
		t.Fatalf("publishing = %+v", got)
	}
	if got := pendingChanges(t, db); got["a"] != ChangeNew {
		t.Fatalf("pending = %v", got)
	}
}

func TestTombstonesAfterACleanTraversal(t *testing.T) {
	db := open(t, t.TempDir())
	st, _ := db.Begin(nil)
	store(t, db, version("kept", hash(1)), version("gone", hash(1)), version("never-published", hash(1)))
	p, _ := db.PendingSummary()
	db.BeginPublish(Publication{RunID: "r1", MaxSeq: p.MaxSeq - 1}) // "never-published" was stored last
	db.CommitPublish("r1")
	// Traversal 2 sees only "kept".
	db.Finish(0)
	st2, _ := db.Begin(nil)
	if st2.Traversal != st.Traversal+1 {
		t.Fatalf("traversal = %d", st2.Traversal)
	}
	store(t, db, version("kept", hash(1)))
	n, err := db.MarkRemoved(st2.Traversal, "r2", time.Unix(100, 0))
	if err != nil || n != 1 {
		t.Fatalf("removed %d, %v; want 1 (gone)", n, err)
	}
	got := pendingChanges(t, db)
	if len(got) != 1 || got["gone"] != ChangeRemoved {
		t.Fatalf("pending = %v: a published item gets one removed row, an unpublished one none", got)
	}
	// Once removed, it is not removed again.
	if n, _ := db.MarkRemoved(st2.Traversal, "r2", time.Unix(100, 0)); n != 0 {
		t.Fatalf("removed again: %d", n)
	}
	// Back unchanged before the removal was published: readers still hold
	// these values, so nothing is exported at all.
	if c := store(t, db, version("gone", hash(1))); c.Unchanged != 1 {
		t.Fatalf("an item back unchanged before its removal went out is unchanged: %+v", c)
	}
	if got := pendingChanges(t, db); len(got) != 0 {
		t.Fatalf("pending = %v, want nothing", got)
	}
	if p, _ := db.PendingSummary(); p.Count != 0 {
		t.Fatalf("pending count = %d", p.Count)
	}
	// Removed again, the removal published, then back: that is a change.
	db.Finish(0)
	st3, _ := db.Begin(nil)
	store(t, db, version("kept", hash(1)))
	if n, _ := db.MarkRemoved(st3.Traversal, "r3", time.Unix(200, 0)); n != 1 {
		t.Fatalf("removed %d, want gone again", n)
	}
	p, _ = db.PendingSummary()
	db.BeginPublish(Publication{RunID: "r3", MaxSeq: p.MaxSeq})
	db.CommitPublish("r3")
	if c := store(t, db, version("gone", hash(1))); c.Changed != 1 {
		t.Fatalf("an item back after its removal went out is a change: %+v", c)
	}
	if got := pendingChanges(t, db); got["gone"] != ChangeChanged {
		t.Fatalf("pending = %v", got)
	}
}

func TestTraversalGapsAccumulateUntilANewTraversal(t *testing.T) {
	db := open(t, t.TempDir())
	db.Begin([]crawl.Entry{{URL: "http://h/", Kind: crawl.KindListing, Start: true}})
	if f, _ := db.Finish(2); f.TraversalGaps != 2 {
		t.Fatalf("gaps = %d", f.TraversalGaps)
	}
	db.Begin(nil) // the start URL is still queued: same traversal
	if f, _ := db.Finish(1); f.TraversalGaps != 3 {
		t.Fatalf("gaps = %d", f.TraversalGaps)
	}
	db.Commit(&crawl.Batch{Done: []crawl.Done{{Seq: 1, Entry: entry("http://h/", crawl.KindListing)}}})
	db.Begin(nil) // queue empty: new traversal
	if f, _ := db.Finish(0); f.TraversalGaps != 0 {
		t.Fatalf("gaps after a new traversal = %d", f.TraversalGaps)
	}
}

// A publish into object storage records its intent, then the same record
// with its manifest: one publication, ready only with the manifest, and
// the record survives reopening the file.
func TestAnIntentBecomesReadyWithItsManifest(t *testing.T) {
	dir := t.TempDir()
	db := open(t, dir)
	db.Begin(nil)
	store(t, db, version("a", hash(1)))
	p, _ := db.PendingSummary()
	intent := Publication{RunID: "r1", MaxSeq: p.MaxSeq, Target: "s3://lake/books", Dir: "books/dt=2026-11-30/run=r1/"}
	if err := db.BeginPublish(intent); err != nil {
		t.Fatal(err)
	}
	got, _ := db.Publishing()
	if len(got) != 1 || got[0].HasManifest() || got[0].Target != intent.Target {
		t.Fatalf("after the intent: %+v; want one publication without a manifest", got)
	}
	ready := intent
	ready.Manifest, ready.Verdict = []byte(`{"files":[]}`), []byte(`{"stop":"queue_empty"}`)
	if err := db.BeginPublish(ready); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = open(t, dir)
	got, _ = db.Publishing()
	if len(got) != 1 || !got[0].HasManifest() || string(got[0].Verdict) != `{"stop":"queue_empty"}` {
		t.Fatalf("after ready and reopening: %+v; want one publication with its manifest and verdict", got)
	}
}

// An item whose page a revisit policy skipped in a clean traversal is
// there: no tombstone, although its record was not written in it; the
// traversal after, which neither fetches nor skips it, removes it.
func TestTombstonesSpareItemsOfSkippedPages(t *testing.T) {
	db := open(t, t.TempDir())
	db.Begin(nil)
	kept, skipped, gone := version("kept", hash(1)), version("skipped", hash(1)), version("gone", hash(1))
	store(t, db, kept, gone)
	// The skipped item's page leaves a memo that lists it, as a read page
	// does: a skip stands for what the memo lists.
	memo := &crawl.PageMemo{ETag: `"e"`, Items: []crawl.ItemRef{{Key: "skipped", URL: skipped.URL}}}
	if _, err := db.Commit(&crawl.Batch{Done: []crawl.Done{{Seq: 2000, Entry: entry(skipped.URL, crawl.KindItem),
		Items: []crawl.ItemVersion{skipped}, Memo: memo}}}); err != nil {
		t.Fatal(err)
	}
	db.Finish(0)
	st2, _ := db.Begin(nil)
	store(t, db, kept)
	c, err := db.Commit(&crawl.Batch{Skipped: []crawl.Skip{{URL: skipped.URL, Items: 1}}})
	if err != nil || c.Skipped != 1 {
		t.Fatalf("skip committed %+v, %v", c, err)
	}
	if n, err := db.MarkRemoved(st2.Traversal, "r2", time.Unix(100, 0)); err != nil || n != 0 {
		t.Fatalf("removed %d, %v; nothing was published yet", n, err)
	}
	if got := pendingChanges(t, db); len(got) != 2 || got["kept"] != ChangeNew || got["skipped"] != ChangeNew {
		t.Fatalf("pending = %v, want kept and skipped as new, gone dropped", got)
	}
	db.Finish(0)
	st3, _ := db.Begin(nil)
	store(t, db, kept)
	if _, err := db.MarkRemoved(st3.Traversal, "r3", time.Unix(200, 0)); err != nil {
		t.Fatal(err)
	}
	if got := pendingChanges(t, db); len(got) != 1 || got["kept"] != ChangeNew {
		t.Fatalf("pending = %v, want only kept: skipped was neither fetched nor skipped in traversal 3", got)
	}
}

// An item whose version is staged by a publish in flight, removed and then
// back unchanged while that publish waits: whichever way the publish goes,
// its values reach readers once, and nothing more is exported for the
// return (a shard's attempt left staged, a retry that saw the item go, a
// later run that sees it back).
func TestAStagedItemRemovedAndBackIsPublishedOnce(t *testing.T) {
	for _, publish := range []bool{true, false} {
		db := open(t, t.TempDir())
		db.Begin(nil)
		store(t, db, version("x", hash(1)), version("y", hash(1)))
		p, _ := db.PendingSummary()
		if err := db.BeginPublish(Publication{RunID: "a", MaxSeq: p.MaxSeq}); err != nil {
			t.Fatal(err)
		}
		// A retry's traversal sees only y: x is removed beside its staged
		// version.
		db.Finish(0)
		st, _ := db.Begin(nil)
		store(t, db, version("y", hash(1)))
		if _, err := db.MarkRemoved(st.Traversal, "b", time.Unix(100, 0)); err != nil {
			t.Fatal(err)
		}
		if publish {
			if _, err := db.CommitPublish("a"); err != nil {
				t.Fatal(err)
			}
		} else if err := db.AbortPublish("a"); err != nil {
			t.Fatal(err)
		}
		// x is back, unchanged.
		db.Finish(0)
		db.Begin(nil)
		store(t, db, version("x", hash(1)), version("y", hash(1)))
		rows := map[string][]string{}
		if err := db.ForEachPending(^uint64(0), func(v Version) error {
			rows[v.Key] = append(rows[v.Key], v.Change)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := 0 // published: readers hold x's values; nothing more
		if !publish {
			want = 1 // x's staged version goes out with the next publish
		}
		if len(rows["x"]) != want || (want == 1 && rows["x"][0] != ChangeNew) {
			t.Fatalf("publish %v: x's pending rows %v, want %d", publish, rows["x"], want)
		}
	}
}
