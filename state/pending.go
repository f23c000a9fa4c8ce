package state

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Pending describes the versions waiting for export.
type Pending struct {
	// Count is how many item versions are pending.
	Count int
	// MaxSeq is the highest sequence number among them: a publish that
	// takes them all records it, so later versions stay pending.
	MaxSeq uint64
}

// PendingSummary counts the pending versions.
func (db *DB) PendingSummary() (Pending, error) {
	var p Pending
	err := db.bolt.View(func(tx *bolt.Tx) error {
		p.Count = count(tx.Bucket(bucketPending))
		p.MaxSeq = getUint(tx.Bucket(bucketMeta), keyPendingSeq)
		return nil
	})
	if err != nil {
		return Pending{}, fmt.Errorf("read pending items in %s: %w", db.dir, err)
	}
	return p, nil
}

// ForEachPending calls fn for every pending version with Seq <= maxSeq, in
// key order, inside one read transaction.
func (db *DB) ForEachPending(maxSeq uint64, fn func(Version) error) error {
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
			var ver Version
			if err := json.Unmarshal(v, &ver); err != nil {
				return fmt.Errorf("pending item %q: %w", k, err)
			}
			if ver.Seq > maxSeq {
				return nil
			}
			return fn(ver)
		})
	})
	if err != nil {
		return fmt.Errorf("read pending items in %s: %w", db.dir, err)
	}
	return nil
}
