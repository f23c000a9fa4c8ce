package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// The URL index's recent part. The URL index is keyed by URL hash, so a
// crawl that finds a new URL inserts it at a random key of a tree that
// soon outgrows the page cache; bbolt decodes, rewrites and writes a whole
// 4 KiB page per insert, since a commit's few hundred new URLs land on as
// many pages (at 200,000 items, one page written per new URL). New URLs go
// to the recent part instead: a bucket keyed by page number, which grows
// at its end, beside a map in memory from URL hash to page number, which
// answers the lookups the bucket cannot. Once the recent part holds
// foldAt URLs it is folded into the index in hash order: each page of the
// index is rewritten once for all the new URLs that land on it. The map
// is bounded by foldAt: 32Ki entries, 2.5 MiB of heap (measured). Twice
// as many saved no more writes at 200,000 items and raised the heap's
// peak by 6 MiB, which the collector paid for under the soft limit.
//
// A fold writes the recent URLs into the index, then deletes them from
// the recent part in page order, each step in transactions within the
// write budget. In between, a URL is in both, with the same page number
// and first traversal; a crash there leaves it so, and the next fold
// writes it again. Open loads the recent part into the map.
//
// The map follows the transactions that write the recent part. A write
// transaction keeps its own additions and removals aside (recentView);
// its additions reach the map just before it commits (prepareRecent), its
// removals just after (settleRecent), both before the next write
// transaction begins (see boltDB.update). A read transaction that looks
// URLs up holds the map's read lock from before it begins to its end (see
// DB.readSeen): a fold's removals wait for it, so it finds the URLs in the
// map, and a reader that begins after them finds the URLs in the index.

// bucketURLsRecent is the URL index's recent part: page number to URL
// hash and first traversal.
var bucketURLsRecent = []byte("urls_recent")

// errURLKey is a URL index key that is not a URL hash.
var errURLKey = errors.New("URL index key is not 16 bytes")

// foldAt is how many URLs the recent part holds before a commit folds it
// into the index.
const foldAt = 32 << 10

// urlHash is a URL index key.
type urlHash [16]byte

// hashOf returns the URL index key k as a urlHash; ok is false for a key
// of another length.
func hashOf(k []byte) (h urlHash, ok bool) {
	if len(k) != len(h) {
		return h, false
	}
	return urlHash(k), true
}

// indexEntry is what the URL index holds of a URL: its page number and
// the traversal that first queued it.
type indexEntry struct{ page, first uint64 }

// recentURLs is the recent part's map (see above).
type recentURLs struct {
	mu     sync.RWMutex
	byHash map[urlHash]indexEntry
	// foldAt is the size that starts a fold; tests set it lower.
	foldAt int
}

func newRecentURLs() *recentURLs {
	return &recentURLs{byHash: map[urlHash]indexEntry{}, foldAt: foldAt}
}

// load replaces the map with the recent part of the file. An entry that
// does not decode is left out (state check names it).
func (r *recentURLs) load(tx *bolt.Tx) {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.byHash)
	_ = tx.Bucket(bucketURLsRecent).ForEach(func(k, v []byte) error {
		if h, e, ok := decodeRecent(k, v); ok {
			r.byHash[h] = e
		}
		return nil
	})
}

// size is how many URLs the recent part holds.
func (r *recentURLs) size() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.byHash)
}

// sorted returns the recent part's URL hashes in order, and the highest
// page number among them.
func (r *recentURLs) sorted() (hashes []urlHash, last uint64) {
	r.mu.RLock()
	hashes = make([]urlHash, 0, len(r.byHash))
	for h, e := range r.byHash {
		hashes = append(hashes, h)
		last = max(last, e.page)
	}
	r.mu.RUnlock()
	slices.SortFunc(hashes, func(a, b urlHash) int { return bytes.Compare(a[:], b[:]) })
	return hashes, last
}

// recentView is the recent part as one transaction sees it.
type recentView struct {
	shared *recentURLs
	bucket *bolt.Bucket
	// tx is the write transaction whose changes added and removed keep,
	// nil for a read transaction.
	tx             *bolt.Tx
	added          map[urlHash]indexEntry
	removed        map[urlHash]struct{}
	addedOrRemoved bool
}

// get returns the recent part's entry of the URL with this key.
func (v *recentView) get(key []byte) (indexEntry, bool) {
	h, ok := hashOf(key)
	if !ok {
		return indexEntry{}, false
	}
	if v.addedOrRemoved {
		if e, ok := v.added[h]; ok {
			return e, true
		}
		if _, ok := v.removed[h]; ok {
			return indexEntry{}, false
		}
	}
	e, ok := v.shared.byHash[h]
	return e, ok
}

// add puts a new URL in the recent part.
func (v *recentView) add(key []byte, e indexEntry) error {
	h, ok := hashOf(key)
	if !ok {
		return errURLKey
	}
	if err := v.bucket.Put(pageKey(e.page), encodeRecent(h, e.first)); err != nil {
		return err
	}
	v.added[h] = e
	delete(v.removed, h)
	v.addedOrRemoved = true
	return nil
}

