package state

import (
	"fmt"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
)

// TestForgetURLsNoTraversalLinked: a URL, and its page memo, leave the
// state once ForgetAfterTraversals whole traversals did not link it; a URL
// linked meanwhile stays.
func TestForgetURLsNoTraversalLinked(t *testing.T) {
	db := open(t, t.TempDir())
	start := crawl.Entry{URL: "http://shop.test/", Kind: crawl.KindListing, Start: true}
	gone, kept := "http://shop.test/item/gone", "http://shop.test/item/kept"
	var next uint64
	traverse := func(links ...string) crawl.Start {
		t.Helper()
		st, err := db.Begin([]crawl.Entry{start})
		if err != nil {
			t.Fatal(err)
		}
		next = st.NextSeq
		b := &crawl.Batch{}
		for _, l := range links {
			b.Enqueue = append(b.Enqueue, crawl.Queued{Seq: next, Entry: crawl.Entry{URL: l, Kind: crawl.KindItem}})
			next++
		}
		b.NextSeq = next
		if _, err := db.Commit(b); err != nil {
			t.Fatal(err)
		}
		qs, err := db.Read(0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		done := &crawl.Batch{NextSeq: next}
		for _, q := range qs {
			done.Done = append(done.Done, crawl.Done{Seq: q.Seq, Entry: q.Entry, Memo: &crawl.PageMemo{ETag: `"` + q.URL + `"`}})
		}
		if _, err := db.Commit(done); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Finish(0); err != nil {
			t.Fatal(err)
		}
		return st
	}
	traverse(gone, kept) // traversal 1
	for i := 2; i <= ForgetAfterTraversals+1; i++ {
		if st := traverse(kept); st.Forgotten != 0 {
			t.Fatalf("traversal %d forgot %d URLs", i, st.Forgotten)
		}
	}
	if m, _ := db.Memo(gone); m == nil {
		t.Fatal("the memo went before its URL was forgotten")
	}
	st := traverse(kept)
	if st.Forgotten != 1 {
		t.Fatalf("traversal %d forgot %d URLs, want 1", st.Traversal, st.Forgotten)
	}
	if m, _ := db.Memo(gone); m != nil {
		t.Fatalf("the memo of a forgotten URL is still there: %+v", m)
	}
	if m, _ := db.Memo(kept); m == nil {
		t.Fatal("the memo of a URL linked every traversal is gone")
	}
	seen, err := db.Seen([]string{gone, kept})
	if err != nil || seen[0] || !seen[1] {
		t.Fatalf("seen = %v, %v", seen, err)
	}
}

// TestForgetManyURLsInBatches forgets more URLs than one transaction
// deletes.
func TestForgetManyURLsInBatches(t *testing.T) {
	// The URLs in the URL index, in its recent part, or half in each.
	for _, folded := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("folded%d", folded), func(t *testing.T) { testForgetMany(t, folded) })
	}
}

func testForgetMany(t *testing.T, folded int) {
	db := open(t, t.TempDir())
	st, err := db.Begin(nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 3*forgetBatch + 7
	for half := range 2 {
		b := &crawl.Batch{}
		for i := half * n / 2; i < (half+1)*n/2; i++ {
			b.Enqueue = append(b.Enqueue, crawl.Queued{Seq: st.NextSeq + uint64(i), Entry: crawl.Entry{URL: fmt.Sprintf("http://shop.test/%d", i), Kind: crawl.KindItem}})
		}
		b.NextSeq = st.NextSeq + uint64((half+1)*n)
		if _, err := db.Commit(b); err != nil {
			t.Fatal(err)
		}
		if half < folded {
			if err := db.fold(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if index, recent := sizes(t, db, bucketURLs); index+recent != n {
		t.Fatalf("%d URLs in the index and %d in its recent part, want %d", index, recent, n)
	}
	got, err := db.forget(st.Traversal + ForgetAfterTraversals + 1)
	if err != nil || got != n {
		t.Fatalf("forgot %d, %v; want %d", got, err, n)
	}
	if index, recent := sizes(t, db, bucketURLs); index+recent != 0 || db.recent.size() != 0 {
		t.Errorf("after forgetting: %d URLs in the index, %d recent, %d in the map", index, recent, db.recent.size())
	}
}
