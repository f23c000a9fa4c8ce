package memstore

import (
	"slices"

	"github.com/databrew/databrew-stage/crawl"
)

// queue holds entries by sequence number. The engine numbers entries in
// increasing order and finishes them roughly in that order, so seqs, the
// numbers in order, mostly grows at its end; a finished entry leaves
// entries at once and seqs later, when the numbers no longer queued
// outnumber those queued.
type queue struct {
	entries map[uint64]crawl.Entry
	seqs    []uint64
}

func newQueue() queue { return queue{entries: map[uint64]crawl.Entry{}} }

func (q *queue) len() int { return len(q.entries) }

// put queues e under its number, replacing an entry of the same number.
func (q *queue) put(e crawl.Queued) {
	if _, ok := q.entries[e.Seq]; !ok {
		if n := len(q.seqs); n == 0 || q.seqs[n-1] < e.Seq {
			q.seqs = append(q.seqs, e.Seq)
		} else if i, found := slices.BinarySearch(q.seqs, e.Seq); !found {
			q.seqs = slices.Insert(q.seqs, i, e.Seq)
		}
	}
	q.entries[e.Seq] = e.Entry
}

// remove takes the entry numbered seq out of the queue, if it is there.
func (q *queue) remove(seq uint64) {
	if _, ok := q.entries[seq]; !ok {
		return
	}
	delete(q.entries, seq)
	if len(q.seqs) > 2*len(q.entries)+64 {
		q.seqs = slices.DeleteFunc(q.seqs, func(s uint64) bool {
			_, ok := q.entries[s]
			return !ok
		})
	}
}

// read returns up to limit entries numbered above after, in order.
func (q *queue) read(after uint64, limit int) []crawl.Queued {
	out := make([]crawl.Queued, 0, min(max(limit, 0), q.len()))
	i, _ := slices.BinarySearch(q.seqs, after+1)
	for ; i < len(q.seqs) && len(out) < limit; i++ {
		if e, ok := q.entries[q.seqs[i]]; ok {
			out = append(out, crawl.Queued{Seq: q.seqs[i], Entry: e})
		}
	}
	return out
}
