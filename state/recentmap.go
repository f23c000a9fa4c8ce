package state

import (
	"encoding/binary"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// A recent part (the URL index's, recent.go, and the item records',
// recentitems.go) is a bucket that new entries are appended to, keyed by
// a number that grows, beside a map in memory from an entry's own key to
// that number; once the map holds foldAt entries, a fold writes them to
// a run keyed by their own keys (see runs.go), in key order, and then
// drops them from the recent part. This file holds what the two share:
// the map, a write transaction's changes to it, and the fold's two steps.

// recentMap is a recent part's map from an entry's key to what finds it in
// the bucket.
type recentMap[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
	// foldAt is the size that starts a fold; tests set it lower.
	foldAt int
	// changes counts the write transactions that rewrote or removed an
	// entry of the recent part, as they commit (one whose commit failed
	// counts too): a fold that finds the count it began with may empty the
	// bucket at once (see emptyIfFolded).
	changes uint64
}

func newRecentMap[K comparable, V any](foldAt int) *recentMap[K, V] {
	return &recentMap[K, V]{m: map[K]V{}, foldAt: foldAt}
}

// load replaces the map's entries with those each calls put with, from
// bucket: the map is made for as many entries as the bucket's keys span,
// so that it is not grown (and rehashed) entry by entry as it loads.
func (r *recentMap[K, V]) load(bucket *bolt.Bucket, each func(put func(K, V))) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m = make(map[K]V, keySpan(bucket, 2*r.foldAt))
	each(func(k K, v V) { r.m[k] = v })
}

// keySpan is how many numbers the keys of b span, from its first to its
// last (its keys are numbers, in 8 bytes): how many entries it holds at
// most, as its numbers are not reused. It is at most limit, and 0 for an
// empty bucket or keys of another length.
func keySpan(b *bolt.Bucket, limit int) int {
	c := b.Cursor()
	first, _ := c.First()
	last, _ := c.Last()
	if len(first) != 8 || len(last) != 8 {
		return 0
	}
	lo, hi := binary.BigEndian.Uint64(first), binary.BigEndian.Uint64(last)
	if hi < lo {
		return 0
	}
	return int(min(hi-lo+1, uint64(max(limit, 0))))
}

// size is how many entries the map holds.
func (r *recentMap[K, V]) size() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.m)
}

// changeCount returns the map's count of changes (see recentMap.changes).
func (r *recentMap[K, V]) changeCount() uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.changes
}

// full reports whether the map holds foldAt entries.
func (r *recentMap[K, V]) full() bool { return r.size() >= r.foldAt }

// sorted returns the map's keys in the order cmp gives, and the highest
// number seq finds among its values: what a fold begins with.
func (r *recentMap[K, V]) sorted(cmp func(a, b K) int, seq func(V) uint64) (keys []K, last uint64) {
	r.mu.RLock()
	keys = make([]K, 0, len(r.m))
	for k, v := range r.m {
		keys = append(keys, k)
		last = max(last, seq(v))
	}
	r.mu.RUnlock()
	slices.SortFunc(keys, cmp)
	return keys, last
}

// recentChanges is what one write transaction changed of a recentMap; for
// a read transaction it is empty and reads the map alone. A write
// transaction's additions reach the map just before it commits (prepare),
// its removals just after (settle), both under the writer's lock (see
// boltDB.update), so the next write transaction sees them.
type recentChanges[K comparable, V any] struct {
	shared  *recentMap[K, V]
	added   map[K]V
	removed map[K]struct{}
	// rewrote says the transaction rewrote an entry where it is.
	rewrote bool
}

func newRecentChanges[K comparable, V any](shared *recentMap[K, V], writable bool) recentChanges[K, V] {
	c := recentChanges[K, V]{shared: shared}
	if writable {
		c.added, c.removed = map[K]V{}, map[K]struct{}{}
	}
	return c
}

// get returns the value of k as the transaction sees it.
func (c *recentChanges[K, V]) get(k K) (V, bool) {
	if len(c.added) > 0 || len(c.removed) > 0 {
		if v, ok := c.added[k]; ok {
			return v, true
		}
		if _, ok := c.removed[k]; ok {
			var zero V
			return zero, false
		}
	}
	v, ok := c.shared.m[k]
	return v, ok
}

// add records that the transaction added k.
func (c *recentChanges[K, V]) add(k K, v V) {
	c.added[k] = v
	delete(c.removed, k)
}

// drop records that the transaction removed k.
func (c *recentChanges[K, V]) drop(k K) {
	delete(c.added, k)
	c.removed[k] = struct{}{}
}

