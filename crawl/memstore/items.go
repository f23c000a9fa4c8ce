package memstore

import "github.com/databrew/databrew-stage/crawl"

// item is what the store keeps of an item: its content hash, the page
// that holds its key and the last traversal that page yielded it in, and
// the last other page that yielded the key.
type item struct {
	hash, url   string
	traversal   uint64
	challenger  string
	chTraversal uint64
}

// put counts one item version as new, changed, unchanged or a duplicate,
// and stores it unless it is a duplicate.
func (s *Store) put(v *crawl.ItemVersion, counts *crawl.Committed) {
	it, ok := s.items[v.Key]
	switch {
	case !ok:
		counts.New++
		s.items[v.Key] = &item{hash: v.Hash, url: v.URL, traversal: s.traversal}
		return
	case !s.holds(it, v):
		counts.Duplicate(v.Key, it.url, v.URL)
		if v.URL != it.url {
			it.challenger, it.chTraversal = v.URL, s.traversal
			s.propose(it, v)
		}
		return
	case it.hash == v.Hash:
		counts.Unchanged++
	default:
		counts.Changed++
	}
	if it.url != v.URL {
		it.challenger, it.chTraversal = "", 0
	}
	it.hash, it.url, it.traversal = v.Hash, v.URL, s.traversal
}

// holds reports whether v's page may write the item: it holds the key and
// yields the item for the first time in the traversal, or with the values
// it first yielded; or it takes the key over, having yielded it in the
// previous traversal, which the holder missed.
func (s *Store) holds(it *item, v *crawl.ItemVersion) bool {
	switch {
	case it.url == v.URL:
		return it.traversal != s.traversal || it.hash == v.Hash
	case it.traversal == s.traversal:
		return false
	}
	return it.challenger == v.URL && it.chTraversal+1 == s.traversal && it.traversal+1 < s.traversal
}

// touch counts an item a page that answered 304 still holds unchanged
// and seen in the traversal, and reports whether it could: not when the
// key is not stored, or is held for another URL (a duplicate).
func (s *Store) touch(ref crawl.ItemRef, counts *crawl.Committed) bool {
	it, ok := s.items[ref.Key]
	switch {
	case !ok:
		return false
	case it.url != ref.URL:
		counts.Duplicate(ref.Key, it.url, ref.URL)
		return false
	}
	counts.Unchanged++
	it.traversal = s.traversal
	return true
}

// skip has an item a skipped page's memo lists seen in the traversal,
// when the page holds it.
func (s *Store) skip(ref crawl.ItemRef) {
	if it, ok := s.items[ref.Key]; ok && it.url == ref.URL {
		it.traversal = s.traversal
	}
}

// move is a page that yielded a key another page held, with its hash.
type move struct{ url, hash string }

// propose notes the first page of the traversal that yields a key whose
// holder the traversal did not queue (so far).
func (s *Store) propose(it *item, v *crawl.ItemVersion) {
	if _, linked := s.seen[it.url]; linked {
		return
	}
	if _, ok := s.moves[v.Key]; !ok {
		s.moves[v.Key] = move{url: v.URL, hash: v.Hash}
	}
}

// settleMoves moves each proposed key whose holder the completed
// traversal did not queue to the page that proposed it, and forgets the
// proposals.
func (s *Store) settleMoves() crawl.Committed {
	var counts crawl.Committed
	for key, m := range s.moves {
		it, ok := s.items[key]
		if !ok || it.url == m.url || it.traversal == s.traversal {
			continue // the holder yielded the key in the traversal
		}
		if _, linked := s.seen[it.url]; linked {
			continue
		}
		counts.Moved++
		if it.hash == m.hash {
			counts.Unchanged++
		} else {
			counts.Changed++
		}
		it.hash, it.url, it.traversal = m.hash, m.url, s.traversal
		it.challenger, it.chTraversal = "", 0
	}
	clear(s.moves)
	return counts
}
