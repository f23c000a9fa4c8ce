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
		return tx.Bucket(bucketVersions).ForEach(func(k, v []byte) error {
			ver, err := decodeVersion(0, v)
			keys = append(keys, ver.Key)
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
