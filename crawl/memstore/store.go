// Package memstore is a crawl.Store in memory, for the engine's own tests
// and for dry runs that must leave no state behind. It keeps what the
// engine needs — the queue, the seen set, the failed set and each item's
// content hash with the page that holds its key — and nothing else: no
// item versions, no removals, no export. It passes crawl/storetest.
package memstore

import (
	"slices"
	"strings"
	"sync"

	"github.com/databrew/databrew-stage/crawl"
)

// Store is an in-memory crawl.Store. Its methods are safe for concurrent
// use, and never fail.
type Store struct {
	mu        sync.Mutex
	traversal uint64
	nextSeq   uint64
	gaps      int
	queue     queue
	// seen holds the URLs the traversal queued.
	seen   map[string]struct{}
	failed map[string]crawl.Entry
	items  map[string]*item
	memos  map[string]*crawl.PageMemo
	// moves holds, per key, the first page of the traversal that yielded
	// it while another page held it, with its hash (see crawl.Store.Finish).
	moves map[string]move
}

var _ crawl.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{nextSeq: 1, queue: newQueue(), seen: map[string]struct{}{},
		failed: map[string]crawl.Entry{}, items: map[string]*item{}, memos: map[string]*crawl.PageMemo{}, moves: map[string]move{}}
}

// Begin starts a run: a new traversal when the queue is empty, which
// queues the starts; the URLs that failed in the previous run are queued
// again either way.
func (s *Store) Begin(starts []crawl.Entry) (crawl.Start, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := crawl.Start{NewTraversal: s.queue.len() == 0 || s.traversal == 0}
	if st.NewTraversal {
		s.traversal++
		s.gaps = 0
		clear(s.seen)
		clear(s.moves)
	}
	s.moveFailed()
	if st.NewTraversal {
		for _, e := range starts {
			s.enqueue(crawl.Queued{Seq: s.nextSeq, Entry: e})
		}
	}
	st.Traversal, st.NextSeq, st.Queued = s.traversal, s.nextSeq, s.queue.len()
	return st, nil
}

// enqueue queues an entry unless the traversal has its URL, keeping the
// next free number above it.
func (s *Store) enqueue(q crawl.Queued) {
	if _, ok := s.seen[q.URL]; ok {
		return
	}
	s.seen[q.URL] = struct{}{}
	s.queue.put(q)
	s.nextSeq = max(s.nextSeq, q.Seq+1)
}

// moveFailed queues the failed set from the next free number, in URL
// order, and empties it.
func (s *Store) moveFailed() int {
	urls := make([]string, 0, len(s.failed))
	for u := range s.failed {
		urls = append(urls, u)
	}
	slices.SortFunc(urls, strings.Compare)
	for _, u := range urls {
		s.seen[u] = struct{}{}
		s.queue.put(crawl.Queued{Seq: s.nextSeq, Entry: s.failed[u]})
		s.nextSeq++
	}
	clear(s.failed)
	return len(urls)
}

// Read returns up to limit queued entries with Seq > after, in order.
func (s *Store) Read(after uint64, limit int) ([]crawl.Queued, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queue.read(after, limit), nil
}

// Seen reports, for each URL, whether the traversal already has it.
func (s *Store) Seen(urls []string) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]bool, len(urls))
	for i, u := range urls {
		_, out[i] = s.seen[u]
	}
	return out, nil
}

// RequeueFailed moves the failed set back into the queue, numbering the
// entries from nextSeq or the next free number, whichever is higher.
func (s *Store) RequeueFailed(nextSeq uint64) (int, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextSeq = max(s.nextSeq, nextSeq)
	moved := s.moveFailed()
	return moved, s.nextSeq, nil
}

// Finish adds the run's coverage gaps to the traversal's and returns what
// is left; when the traversal is complete, it decides its moves.
func (s *Store) Finish(gaps int) (crawl.Finish, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gaps += max(gaps, 0)
	failed := len(s.failed)
	f := crawl.Finish{Queued: s.queue.len() + failed, Failed: failed, TraversalGaps: s.gaps}
	if s.queue.len() == 0 {
		f.Moves = s.settleMoves()
	}
	return f, nil
}

// Memo returns the memo of the page at url, nil when there is none.
func (s *Store) Memo(url string) (*crawl.PageMemo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.memos[url], nil
}

// Dues returns what the memos of the pages at urls say of when they are
// due; see crawl.Store.
func (s *Store) Dues(urls []string) ([]crawl.PageDue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]crawl.PageDue, len(urls))
	for i, u := range urls {
		if m := s.memos[u]; m != nil {
			out[i] = crawl.PageDue{Found: true, Tag: m.Tag, Card: m.Card, Due: m.Due, Items: len(m.Items)}
		}
	}
	return out, nil
}
