package crawl

import "time"

const (
	frontierCap   = 1024 // entries held in memory ahead of dispatch
	readChunk     = 256  // entries read from the store at once
	batchOps      = 512  // a batch is sent to the writer at this size
	batchMaxOps   = 4096 // and the run waits for the writer beyond it
	lightPerOp    = 4    // light entries weigh this much less (see ops)
	flushInterval = 200 * time.Millisecond
)

// schedule is the run's queue as its loop sees it: the frontier, read
// ahead from the store in order and fed with newly found links before they
// are committed; the sequence numbers it gives out; and the batch of
// finished work on its way to the store through the writer, one batch in
// flight at a time.
type schedule struct {
	store Store
	w     *writer

	front   *frontier
	claimed map[uint64]struct{} // entries dispatched from memory, not yet committed as done
	pending map[string]struct{} // URLs in uncommitted batches' Enqueue
	cursor  uint64              // highest seq read from the store
	dry     bool                // the store had nothing beyond cursor at the last read
	unread  int                 // enqueued entries not in the frontier since the last send
	nextSeq uint64
	batch   *Batch
	light   int       // the batch's light entries (see ops)
	since   time.Time // when the current batch got its first op
}

func newSchedule(store Store, nextSeq uint64) *schedule {
	return &schedule{store: store, front: newFrontier(frontierCap), claimed: map[uint64]struct{}{},
		pending: map[string]struct{}{}, nextSeq: nextSeq, batch: &Batch{}}
}

// start starts the writer; close stops it once it is idle.
func (s *schedule) start() { s.w = newWriter(s.store) }
func (s *schedule) close() { s.w.close() }

// queued is how many entries wait in memory.
func (s *schedule) queued() int { return s.front.len() }

// refill reads the next entries from the store into the frontier when it
// is empty, and reports whether the frontier holds any.
func (s *schedule) refill() (bool, error) {
	for s.front.len() == 0 && !s.dry {
		qs, err := s.store.Read(s.cursor, readChunk)
		if err != nil {
			return false, err
		}
		if len(qs) == 0 {
			s.dry = true
			break
		}
		for _, q := range qs {
			s.cursor = q.Seq
			if _, mine := s.claimed[q.Seq]; !mine {
				s.front.pushBack(q, true)
			}
		}
	}
	return s.front.len() > 0, nil
}

// next takes the first entry of the frontier.
func (s *schedule) next() (Queued, bool) { return s.front.popFront() }

// putBack puts an entry that was not finished first in line.
func (s *schedule) putBack(q Queued) { s.front.pushFront(q) }

// enqueue gives new links sequence numbers and adds them to the batch,
// with the item pages a revisit policy skips (the store drops those the
// traversal has seen); pages that lead to others (listings, sitemaps) go to the front of the
// frontier so discovery runs ahead, item pages to the back while there is
// room; while the run stops they only wait in the store.
func (s *schedule) enqueue(links []Entry, skips []Skip, stopping bool) error {
	// A skip goes to the batch unless a batch not yet committed has its
	// URL: the store marks it seen only when the traversal has not seen it
	// (see Batch.Skipped), so asking the store here would read its mark
	// twice.
	for _, sk := range skips {
		if _, dup := s.pending[sk.URL]; dup {
			continue
		}
		s.pending[sk.URL] = struct{}{}
		s.addOp()
		s.light++
		s.batch.Skipped = append(s.batch.Skipped, sk)
	}
	fresh := make([]Entry, 0, len(links))
	urls := make([]string, 0, len(links))
	for _, l := range links {
		if _, dup := s.pending[l.URL]; dup {
			continue
		}
		s.pending[l.URL] = struct{}{}
		fresh = append(fresh, l)
		urls = append(urls, l.URL)
	}
	if len(urls) == 0 {
		return nil
	}
	seen, never, err := s.seen(urls)
	if err != nil {
		for _, u := range urls {
			delete(s.pending, u)
		}
		return err
	}
	for i, l := range fresh {
		if seen[i] {
			delete(s.pending, l.URL)
			continue
		}
		q := Queued{Seq: s.nextSeq, Entry: l, fresh: never != nil && never[i]}
		s.nextSeq++
		s.addOp()
		s.light++
		s.batch.Enqueue = append(s.batch.Enqueue, q)
		switch {
		case stopping:
			s.unread++
		case l.Kind != KindItem:
			s.front.pushFront(q)
			s.claimed[q.Seq] = struct{}{}
		case s.front.pushBack(q, false):
			s.claimed[q.Seq] = struct{}{}
		default:
			s.unread++
		}
	}
	return nil
}

