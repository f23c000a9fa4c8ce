package state

import (
	"bytes"
	"encoding/binary"
	"errors"

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
// Options.RecentURLs URLs it is folded into a run of the index (see
// runs.go) in hash order: appended to a bucket of its own, reading
// nothing. The map is bounded by that size: 2.5 MiB of heap for each 32Ki
// entries (measured). A larger recent part makes fewer runs, so fewer
// merges and fewer runs for a lookup to try; the stage sizes it by its
// memory limit (gctune.RecentURLs).
//
// A fold writes the recent URLs into its run, in transactions within the
// write budget, then empties the recent part in one transaction (deletes
// the bucket and creates it anew: bbolt frees its pages without rewriting
// them), or, when a URL was added since the fold began, deletes the
// folded ones in page order. In between, a URL is in both, with the same
// page number and first traversal; a crash there leaves it so, and the
// next fold writes it again, to the same run. Open loads the recent part
// into the map.
//
// The map follows the transactions that write the recent part (see
// recentChanges in recentmap.go). A read transaction that looks
// URLs up holds the map's read lock from before it begins to its end (see
// DB.readSeen): a fold's removals wait for it, so it finds the URLs in the
// map, and a reader that begins after them finds the URLs in the run. The
// same lock orders the list of runs against readers (see runs.go).

// bucketURLsRecent is the URL index's recent part: page number to URL
// hash and first traversal.
var bucketURLsRecent = []byte("urls_recent")

// errURLKey is a URL index key that is not a URL hash.
var errURLKey = errors.New("URL index key is not 16 bytes")

// DefaultRecentURLs is how many URLs the recent part holds before a
// commit folds it into a run, unless Options say otherwise.
const DefaultRecentURLs = 32 << 10

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

// recentURLs is the recent part's map: URL hash to page number and first
// traversal.
type recentURLs = recentMap[urlHash, indexEntry]

func newRecentURLs(foldAt int) *recentURLs { return newRecentMap[urlHash, indexEntry](foldAt) }

// loadRecentURLs replaces the map with the recent part of the file. An
// entry that does not decode is left out (state check names it).
func loadRecentURLs(r *recentURLs, tx *bolt.Tx) {
	b := tx.Bucket(bucketURLsRecent)
	r.load(b, func(put func(urlHash, indexEntry)) {
		_ = b.ForEach(func(k, v []byte) error {
			if h, e, ok := decodeRecent(k, v); ok {
				put(h, e)
			}
			return nil
		})
	})
}

// recentView is the recent part as one transaction sees it. bucket, which
// only writes use, is nil in a read transaction's view.
type recentView struct {
	recentChanges[urlHash, indexEntry]
	bucket *bolt.Bucket
}

// get returns the recent part's entry of the URL with this key.
func (v *recentView) get(key []byte) (indexEntry, bool) {
	h, ok := hashOf(key)
	if !ok {
		return indexEntry{}, false
	}
	return v.recentChanges.get(h)
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
	v.recentChanges.add(h, e)
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
	v.recentChanges.drop(h)
	return nil
}

// writingRecent is what the write transaction in progress changed of the
// recent parts. Only one write transaction runs at a time, under the
// writer's lock (see boltDB.update), held until settleRecent ran.
type writingRecent struct {
	tx      *bolt.Tx
	urls    *recentView
	items   *itemRecords
	urlRuns *runsView
	// marks and memos look the marks and the memos up; skips are the
	// skip bitmaps (see skipbits.go).
	marks, memos *bucketGetter
	skips        *skipBits
}

// writingOf returns the changes to the recent parts of the write
// transaction tx, new ones for a transaction that made none yet.
func (db *DB) writingOf(tx *bolt.Tx) *writingRecent {
	if w := db.writing; w != nil && w.tx == tx {
		return w
	}
	db.writing = &writingRecent{tx: tx}
	return db.writing
}

// recentViewOf returns the recent part as tx sees it: one view per write
// transaction, applied to the map when it commits.
func (db *DB) recentViewOf(tx *bolt.Tx) *recentView {
	if !tx.Writable() { // reads go to the map, never to the bucket
		return &recentView{recentChanges: newRecentChanges(db.recent, false)}
	}
	w := db.writingOf(tx)
	if w.urls == nil {
		bucket := tx.Bucket(bucketURLsRecent)
		bucket.FillPercent = 1.0 // appended in page order
		w.urls = &recentView{recentChanges: newRecentChanges(db.recent, true), bucket: bucket}
	}
	return w.urls
}

// urlRunsOf returns the URL index's runs as tx sees them: one view per
// write transaction.
func (db *DB) urlRunsOf(tx *bolt.Tx) *runsView {
	if !tx.Writable() {
		return db.urlRuns.view(tx)
	}
	w := db.writingOf(tx)
	if w.urlRuns == nil {
		w.urlRuns = db.urlRuns.view(tx)
	}
	return w.urlRuns
}

// getterOf returns a bucketGetter of b: one per write transaction, kept
// where field says; a new one for a read transaction.
func (db *DB) getterOf(tx *bolt.Tx, b *bolt.Bucket, field func(*writingRecent) **bucketGetter) *bucketGetter {
	if !tx.Writable() {
		return &bucketGetter{b: b, steps: true}
	}
	g := field(db.writingOf(tx))
	if *g == nil {
		*g = &bucketGetter{b: b}
	}
	return *g
}

// prepareRecent makes the additions of the write transaction about to
// commit the maps'; settleRecent its removals once it committed, or takes
// its additions out again once its commit failed.
func (db *DB) prepareRecent(tx *bolt.Tx) {
	if w := db.writing; w != nil && w.tx == tx {
		if w.urls != nil {
			w.urls.prepare()
		}
		if w.items != nil {
			w.items.prepare()
		}
	}
}

func (db *DB) settleRecent(tx *bolt.Tx, err error) {
	if w := db.writing; w != nil && w.tx == tx {
		db.writing = nil
		if w.urls != nil {
			w.urls.settle(err)
		}
		if w.items != nil {
			w.items.settle(err)
		}
	}
}

// readSeen runs fn in a read transaction that looks URLs up in the seen
// set, holding the recent part's read lock from before it begins.
func (db *DB) readSeen(fn func(tx *bolt.Tx) error) error {
	db.recent.mu.RLock()
	defer db.recent.mu.RUnlock()
	return db.bolt.View(fn)
}

// foldIfFull folds the recent part into a run of the URL index once it
// holds its fold size of URLs (recentMap.foldAt).
func (db *DB) foldIfFull() error {
	if !db.recent.full() {
		return nil
	}
	return db.fold()
}

// fold writes the recent part's URLs into a run of the URL index in hash
// order, then empties the recent part or deletes them from it (see
// above), and merges runs (see merge.go).
func (db *DB) fold() error {
	hashes, last := db.recent.sorted(func(a, b urlHash) int { return bytes.Compare(a[:], b[:]) },
		func(e indexEntry) uint64 { return e.page })
	if len(hashes) == 0 {
		return nil
	}
	since := db.recent.changeCount()
	write := func(tx *bolt.Tx, out *bolt.Bucket, f *keyFilter, i int) (int64, error) {
		if e, ok := db.seenOf(tx).recent.get(hashes[i][:]); ok {
			f.add(hashes[i][:])
			v := encodeIndex(e.page, e.first)
			return appendCost(hashes[i][:], v), out.Put(hashes[i][:], v)
		}
		return 0, nil
	}
	empty := func(tx *bolt.Tx) (bool, error) {
		recent := db.seenOf(tx).recent
		bucket, err := emptyIfFolded(tx, bucketURLsRecent, &recent.recentChanges, hashes, last, since)
		if bucket == nil || err != nil {
			return false, err
		}
		recent.bucket = bucket
		return true, nil
	}
	drop := func(tx *bolt.Tx, _ *bolt.Bucket) (done bool, err error) {
		recent := db.seenOf(tx).recent
		c := recent.bucket.Cursor()
		k, v := c.First()
		if k == nil {
			return true, nil
		}
		switch h, e, ok := decodeRecent(k, v); {
		case ok && e.page > last:
			return true, nil // queued since the fold began
		case ok:
			return false, recent.remove(h[:], e.page)
		}
		return false, c.Delete() // not in the map: nothing to fold
	}
	return db.foldInParts(db.urlRuns, db.recent.foldAt, len(hashes), write, empty, drop)
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