// remove takes the URL with this key, at this page number, out of the
// recent part.
func (v *recentView) remove(key []byte, page uint64) error {
	h, ok := hashOf(key)
	if !ok {
		return nil
	}
	if err := v.bucket.Delete(pageKey(page)); err != nil {
		return err
	}
	delete(v.added, h)
	v.removed[h] = struct{}{}
	v.addedOrRemoved = true
	return nil
}

// prepareRecent makes the additions of the write transaction about to
// commit the maps' (this one's and the item records' of recentitems.go), so that a reader that finds the transaction's queue
// entries finds their URLs too. A reader may so find a URL an instant
// before its transaction commits: it is seen a little early, never late.
func (db *DB) prepareRecent(tx *bolt.Tx) {
	if r := db.writingItems; r != nil && db.writingTx == tx {
		r.prepare()
	}
	v := db.writing
	if v == nil || v.tx != tx || len(v.added) == 0 {
		return
	}
	db.recent.mu.Lock()
	defer db.recent.mu.Unlock()
	for h, e := range v.added {
		db.recent.byHash[h] = e
	}
}

// settleRecent takes a write transaction's removals out of the maps once
// it committed, or its additions once its commit failed.
func (db *DB) settleRecent(tx *bolt.Tx, err error) {
	if r := db.writingItems; r != nil && db.writingTx == tx {
		db.writingItems, db.writingTx = nil, nil
		r.settle(err)
	}
	v := db.writing
	if v == nil || v.tx != tx {
		return
	}
	db.writing = nil
	db.recent.mu.Lock()
	defer db.recent.mu.Unlock()
	if err != nil {
		for h := range v.added {
			delete(db.recent.byHash, h)
		}
		return
	}
	for h := range v.removed {
		delete(db.recent.byHash, h)
	}
}

// recentViewOf returns the recent part as tx sees it: one view per write
// transaction, applied when it commits.
func (db *DB) recentViewOf(tx *bolt.Tx) *recentView {
	bucket := tx.Bucket(bucketURLsRecent)
	if !tx.Writable() {
		return &recentView{shared: db.recent, bucket: bucket}
	}
	// Only one write transaction runs at a time, under the writer's lock
	// (see boltDB.update), so db.writing is that transaction's view; the
	// lock is held until settleRecent ran.
	if v := db.writing; v != nil && v.tx == tx {
		return v
	}
	bucket.FillPercent = 1.0 // appended in page order
	v := &recentView{shared: db.recent, bucket: bucket, tx: tx,
		added: map[urlHash]indexEntry{}, removed: map[urlHash]struct{}{}}
	db.writing = v
	return v
}

// readSeen runs fn in a read transaction that looks URLs up in the seen
// set, holding the recent part's read lock from before it begins.
func (db *DB) readSeen(fn func(tx *bolt.Tx) error) error {
	db.recent.mu.RLock()
	defer db.recent.mu.RUnlock()
	return db.bolt.View(fn)
}

// foldIfFull folds the recent part into the URL index once it holds
// foldAt URLs.
func (db *DB) foldIfFull() error {
	if db.recent.size() < db.recent.foldAt {
		return nil
	}
	return db.fold()
}

// fold writes the recent part's URLs into the URL index in hash order,
// then deletes them from the recent part in page order (see above).
func (db *DB) fold() error {
	hashes, last := db.recent.sorted()
	if len(hashes) == 0 {
		return nil
	}
	i := 0
	err := db.commitInParts(func(tx *bolt.Tx) (full, done bool, err error) {
		seen := db.seenOf(tx)
		for ; i < len(hashes) && !full; i++ {
			e, ok := seen.recent.get(hashes[i][:])
			if !ok {
				continue
			}
			if err := seen.urls.Put(hashes[i][:], encodeIndex(e.page, e.first)); err != nil {
				return false, false, err
			}
			full = db.commitFull(tx)
		}
		return full, i == len(hashes), nil
	})
	if err != nil {
		return err
	}
	return db.commitInParts(func(tx *bolt.Tx) (full, done bool, err error) {
		recent := db.seenOf(tx).recent
		c := recent.bucket.Cursor()
		for !full {
			k, v := c.First()
			if k == nil {
				return false, true, nil
			}
			h, e, ok := decodeRecent(k, v)
			switch {
			case ok && e.page > last:
				return false, true, nil // queued since the fold began
			case ok:
				err = recent.remove(h[:], e.page)
			default:
				err = c.Delete() // not in the map: nothing to fold
			}
			if err != nil {
				return false, false, err
			}
			full = db.commitFull(tx)
		}
		return true, false, nil
	})
}

// encodeRecent lays a recent part's value out as the URL hash, then the
// first traversal as a uvarint.
func encodeRecent(h urlHash, first uint64) []byte {
	return binary.AppendUvarint(append(make([]byte, 0, len(h)+binary.MaxVarintLen64), h[:]...), first)
}

// decodeRecent reads a recent part's entry; ok is false for one that
// encodeRecent and pageKey did not write.
func decodeRecent(k, v []byte) (h urlHash, e indexEntry, ok bool) {
	e.page = decodePage(k)
	if e.page == 0 || len(v) <= len(h) {
		return h, e, false
	}
	first, n := binary.Uvarint(v[len(h):])
	if n <= 0 || len(h)+n != len(v) {
		return h, e, false
	}
	e.first = first
	return urlHash(v[:len(h)]), e, true
}