// seen asks the store which of urls the traversal has, and which it never
// held, when it can tell (fresh is nil when it cannot).
func (s *schedule) seen(urls []string) (seen, fresh []bool, err error) {
	if ft, ok := s.store.(FreshTeller); ok {
		return ft.SeenFresh(urls)
	}
	seen, err = s.store.Seen(urls)
	return seen, nil, err
}

// finish adds a finished URL to the batch.
func (s *schedule) finish(d Done) {
	s.addOp()
	if len(d.Items) == 0 && len(d.Touched) == 0 {
		s.light++
	}
	s.batch.Done = append(s.batch.Done, d)
}

// retry puts URLs that failed in an outage back first in line, in order,
// under new sequence numbers: the batch moves them from the failed set back
// to the queue.
func (s *schedule) retry(qs []Queued) {
	for i := len(qs) - 1; i >= 0; i-- {
		q := Queued{Seq: s.nextSeq, Entry: qs[i].Entry}
		s.nextSeq++
		s.addOp()
		s.batch.Retry = append(s.batch.Retry, q)
		s.front.pushFront(q)
		s.claimed[q.Seq] = struct{}{}
	}
}

func (s *schedule) addOp() {
	if s.batch.Empty() {
		s.since = time.Now()
	}
}

// ops is the batch's size as the writer feels it. New URLs, skipped pages
// and finished pages without items (a listing that answered 304, say) are
// light: the store writes a mark or two for each, about a quarter of what
// a page of items costs it. They weigh 1/lightPerOp, so a listing's
// links, or a rerun that skips most pages, go to the store in large
// batches, whose marks, sorted by key, share the store's pages; and a
// rerun's skips go as it runs, leaving few to commit once it ends.
func (s *schedule) ops() int {
	return len(s.batch.Done) + len(s.batch.Enqueue) + len(s.batch.Skipped) - s.light + s.light/lightPerOp
}

// overdue reports whether the batch grew past batchMaxOps, or past
// 4 x batchMaxOps entries however light, while the writer is busy: the run
// must wait for the writer before it goes on.
func (s *schedule) overdue() bool {
	entries := len(s.batch.Done) + len(s.batch.Enqueue) + len(s.batch.Skipped) + len(s.batch.Retry)
	return s.w.busy && (s.ops() >= batchMaxOps || entries >= 4*batchMaxOps)
}

// due reports whether the batch should go to the writer now: the writer is
// idle and the batch is big, or the frontier ran dry while entries wait in
// the batch.
func (s *schedule) due() bool {
	return !s.w.busy && !s.batch.Empty() && (s.ops() >= batchOps || s.front.len() == 0 && s.unread > 0)
}

// stale reports whether the batch has waited flushInterval for an idle
// writer.
func (s *schedule) stale() bool {
	return !s.w.busy && !s.batch.Empty() && time.Since(s.since) >= flushInterval
}

// send hands the batch to the idle writer.
func (s *schedule) send() {
	if s.w.busy || s.batch.Empty() {
		return
	}
	s.batch.NextSeq = s.nextSeq
	s.w.send(s.batch)
	s.batch = &Batch{}
	s.light = 0
	s.unread = 0
}

// flushing reports whether work waits to be committed: a batch in flight
// or one not sent.
func (s *schedule) flushing() bool { return s.w.busy || !s.batch.Empty() }

// settle takes the writer's result: the batch's finished entries and new
// URLs are in the store now. It returns the batch's item counts.
func (s *schedule) settle(res committed) (Committed, error) {
	s.w.busy = false
	if res.err != nil {
		return Committed{}, res.err
	}
	for _, d := range res.batch.Done {
		delete(s.claimed, d.Seq)
	}
	for _, q := range res.batch.Enqueue {
		delete(s.pending, q.URL)
	}
	for _, sk := range res.batch.Skipped {
		delete(s.pending, sk.URL)
	}
	s.dry = false
	return res.counts, nil
}

// requeueFailed moves the store's failed set back into the queue for the
// retry pass and reports whether it moved any.
func (s *schedule) requeueFailed() (bool, error) {
	moved, next, err := s.store.RequeueFailed(s.nextSeq)
	if err != nil {
		return false, err
	}
	s.nextSeq, s.dry = next, false
	return moved > 0, nil
}
