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

// cutFold writes as the first transactions of a fold cut short by a crash
// do: write puts entries into the run the fold fills, made and marked
// filling first when there is none.
func cutFold(db *DB, s *runSet, write func(tx *bolt.Tx, out *bolt.Bucket) error) error {
	target, err := db.foldTarget(s, 1)
	if err != nil {
		return err
	}
	return db.bolt.Update(func(tx *bolt.Tx) error {
		return write(tx, tx.Bucket(s.container).Bucket(target.name))
	})
}
