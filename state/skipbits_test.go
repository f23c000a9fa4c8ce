package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestSkipBitmapsAnswerAsMarks: ten traversals, each in transactions of
// its own, queue and skip pages at random over three chunks of a bitmap,
// as a commit does: a page the traversal already marked is not skipped
// again, a queued page's mark keeps the traversal that last skipped it.
// After every transaction, every page's mark, the marks bucket's entry
// with the bitmaps', is the one a mark per page would say (a model kept
// beside), and so are the pages skipped since a traversal and those
// queued after one; the bucket holds the bitmaps of two traversals at
// most, and a fold writes marks only for pages of the bitmap it folds
// that the newer one lacks.
func TestSkipBitmapsAnswerAsMarks(t *testing.T) {
	db := open(t, t.TempDir())
	const pages = 3 * skipChunkPages
	type mark struct{ traversal, skipped uint64 }
	model := make([]mark, pages)
	rng := rand.New(rand.NewPCG(7, 8))
	markOf := func(seen seenSet, p uint64) mark {
		tr, sk := decodeMark(seen.markGet.get(pageKey(p)))
		tr, sk = seen.withSkips(p, tr, sk)
		return mark{tr, sk}
	}
	check := func(tx *bolt.Tx, traversal uint64, when string) {
		t.Helper()
		seen := db.seenOf(tx)
		for p := uint64(1); p < pages; p++ {
			if got := markOf(seen, p); got != model[p] {
				t.Fatalf("%s: mark of page %d = %+v, want %+v", when, p, got, model[p])
			}
		}
		for _, since := range []uint64{traversal - 1, traversal} {
			got, err := seen.skippedSince(since)
			if err != nil {
				t.Fatal(err)
			}
			for p := uint64(1); p < pages; p++ {
				if got.has(p) != (model[p].skipped >= since && model[p].skipped != 0) {
					t.Fatalf("%s: skippedSince(%d) has page %d: %v; its mark is %+v", when, since, p, got.has(p), model[p])
				}
			}
		}
		last := traversal - 2
		got, err := seen.queuedAfter(last)
		if err != nil {
			t.Fatal(err)
		}
		for p := uint64(1); p < pages; p++ {
			if got.has(p) != (model[p].traversal > last) {
				t.Fatalf("%s: queuedAfter(%d) has page %d: %v; its mark is %+v", when, last, p, got.has(p), model[p])
			}
		}
		var traversals []uint64
		_ = tx.Bucket(bucketSkips).ForEach(func(k, _ []byte) error {
			tr, _, _ := decodeSkipKey(k)
			if !slices.Contains(traversals, tr) {
				traversals = append(traversals, tr)
			}
			return nil
		})
		if len(traversals) > 2 {
			t.Fatalf("%s: the skips bucket holds the bitmaps of traversals %v", when, traversals)
		}
	}
	for traversal := uint64(2); traversal <= 11; traversal++ {
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			seen := db.seenOf(tx)
			before := map[string]string{}
			_ = seen.marks.ForEach(func(k, v []byte) error {
				before[string(k)] = string(v)
				return nil
			})
			if err := seen.skips.fold(traversal, seen.marks); err != nil {
				return err
			}
			// Only pages of the bitmap folded (two traversals before)
			// that the one kept (the traversal before) lacks get a mark.
			written := 0
			err := seen.marks.ForEach(func(k, v []byte) error {
				if before[string(k)] == string(v) {
					return nil
				}
				written++
				if p := decodePage(k); model[p].skipped != traversal-2 {
					t.Errorf("traversal %d: the fold wrote the mark of page %d, whose last skip was in %d", traversal, p, model[p].skipped)
				}
				return nil
			})
			if traversal > 3 && written == 0 {
				t.Errorf("traversal %d: the fold wrote no mark", traversal)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for part := range 3 {
			err := db.bolt.Update(func(tx *bolt.Tx) error {
				seen := db.seenOf(tx)
				for _, p := range rng.Perm(pages)[:pages/3] {
					page := uint64(p)
					if page == 0 {
						continue
					}
					m := markOf(seen, page)
					if m.traversal == traversal {
						continue // marked already: as planSkips and commitPart
					}
					if rng.IntN(3) == 0 {
						// Queued: its mark names the traversal and keeps
						// the last skip.
						if err := seen.marks.Put(pageKey(page), encodeMark(traversal, m.skipped)); err != nil {
							return err
						}
						model[page] = mark{traversal, m.skipped}
						continue
					}
					seen.skip(page, traversal)
					model[page] = mark{traversal, traversal}
				}
				return seen.flushSkips()
			})
			if err != nil {
				t.Fatal(err)
			}
			err = db.bolt.View(func(tx *bolt.Tx) error {
				check(tx, traversal, fmt.Sprintf("traversal %d, part %d", traversal, part))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSkipBitmapBitsInTheWriteTransaction: pages skipped in a write
// transaction read as skipped in it before and after flush, through a
// second seen set of the transaction too, though they were read before
// they were skipped; a rolled back transaction leaves no bit.
func TestSkipBitmapBitsInTheWriteTransaction(t *testing.T) {
	db := open(t, t.TempDir())
	pages := []uint64{1, 4095, 4096, 9000}
	errRollback := fmt.Errorf("roll back")
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		seen := db.seenOf(tx)
		seen.skip(5, 3)
		if err := seen.flushSkips(); err != nil {
			return err
		}
		// Read first: what a lookup read is not what the transaction
		// holds once the pages are written.
		for _, p := range pages {
			if tr, sk := seen.withSkips(p, 1, 0); tr != 1 || sk != 0 {
				t.Errorf("page %d, not skipped yet, reads (%d, %d)", p, tr, sk)
			}
		}
		for _, p := range pages {
			seen.skip(p, 3)
		}
		for _, when := range []string{"before flush", "after flush"} {
			other := db.seenOf(tx)
			for _, p := range slices.Backward(pages) { // the last read first
				if tr, sk := other.withSkips(p, 1, 0); tr != 3 || sk != 3 {
					t.Errorf("%s: page %d reads (%d, %d), want (3, 3)", when, p, tr, sk)
				}
			}
			if tr, sk := other.withSkips(2, 1, 0); tr != 1 || sk != 0 {
				t.Errorf("%s: page 2, not skipped, reads (%d, %d)", when, tr, sk)
			}
			if err := seen.flushSkips(); err != nil {
				return err
			}
		}
		return errRollback
	})
	if err != errRollback {
		t.Fatal(err)
	}
	err = db.bolt.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(bucketSkips).Stats().KeyN; n != 0 {
			t.Errorf("the rolled back transaction left %d chunks", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
