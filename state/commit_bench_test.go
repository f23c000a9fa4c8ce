package state

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
)

// BenchmarkCommitOneBigPage commits the batch of one listing page that
// links n new item pages into a new state file; ns/link must not grow
// with n.
func BenchmarkCommitOneBigPage(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("links=%d", n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				db, batch := bigPageBatch(b, n)
				b.StartTimer()
				if _, err := db.Commit(batch); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = db.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/link")
		})
	}
}

// bigPageBatch opens a new state whose traversal began at one listing page
// and returns the batch that finishes the page and queues its n links.
func bigPageBatch(b *testing.B, n int) (*DB, *crawl.Batch) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	list := crawl.Entry{URL: "http://h/list", Kind: crawl.KindListing, Start: true}
	st, err := db.Begin([]crawl.Entry{list})
	if err != nil {
		b.Fatal(err)
	}
	batch := &crawl.Batch{Done: []crawl.Done{{Seq: 1, Entry: list}}, NextSeq: st.NextSeq + uint64(n)}
	for i := range n {
		batch.Enqueue = append(batch.Enqueue, crawl.Queued{Seq: st.NextSeq + uint64(i),
			Entry: crawl.Entry{URL: fmt.Sprintf("http://h/item/%d.html", i), Kind: crawl.KindItem}})
	}
	return db, batch
}

// BenchmarkCommitSkips commits the skips of a rerun's first traversal
// after the first: n item pages, known to the state, skipped in batches
// of 2,000 in a shuffled order, as a revisit policy finds them not due.
// Each skip inserts the page's first mark; ns/skip must not grow with n.
func BenchmarkCommitSkips(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				db, batches := skipBatches(b, n, 2_000)
				b.StartTimer()
				for _, batch := range batches {
					if c, err := db.Commit(batch); err != nil || c.Skipped != len(batch.Skipped) {
						b.Fatalf("commit = %+v, %v; want %d skipped", c, err, len(batch.Skipped))
					}
				}
				b.StopTimer()
				_ = db.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/skip")
		})
	}
}

// skipBatches opens a new state whose first traversal read n item pages
// of one item each, found 20 to a listing page as a crawl finds them,
// begins a second traversal, and returns that traversal's batches of size
// skips each, in the order the listing pages link them but shuffled
// within each batch, as concurrent fetches finish.
func skipBatches(b *testing.B, n, size int) (*DB, []*crawl.Batch) {
	const perListing = 20
	db, first := bigPageBatch(b, n)
	links := first.Enqueue
	batch := &crawl.Batch{Done: first.Done, NextSeq: first.NextSeq}
	for start := 0; start <= n; start += perListing {
		batch.Enqueue = links[start:min(start+perListing, n)]
		if _, err := db.Commit(batch); err != nil {
			b.Fatal(err)
		}
		batch = &crawl.Batch{NextSeq: first.NextSeq}
		for i, q := range links[start:min(start+perListing, n)] {
			batch.Done = append(batch.Done, crawl.Done{Seq: q.Seq, Entry: q.Entry,
				Items: []crawl.ItemVersion{{Key: fmt.Sprintf("k%d", start+i), URL: q.URL, Hash: fmt.Sprintf("%032x", start+i)}}})
		}
	}
	if st, err := db.Begin(nil); err != nil || !st.NewTraversal {
		b.Fatalf("begin = %+v, %v; want a new traversal", st, err)
	}
	links = first.Enqueue
	rng := rand.New(rand.NewPCG(1, 2))
	var batches []*crawl.Batch
	for start := 0; start < n; start += size {
		batch := &crawl.Batch{}
		for _, i := range rng.Perm(min(size, n-start)) {
			q := links[start+i]
			batch.Skipped = append(batch.Skipped, crawl.Skip{URL: q.URL, Items: 1})
		}
		batches = append(batches, batch)
	}
	runtime.GC() // the setup's garbage, not the commits'
	return db, batches
}
