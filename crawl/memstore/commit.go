package memstore

import "github.com/databrew/databrew-stage/crawl"

// Commit applies a batch in order: new URLs join the queue and the seen
// set, then finished URLs leave the queue (failed ones for the failed set),
// their memos are replaced or removed and their items (and those a 304
// touched) are counted, then URLs that failed during an outage go
// back from the failed set to the queue.
func (s *Store) Commit(b *crawl.Batch) (crawl.Committed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextSeq = max(s.nextSeq, b.NextSeq)
	for _, q := range b.Enqueue {
		s.enqueue(q)
	}
	var counts crawl.Committed
	for _, sk := range b.Skipped {
		if _, seen := s.seen[sk.URL]; seen {
			continue
		}
		s.seen[sk.URL] = struct{}{}
		counts.Skipped += sk.Items
		if m := s.memos[sk.URL]; m != nil {
			for _, ref := range m.Items {
				s.skip(ref)
			}
		}
	}
	for i := range b.Done {
		d := &b.Done[i]
		s.queue.remove(d.Seq)
		if d.Failed {
			s.failed[d.URL] = d.Entry
		} else {
			delete(s.failed, d.URL)
		}
		duplicates := counts.DuplicateKeys
		for j := range d.Items {
			s.put(&d.Items[j], &counts)
		}
		stands := true
		for _, ref := range d.Touched {
			stands = s.touch(ref, &counts) && stands
		}
		switch {
		case d.Failed:
		case !stands || counts.DuplicateKeys > duplicates || d.ForgetMemo:
			// A page with a duplicate key keeps no memo: a 304 could not
			// tell a duplicate from a takeover.
			delete(s.memos, d.URL)
		case d.Memo != nil:
			s.memos[d.URL] = d.Memo
		}
	}
	for _, q := range b.Retry {
		delete(s.failed, q.URL)
		s.queue.put(q)
		s.nextSeq = max(s.nextSeq, q.Seq+1)
	}
	return counts, nil
}
