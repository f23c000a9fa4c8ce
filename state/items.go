package state

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// Version is an item version waiting for export: the latest new or changed
// values of an item that no published export holds yet.
type Version struct {
	Key       string          `json:"key"`
	URL       string          `json:"url"`
	Hash      string          `json:"hash"`
	FetchedAt time.Time       `json:"fetched_at"`
	RunID     string          `json:"run_id"`
	Values    json.RawMessage `json:"values"`
}

// itemWriter stores items inside one transaction.
type itemWriter struct {
	items, pending *bolt.Bucket
	traversal      uint64
}

func newItemWriter(tx *bolt.Tx, traversal uint64) itemWriter {
	return itemWriter{items: tx.Bucket(bucketItems), pending: tx.Bucket(bucketPending), traversal: traversal}
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
	if old := w.items.Get(key); old != nil {
		prev, err := decodeItemRecord(old)
		if err != nil {
			return fmt.Errorf("item %q: %w", v.Key, err)
		}
		rec.flags = prev.flags
		if prev.hash == hash {
			counts.Unchanged++
			if prev.traversal == w.traversal {
				return nil
			}
			return w.items.Put(key, rec.encode())
		}
		counts.Changed++
	} else {
		counts.New++
	}
	values, err := json.Marshal(v.Values)
	if err != nil {
		return fmt.Errorf("item %q: encode values: %w", v.Key, err)
	}
	pending, err := json.Marshal(Version{Key: v.Key, URL: v.URL, Hash: v.Hash, FetchedAt: v.FetchedAt.UTC(), RunID: v.RunID, Values: values})
	if err != nil {
		return fmt.Errorf("item %q: encode version: %w", v.Key, err)
	}
	if err := w.items.Put(key, rec.encode()); err != nil {
		return err
	}
	return w.pending.Put(key, pending)
}

// ForEachPending calls fn for every item version waiting for export, in key
// order, inside one read transaction.
func (db *DB) ForEachPending(fn func(Version) error) error {
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
			var ver Version
			if err := json.Unmarshal(v, &ver); err != nil {
				return fmt.Errorf("pending item %q: %w", k, err)
			}
			return fn(ver)
		})
	})
	if err != nil {
		return fmt.Errorf("read pending items in %s: %w", db.dir, err)
	}
	return nil
}
