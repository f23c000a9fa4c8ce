package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// TestSkipsAreMarkedOnceInPageOrder: a batch skips pages in a shuffled
// order, some twice, one the state did not hold, under a budget that
// ends a transaction after every write. Each page is marked skipped by
// the traversal and its items counted once; skipped again, nothing is
// counted. The marks are written by page number, whatever order the
// batch lists them in.
func TestSkipsAreMarkedOnceInPageOrder(t *testing.T) {
	db, err := Open(t.TempDir(), Options{WriteBudget: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	page := func(i int) string { return fmt.Sprintf("http://h/item/%d.html", i) }
	const pages = 40
	traversal(t, db)
	for start := 0; start < pages; start += 5 { // five links a listing page
		b := &crawl.Batch{}
		for i := start; i < start+5; i++ {
			q := crawl.Queued{Seq: uint64(100 + i), Entry: entry(page(i), crawl.KindItem)}
			b.Enqueue = append(b.Enqueue, q)
			b.Done = append(b.Done, crawl.Done{Seq: q.Seq, Entry: q.Entry, Items: []crawl.ItemVersion{at(page(i), fmt.Sprint("k", i), i)}})
		}
		if _, err := db.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	tr := traversal(t, db)
	skip := func(i int) crawl.Skip {
		return crawl.Skip{URL: page(i), Items: 1}
	}
	b := &crawl.Batch{}
	for _, i := range rand.New(rand.NewPCG(3, 4)).Perm(pages) {
		b.Skipped = append(b.Skipped, skip(i))
		if i%10 == 0 {
			b.Skipped = append(b.Skipped, skip(i))
		}
	}
	b.Skipped = append(b.Skipped, skip(pages)) // a page the state does not hold
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		c := &batchCursor{Batch: b}
		c.planSkips(db.seenOf(tx), tr)
		var last uint64
		for n, s := range c.marks {
			if n == len(c.marks)-1 && s.mark.page != 0 {
				t.Errorf("the page the state does not hold is not planned last: %+v", s)
			} else if n < len(c.marks)-1 && s.mark.page <= last {
				t.Errorf("mark %d of the plan is for page %d, after page %d", n, s.mark.page, last)
			}
			last = s.mark.page
		}
		if len(c.marks) != pages+1 {
			t.Errorf("%d marks planned, want %d", len(c.marks), pages+1)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.Commit(b)
	if err != nil || c.Skipped != pages+1 {
		t.Fatalf("commit = %+v, %v; want %d items skipped", c, err, pages+1)
	}
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		seen := db.seenOf(tx)
		for i := 0; i <= pages; i++ {
			m, ok := seen.get(seenKey(page(i)))
			if !ok || m.traversal != tr || m.skipped != tr {
				t.Errorf("mark of page %d = %+v, %v; want traversal and skip %d", i, m, ok, tr)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := db.Commit(b); err != nil || c.Skipped != 0 {
		t.Fatalf("second commit = %+v, %v; want nothing skipped again", c, err)
	}
}

// TestSortedByPage: marks are sorted by page number, the same page's by
// their place in the batch, whether their numbers pack into one integer
// with their places or not (a page number over 2^40).
func TestSortedByPage(t *testing.T) {
	for _, base := range []uint64{1, 1 << 41} {
		rng := rand.New(rand.NewPCG(5, 6))
		var marks []skipMark
		for i := range 500 {
			marks = append(marks, skipMark{skip: i, mark: seenMark{page: base + uint64(rng.IntN(200))}})
		}
		sorted := sortedByPage(slices.Clone(marks), func(s *skipMark) uint64 { return s.mark.page })
		if len(sorted) != len(marks) {
			t.Fatalf("base %d: %d marks sorted, want %d", base, len(sorted), len(marks))
		}
		for i := 1; i < len(sorted); i++ {
			a, b := sorted[i-1], sorted[i]
			if a.mark.page > b.mark.page || a.mark.page == b.mark.page && a.skip >= b.skip {
				t.Fatalf("base %d: mark %d (page %d, place %d) after mark %d (page %d, place %d)", base, i, b.mark.page, b.skip, i-1, a.mark.page, a.skip)
			}
		}
		for _, s := range sorted {
			if marks[s.skip].mark != s.mark {
				t.Fatalf("base %d: mark %+v is not the batch's mark at its place", base, s)
			}
		}
	}
}
