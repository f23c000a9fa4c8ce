package state

import (
	"fmt"
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
