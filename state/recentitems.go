package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// The item records' recent part. Item records are keyed by item key, so
// a crawl that finds new items inserts each at a random key of a tree
// that outgrows the page cache, a whole page rewritten per new item, as
// for the URL index (see recent.go). A new item's record goes to the
// recent part instead: a bucket keyed by a sequence number, which grows
// at its end, each value the item's key and its record, beside a map in
// memory from item key to sequence number. Once the recent part holds
// itemsFoldAt records it is folded into the items bucket in key order.
// The map is bounded by itemsFoldAt: 16Ki keys, about 2 MiB with keys of
// 40 bytes.
//
// A record in the recent part is read and rewritten there until it is
// folded. A fold writes the recent records into the items bucket, then
// deletes them from the recent part in sequence order, writing a record
// again first if it changed since; a crash in between leaves a record in
// both, and the recent part's copy is the one read. Only write
// transactions read item records, so the map changes with them (see
// prepareRecent and settleRecent) and no reader takes its lock.

// bucketItemsRecent is the item records' recent part: sequence number to
// the item's stored key and record.
var bucketItemsRecent = []byte("items_recent")

// itemsFoldAt is how many records the recent part holds before a commit
// folds it into the items bucket.
const itemsFoldAt = 16 << 10

// recentItems is the recent part's map (see above).
type recentItems struct {
	mu    sync.Mutex
	byKey map[string]uint64
	// foldAt is the size that starts a fold; tests set it lower.
	foldAt int
}

func newRecentItems() *recentItems {
	return &recentItems{byKey: map[string]uint64{}, foldAt: itemsFoldAt}
}

// load replaces the map with the recent part of the file. An entry that
// does not decode is left out (state check names it).
func (r *recentItems) load(tx *bolt.Tx) {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.byKey)
	_ = tx.Bucket(bucketItemsRecent).ForEach(func(k, v []byte) error {
		if key, _, ok := decodeRecentItem(v); ok && len(k) == 8 {
			r.byKey[string(key)] = binary.BigEndian.Uint64(k)
		}
		return nil
	})
}

// size is how many records the recent part holds.
func (r *recentItems) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byKey)
}

// sorted returns the recent part's keys in order, and the highest
// sequence number among them.
func (r *recentItems) sorted() (keys []string, last uint64) {
	r.mu.Lock()
	keys = make([]string, 0, len(r.byKey))
	for k, seq := range r.byKey {
		keys = append(keys, k)
		last = max(last, seq)
	}
	r.mu.Unlock()
	slices.Sort(keys)
	return keys, last
}

// itemRecords reads and writes item records inside one write
// transaction, in the items bucket or its recent part.
type itemRecords struct {
	items  *bolt.Bucket
	bucket *bolt.Bucket // the recent part
	shared *recentItems
	// added and removed are the transaction's changes to the map.
	added   map[string]uint64
	removed map[string]struct{}
}

// seqOf returns the sequence number of the recent record of key.
func (r *itemRecords) seqOf(key []byte) (uint64, bool) {
	if seq, ok := r.added[string(key)]; ok {
		return seq, true
	}
	if _, ok := r.removed[string(key)]; ok {
		return 0, false
	}
	seq, ok := r.shared.byKey[string(key)]
	return seq, ok
}

// Get returns the record stored under key, nil when there is none.
func (r *itemRecords) Get(key []byte) []byte {
	if seq, ok := r.seqOf(key); ok {
		if _, v, ok := decodeRecentItem(r.bucket.Get(seqKey(seq))); ok {
			return v
		}
	}
	return r.items.Get(key)
}

// Put stores a record under key: where it is, or, for a new key, at the
// end of the recent part.
func (r *itemRecords) Put(key, v []byte) error {
	if seq, ok := r.seqOf(key); ok {
		return r.bucket.Put(seqKey(seq), encodeRecentItem(key, v))
	}
	if r.items.Get(key) != nil {
		return r.items.Put(key, v)
	}
	seq := uint64(1)
	if k, _ := r.bucket.Cursor().Last(); len(k) == 8 {
		seq = binary.BigEndian.Uint64(k) + 1
	}
	if err := r.bucket.Put(seqKey(seq), encodeRecentItem(key, v)); err != nil {
		return err
	}
	r.added[string(key)] = seq
	delete(r.removed, string(key))
	return nil
}

