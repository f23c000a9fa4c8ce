package state

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Pending describes the versions waiting for export.
type Pending struct {
	// Count is how many item versions are pending.
	Count int
	// MaxSeq is the highest sequence number given out so far: a publish
	// that takes every version up to it records it, so versions stored
	// later stay pending.
	MaxSeq uint64
}

// PendingSummary counts the pending versions.
func (db *DB) PendingSummary() (Pending, error) {
	var p Pending
	err := db.bolt.View(func(tx *bolt.Tx) error {
		p.Count = int(getUint(tx.Bucket(bucketMeta), keyPendingCount))
		p.MaxSeq = getUint(tx.Bucket(bucketMeta), keyPendingSeq)
		return nil
	})
	if err != nil {
		return Pending{}, fmt.Errorf("read pending items in %s: %w", db.dir, err)
	}
	return p, nil
}

// ForEachPending calls fn for every pending version with Seq <= maxSeq, in
// the order they were stored, inside one read transaction. Each item has at
// most one pending version: a newer one replaces it.
func (db *DB) ForEachPending(maxSeq uint64, fn func(Version) error) error {
	err := db.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketVersions).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			seq := binary.BigEndian.Uint64(k)
			if seq > maxSeq {
				break
			}
			ver, err := decodeVersion(seq, v)
			if err != nil {
				return err
			}
			if err := fn(ver); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read pending items in %s: %w", db.dir, err)
	}
	return nil
}
