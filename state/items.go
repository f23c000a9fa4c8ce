package state

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// Changes an exported row can carry.
const (
	ChangeNew     = "new"
	ChangeChanged = "changed"
	ChangeRemoved = "removed"
)

// Item record flags.
const (
	itemPublished = 1 << iota // some version of the item reached a published export
	itemRemoved               // the item was tombstoned and not seen since
)

// Version is an item version waiting for export: the latest new or changed
// values of an item that no published export holds yet.
type Version struct {
	Key       string    `json:"key"`
	URL       string    `json:"url"`
	Hash      string    `json:"hash"`
	Change    string    `json:"change"`
	FetchedAt time.Time `json:"fetched_at"`
	RunID     string    `json:"run_id"`
	// Seq orders pending versions: a publish takes every version up to a
	// sequence number, so versions stored after it stay pending.
	Seq uint64 `json:"seq"`
	// Values is the JSON array of the item's typed values; null for a
	// removed item.
	Values json.RawMessage `json:"values"`
}

// itemWriter stores items inside one transaction.
type itemWriter struct {
	items, pending, meta *bolt.Bucket
	traversal            uint64
}

func newItemWriter(tx *bolt.Tx, traversal uint64) itemWriter {
	return itemWriter{items: tx.Bucket(bucketItems), pending: tx.Bucket(bucketPending), meta: tx.Bucket(bucketMeta), traversal: traversal}
}

// put stores one item version: a new key or a changed hash is stored and
// becomes pending; an unchanged one only records that this traversal saw it.
func (w itemWriter) put(v *crawl.ItemVersion, counts *crawl.Committed) error {
	hash, err := hashBytes(v.Hash)
	if err != nil {
		return fmt.Errorf("item %q: %w", v.Key, err)
	}
	key := []byte(v.Key)
	rec := itemRecord{hash: hash, traversal: w.traversal, url: v.URL}
	change := ChangeNew
	if old := w.items.Get(key); old != nil {
		prev, err := decodeItemRecord(old)
		if err != nil {
			return fmt.Errorf("item %q: %w", v.Key, err)
		}
		rec.flags = prev.flags &^ itemRemoved
		if prev.hash == hash && prev.flags&itemRemoved == 0 {
			counts.Unchanged++
			if prev.traversal == w.traversal {
				return nil
			}
			return w.items.Put(key, rec.encode())
		}
		counts.Changed++
		if prev.flags&itemPublished != 0 {
			change = ChangeChanged
		}
	} else {
		counts.New++
	}
	values, err := json.Marshal(v.Values)
	if err != nil {
		return fmt.Errorf("item %q: encode values: %w", v.Key, err)
	}
	if err := w.items.Put(key, rec.encode()); err != nil {
		return err
	}
	return w.putPending(Version{Key: v.Key, URL: v.URL, Hash: v.Hash, Change: change, FetchedAt: v.FetchedAt.UTC(), RunID: v.RunID, Values: values})
}

// putPending makes ver the key's pending version, replacing an older one.
func (w itemWriter) putPending(ver Version) error {
	ver.Seq = getUint(w.meta, keyPendingSeq) + 1
	b, err := json.Marshal(ver)
	if err != nil {
		return fmt.Errorf("item %q: encode version: %w", ver.Key, err)
	}
	if err := putUint(w.meta, keyPendingSeq, ver.Seq); err != nil {
		return err
	}
	return w.pending.Put([]byte(ver.Key), b)
}
