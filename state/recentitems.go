package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// The item records' recent part. Item records are keyed by item key, so
// a crawl that finds new items inserts each at a random key of a tree
// that outgrows the page cache, a whole page rewritten per new item, as
// for the URL index (see recent.go). A new item's record goes to the
// recent part instead: a bucket keyed by a sequence number, which grows
// at its end, each value the item's key and its record, beside a map in
// memory from item key to sequence number. Once the recent part holds
// half as many records as the URL index's recent part holds URLs
// (Options.RecentURLs) it is folded into a run of the item records (see
// runs.go) in key order. The map is bounded by that size: 1.6 MiB of heap
// for each 16Ki keys of 40 bytes (measured).
//
// A record in the recent part is read and rewritten there until it is
// folded, one in a run where it is. A fold writes the recent records into
// its run, then empties the recent part in one transaction (as the URL
// index's fold does), or, when a record was added or rewritten since the
// fold began, deletes them in sequence order, writing a record again
// first if it changed since; a crash in between leaves a record in both,
// and the recent part's copy is the one read. Only write
// transactions read item records, so no reader takes the map's lock (see
// recentmap.go).

// bucketItemsRecent is the item records' recent part: sequence number to
// the item's stored key and record.
var bucketItemsRecent = []byte("items_recent")

// recentItems is the recent part's map: an item's stored key to the
// sequence number of its record.
type recentItems = recentMap[string, uint64]

func newRecentItems(foldAt int) *recentItems { return newRecentMap[string, uint64](foldAt) }

// loadRecentItems replaces the map with the recent part of the file. An
// entry that does not decode is left out (state check names it).
func loadRecentItems(r *recentItems, tx *bolt.Tx) {
	b := tx.Bucket(bucketItemsRecent)
	r.load(b, func(put func(string, uint64)) {
		_ = b.ForEach(func(k, v []byte) error {
			if key, _, ok := decodeRecentItem(v); ok && len(k) == 8 {
				put(string(key), binary.BigEndian.Uint64(k))
			}
			return nil
		})
	})
}

// itemRecords reads and writes item records inside one write
// transaction, in their runs or their recent part.
type itemRecords struct {
	recentChanges[string, uint64]
	// runs are the records folded (see runs.go), bucket the recent part.
	runs   *runsView
	bucket *bolt.Bucket
	// next is the sequence number of the next record appended, 0 until
	// the transaction appends one.
	next uint64
}

// seqOf returns the sequence number of the recent record of key.
func (r *itemRecords) seqOf(key []byte) (uint64, bool) { return r.get(string(key)) }

// Get returns the record stored under key, nil when there is none.
func (r *itemRecords) Get(key []byte) []byte {
	if seq, ok := r.seqOf(key); ok {
		if _, v, ok := decodeRecentItem(r.bucket.Get(seqKey(seq))); ok {
			return v
		}
	}
	return r.runs.get(key)
}

// Put stores a record under key: where it is, or, for a new key, at the
// end of the recent part.
func (r *itemRecords) Put(key, v []byte) error {
	if seq, ok := r.seqOf(key); ok {
		r.rewrote = true
		return r.bucket.Put(seqKey(seq), encodeRecentItem(key, v))
	}
	if found, err := r.runs.putWhere(key, v); found || err != nil {
		return err
	}
	if r.next == 0 {
		// The transaction's first append: after the bucket's last entry.
		r.next = 1
		if k, _ := r.bucket.Cursor().Last(); len(k) == 8 {
			r.next = binary.BigEndian.Uint64(k) + 1
		}
	}
	seq := r.next
	if err := r.bucket.Put(seqKey(seq), encodeRecentItem(key, v)); err != nil {
		return err
	}
	r.next++
	r.add(string(key), seq)
	return nil
}

// ForEach calls fn for every record, the runs' first, then the recent
// part's; a record in both (a fold cut short) is given once, as the
// recent part holds it.
func (r *itemRecords) ForEach(fn func(k, v []byte) error) error {
	err := r.runs.forEach(func(k, v []byte) error {
		if _, ok := r.seqOf(k); ok {
			return nil
		}
		return fn(k, v)
	})
	if err != nil {
		return err
	}
	return r.bucket.ForEach(func(_, v []byte) error {
		key, rec, ok := decodeRecentItem(v)
		if !ok {
			return errRecentItem
		}
		return fn(key, rec)
	})
}