// prepare makes the transaction's additions the map's, just before it
// commits: a reader that finds what the transaction wrote finds them too
// (a reader may so find an entry an instant before its transaction
// commits: early, never late).
func (c *recentChanges[K, V]) prepare() {
	if len(c.added) == 0 && len(c.removed) == 0 && !c.rewrote {
		return
	}
	c.shared.mu.Lock()
	defer c.shared.mu.Unlock()
	if len(c.removed) > 0 || c.rewrote {
		c.shared.changes++
	}
	for k, v := range c.added {
		c.shared.m[k] = v
	}
}

// settle takes the transaction's removals out of the map once it
// committed, or its additions once its commit failed.
func (c *recentChanges[K, V]) settle(err error) {
	if len(c.added) == 0 && len(c.removed) == 0 {
		return
	}
	c.shared.mu.Lock()
	defer c.shared.mu.Unlock()
	if err != nil {
		for k := range c.added {
			delete(c.shared.m, k)
		}
		return
	}
	for k := range c.removed {
		delete(c.shared.m, k)
	}
}

// foldInParts runs a fold's two steps into the run of s a fold writes to
// (see foldTarget), each in transactions within the write budget: write(tx,
// out, f, i) for i from 0 to n-1, which writes the i-th key in order to
// the run's bucket out, adding it to the run's filter f, and returns its
// appendCost; then, in one
// transaction, empty(tx), which empties the recent part at once when it
// holds nothing but what the fold wrote (see emptyIfFolded), or else
// drop(tx, out) until it reports done, each call dropping the first entry
// of the recent part. The transaction that ends the fold seals the run. A
// crash between two transactions leaves entries in both places, with the
// same values; the next fold writes them again, to the same run. Then it
// merges runs of s as mergeRuns does, for folds of unit keys.
func (db *DB) foldInParts(s *runSet, unit, n int, write func(tx *bolt.Tx, out *bolt.Bucket, f *keyFilter, i int) (cost int64, err error),
	empty func(tx *bolt.Tx) (done bool, err error), drop func(tx *bolt.Tx, out *bolt.Bucket) (done bool, err error)) error {
	target, err := db.foldTarget(s, unit)
	if err != nil {
		return err
	}
	i := 0
	err = db.commitInParts(func(tx *bolt.Tx) (full, done bool, err error) {
		out, err := s.appendTo(tx, target.name)
		if err != nil {
			return false, false, err
		}
		var appended int64
		for ; i < n && !full; i++ {
			cost, err := write(tx, out, target.filter, i)
			if err != nil {
				return false, false, err
			}
			appended += cost
			full = appended >= db.budget || db.commitFull(tx)
		}
		return full, i == n, nil
	})
	if err != nil {
		return err
	}
	if db.between != nil {
		db.between(stepFoldWritten)
	}
	sealed, emptied := 0, false
	err = db.bolt.Update(func(tx *bolt.Tx) (err error) {
		if emptied, err = empty(tx); emptied && err == nil {
			sealed, err = s.seal(tx)
		}
		return err
	})
	if err == nil && !emptied {
		err = db.commitInParts(func(tx *bolt.Tx) (full, done bool, err error) {
			out, err := s.appendTo(tx, target.name)
			if err != nil {
				return false, false, err
			}
			for !full {
				done, err := drop(tx, out)
				if err == nil && done {
					sealed, err = s.seal(tx)
				}
				if err != nil || done {
					return false, done, err
				}
				full = db.commitFull(tx)
			}
			return true, false, nil
		})
	}
	if err != nil {
		return err
	}
	s.sealed(sealed)
	return db.mergeRuns(s, unit)
}

// emptyIfFolded empties the recent part called name, which c's
// transaction changes, when it holds nothing but a fold's entries: none
// appended since the fold began (no number above last) and none rewritten
// or removed since (the map's count of changes is still since). It deletes
// the bucket and creates it anew, so bbolt frees its pages as they are
// instead of rewriting each as its entries go, and takes the fold's keys
// out of the map. It returns the new bucket, or nil when the recent part
// holds more than the fold's entries.
func emptyIfFolded[K comparable, V any](tx *bolt.Tx, name []byte, c *recentChanges[K, V], keys []K, last, since uint64) (*bolt.Bucket, error) {
	if c.shared.changeCount() != since {
		return nil, nil
	}
	k, _ := tx.Bucket(name).Cursor().Last()
	if k != nil && (len(k) != 8 || binary.BigEndian.Uint64(k) > last) {
		return nil, nil
	}
	if err := tx.DeleteBucket(name); err != nil {
		return nil, err
	}
	bucket, err := tx.CreateBucket(name)
	if err != nil {
		return nil, err
	}
	bucket.FillPercent = 1.0 // appended in order
	for _, k := range keys {
		c.drop(k)
	}
	return bucket, nil
}
