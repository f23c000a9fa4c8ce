package state

import (
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// A recent part (the URL index's, recent.go, and the item records',
// recentitems.go) is a bucket that new entries are appended to, keyed by
// a number that grows, beside a map in memory from an entry's own key to
// that number; once the map holds foldAt entries, a fold writes them to
// the tree keyed by their own keys, in key order, and then drops them from
// the recent part. This file holds what the two share: the map, a write
// transaction's changes to it, and the fold's two steps.

// recentMap is a recent part's map from an entry's key to what finds it in
// the bucket.
type recentMap[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
	// foldAt is the size that starts a fold; tests set it lower.
	foldAt int
}

func newRecentMap[K comparable, V any](foldAt int) *recentMap[K, V] {
	return &recentMap[K, V]{m: map[K]V{}, foldAt: foldAt}
}

// load replaces the map's entries with those each calls put with.
func (r *recentMap[K, V]) load(each func(put func(K, V))) {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.m)
	each(func(k K, v V) { r.m[k] = v })
}

// size is how many entries the map holds.
func (r *recentMap[K, V]) size() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.m)
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
	if len(c.added) == 0 {
		return
	}
	c.shared.mu.Lock()
	defer c.shared.mu.Unlock()
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

// foldInParts runs a fold's two steps, each in transactions within the
// write budget: write(tx, i) for i from 0 to n-1, which writes the i-th
// key in order to the tree keyed by its own keys, then drop(tx) until it
// reports done, each call dropping the first entry of the recent part. A
// crash between two transactions leaves entries in both places, with the
// same values; the next fold writes them again.
func (db *DB) foldInParts(n int, write func(tx *bolt.Tx, i int) error, drop func(tx *bolt.Tx) (done bool, err error)) error {
	i := 0
	err := db.commitInParts(func(tx *bolt.Tx) (full, done bool, err error) {
		for ; i < n && !full; i++ {
			if err := write(tx, i); err != nil {
				return false, false, err
			}
			full = db.commitFull(tx)
		}
		return full, i == n, nil
	})
	if err != nil {
		return err
	}
	return db.commitInParts(func(tx *bolt.Tx) (full, done bool, err error) {
		for !full {
			if done, err := drop(tx); err != nil || done {
				return false, done, err
			}
			full = db.commitFull(tx)
		}
		return true, false, nil
	})
}