// remove takes the record of key, at seq, out of the recent part.
func (r *itemRecords) remove(key []byte, seq uint64) error {
	if err := r.bucket.Delete(seqKey(seq)); err != nil {
		return err
	}
	r.drop(string(key))
	return nil
}

// itemRecordsOf returns the item records of a write transaction: one
// view per transaction, applied to the map when it commits.
func (db *DB) itemRecordsOf(tx *bolt.Tx) *itemRecords {
	w := db.writingOf(tx)
	if w.items == nil {
		bucket := tx.Bucket(bucketItemsRecent)
		bucket.FillPercent = 1.0 // appended in sequence order
		w.items = &itemRecords{recentChanges: newRecentChanges(db.recentItems, true),
			runs: db.itemRuns.view(tx), bucket: bucket}
	}
	return w.items
}

// foldItemsIfFull folds the recent part into a run once it holds
// its fold size of records (recentMap.foldAt).
func (db *DB) foldItemsIfFull() error {
	if !db.recentItems.full() {
		return nil
	}
	return db.foldItems()
}

// foldItems writes the recent part's records into a run in key order,
// then empties the recent part or deletes them from it (see above), and
// merges runs (see merge.go).
func (db *DB) foldItems() error {
	keys, last := db.recentItems.sorted(strings.Compare, func(seq uint64) uint64 { return seq })
	if len(keys) == 0 {
		return nil
	}
	since := db.recentItems.changeCount()
	write := func(tx *bolt.Tx, out *bolt.Bucket, f *keyFilter, i int) (int64, error) {
		r := db.itemRecordsOf(tx)
		seq, ok := r.seqOf([]byte(keys[i]))
		if !ok {
			return 0, nil
		}
		if _, v, ok := decodeRecentItem(r.bucket.Get(seqKey(seq))); ok {
			f.add([]byte(keys[i]))
			return appendCost([]byte(keys[i]), v), out.Put([]byte(keys[i]), v)
		}
		return 0, nil
	}
	empty := func(tx *bolt.Tx) (bool, error) {
		r := db.itemRecordsOf(tx)
		bucket, err := emptyIfFolded(tx, bucketItemsRecent, &r.recentChanges, keys, last, since)
		if bucket == nil || err != nil {
			return false, err
		}
		r.bucket, r.next = bucket, 0
		return true, nil
	}
	drop := func(tx *bolt.Tx, out *bolt.Bucket) (done bool, err error) {
		r := db.itemRecordsOf(tx)
		c := r.bucket.Cursor()
		k, v := c.First()
		if k == nil || len(k) == 8 && binary.BigEndian.Uint64(k) > last {
			return true, nil
		}
		key, rec, ok := decodeRecentItem(v)
		if !ok {
			return false, c.Delete() // not in the map: nothing to fold
		}
		key, rec = bytes.Clone(key), bytes.Clone(rec)
		if !bytes.Equal(out.Get(key), rec) {
			// Rewritten since the first step wrote it.
			if err := out.Put(key, rec); err != nil {
				return false, err
			}
		}
		return false, r.remove(key, binary.BigEndian.Uint64(k))
	}
	return db.foldInParts(db.itemRuns, db.recentItems.foldAt, len(keys), write, empty, drop)
}

// errRecentItem is a recent part's value that does not decode.
var errRecentItem = errors.New("recent item record is not a key and a record")

// encodeRecentItem lays a recent part's value out as the key's length, a
// uvarint, the key, then the record.
func encodeRecentItem(key, rec []byte) []byte {
	b := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(key)+len(rec)), uint64(len(key)))
	return append(append(b, key...), rec...)
}

// decodeRecentItem reads what encodeRecentItem wrote, the record left
// encoded; ok is false for a value it did not write.
func decodeRecentItem(v []byte) (key, rec []byte, ok bool) {
	n, k := binary.Uvarint(v)
	if k <= 0 || n == 0 || uint64(len(v)-k) < n {
		return nil, nil, false
	}
	return v[k : k+int(n)], v[k+int(n):], true
}
