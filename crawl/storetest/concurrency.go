package storetest

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/databrew/databrew-stage/crawl"
)

// readWhileCommitting reads and asks for seen URLs while another goroutine
// commits, as the engine does: each read sees whole batches, in order.
func readWhileCommitting(f *fixture) {
	const batches, perBatch = 40, 8
	f.begin(start(startURL))
	first := f.next
	errc := make(chan error, 1)
	go func() {
		next := first
		for i := range batches {
			b := &crawl.Batch{}
			for j := range perBatch {
				b.Enqueue = append(b.Enqueue, crawl.Queued{Seq: next, Entry: item(itemURL(i*perBatch + j))})
				next++
			}
			b.NextSeq = next
			if _, err := f.s.Commit(b); err != nil {
				errc <- fmt.Errorf("commit batch %d: %w", i, err)
				return
			}
		}
		errc <- nil
	}()
	last := 0
	for done := false; !done; {
		select {
		case err := <-errc:
			if err != nil {
				f.t.Fatal(err)
			}
			done = true
		default:
		}
		qs, err := f.s.Read(0, batches*perBatch+1)
		if err != nil {
			f.t.Fatalf("Read: %v", err)
		}
		n := len(qs) - 1 // the start first
		if n < last || n%perBatch != 0 || !slices.IsSortedFunc(qs, func(a, b crawl.Queued) int { return cmp.Compare(a.Seq, b.Seq) }) {
			f.t.Fatalf("Read during commits saw %d entries after %d: want whole batches of %d, in order", n, last, perBatch)
		}
		last = n
		if n > 0 && !f.seen(itemURL(n - 1))[0] {
			f.t.Fatalf("%s read from the queue but not seen", itemURL(n-1))
		}
	}
	if last != batches*perBatch {
		f.t.Fatalf("queue holds %d entries after the commits, want %d", last, batches*perBatch)
	}
}