// ForEach calls fn for every record, the items bucket's first, then the
// recent part's; a record in both (a fold cut short) is given once, as
// the recent part holds it.
func (r *itemRecords) ForEach(fn func(k, v []byte) error) error {
	err := r.items.ForEach(func(k, v []byte) error {
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
	delete(r.added, string(key))
	r.removed[string(key)] = struct{}{}
	return nil
}

// itemRecordsOf returns the item records of a write transaction: one
// view per transaction, applied to the map when it commits.
func (db *DB) itemRecordsOf(tx *bolt.Tx) *itemRecords {
	if r := db.writingItems; r != nil && db.writingTx == tx {
		return r
	}
	bucket := tx.Bucket(bucketItemsRecent)
	bucket.FillPercent = 1.0 // appended in sequence order
	r := &itemRecords{items: tx.Bucket(bucketItems), bucket: bucket, shared: db.recentItems,
		added: map[string]uint64{}, removed: map[string]struct{}{}}
	db.writingItems, db.writingTx = r, tx
	return r
}

// prepare makes a transaction's additions the map's before it commits.
func (r *itemRecords) prepare() {
	if len(r.added) == 0 {
		return
	}
	r.shared.mu.Lock()
	defer r.shared.mu.Unlock()
	for k, seq := range r.added {
		r.shared.byKey[k] = seq
	}
}

// settle takes a transaction's removals out of the map once it
// committed, or its additions once its commit failed.
func (r *itemRecords) settle(err error) {
	r.shared.mu.Lock()
	defer r.shared.mu.Unlock()
	if err != nil {
		for k := range r.added {
			delete(r.shared.byKey, k)
		}
		return
	}
	for k := range r.removed {
		delete(r.shared.byKey, k)
	}
}

// foldItemsIfFull folds the recent part into the items bucket once it
// holds foldAt records.
func (db *DB) foldItemsIfFull() error {
	if db.recentItems.size() < db.recentItems.foldAt {
		return nil
	}
	return db.foldItems()
}

// foldItems writes the recent part's records into the items bucket in key
// order, then deletes them from the recent part in sequence order (see
// above).
func (db *DB) foldItems() error {
	keys, last := db.recentItems.sorted()
	if len(keys) == 0 {
		return nil
	}
	i := 0
	err := db.commitInParts(func(tx *bolt.Tx) (full, done bool, err error) {
		r := db.itemRecordsOf(tx)
		for ; i < len(keys) && !full; i++ {
			seq, ok := r.seqOf([]byte(keys[i]))
			if !ok {
				continue
			}
			if _, v, ok := decodeRecentItem(r.bucket.Get(seqKey(seq))); ok {
				if err := r.items.Put([]byte(keys[i]), v); err != nil {
					return false, false, err
				}
			}
			full = db.commitFull(tx)
		}
		return full, i == len(keys), nil
	})
	if err != nil {
		return err
	}
	return db.commitInParts(func(tx *bolt.Tx) (full, done bool, err error) {
		r := db.itemRecordsOf(tx)
		c := r.bucket.Cursor()
		for !full {
			k, v := c.First()
			if k == nil || len(k) == 8 && binary.BigEndian.Uint64(k) > last {
				return false, true, nil
			}
			key, rec, ok := decodeRecentItem(v)
			if !ok {
				err = c.Delete() // not in the map: nothing to fold
			} else {
				if !bytes.Equal(r.items.Get(key), rec) {
					// Rewritten since the first step wrote it.
					if err := r.items.Put(bytes.Clone(key), bytes.Clone(rec)); err != nil {
						return false, false, err
					}
				}
				err = r.remove(bytes.Clone(key), binary.BigEndian.Uint64(k))
			}
			if err != nil {
				return false, false, err
			}
			full = db.commitFull(tx)
		}
		return true, false, nil
	})
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
