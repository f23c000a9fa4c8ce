package state

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ClaimRunTime returns the time a new run's id is made from, to the
// millisecond: at, or the millisecond after the last time it returned when
// at is not later (two runs in one millisecond, or a clock set back). Ids
// made from it therefore sort by start and never repeat in this state.
func (db *DB) ClaimRunTime(at time.Time) (time.Time, error) {
	ms := at.UnixMilli()
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if last := int64(getUint(meta, keyRunTime)); ms <= last {
			ms = last + 1
		}
		return putUint(meta, keyRunTime, uint64(ms))
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("claim a run time in %s: %w", db.dir, err)
	}
	return time.UnixMilli(ms).UTC(), nil
}
