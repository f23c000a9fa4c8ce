package state

import (
	"testing"

	bolt "go.etcd.io/bbolt"
)

// pendingKeys lists the keys of pending versions, for tests.
func (db *DB) pendingKeys(t *testing.T) []string {
	t.Helper()
	var keys []string
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPending).ForEach(func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
