package state

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
)

// bucketPagesV7 held the page memos by seen key up to format 7; format 8
// keeps them by page number in bucketMemos.
var bucketPagesV7 = []byte("pages")

// upgradeBatch bounds the memos one transaction of moveMemos moves.
const upgradeBatch = 4096

// moveMemos moves the memos of a format 7 file from the pages bucket to
// the memo bucket, giving each page a number in its seen mark, then drops
// the pages bucket; a file without one is left alone. It runs in
// transactions of upgradeBatch memos, each moving its own, so a crash
// leaves the rest for the next Open: the memos stay whole either way.
func (db *DB) moveMemos() error {
	for done := false; !done; {
		err := db.bolt.Update(func(tx *bolt.Tx) (err error) {
			done, err = moveMemoBatch(tx, upgradeBatch)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// moveMemoBatch moves up to n memos of the pages bucket, or drops the
// bucket when it is empty; done reports that there is no pages bucket
// left.
func moveMemoBatch(tx *bolt.Tx, n int) (done bool, err error) {
	old := tx.Bucket(bucketPagesV7)
	if old == nil {
		return true, nil
	}
	var keys, values [][]byte
	c := old.Cursor()
	for k, v := c.First(); k != nil && len(keys) < n; k, v = c.Next() {
		keys, values = append(keys, bytes.Clone(k)), append(values, bytes.Clone(v))
	}
	if len(keys) == 0 {
		return true, tx.DeleteBucket(bucketPagesV7)
	}
	memos := writeMemos(tx)
	for i, k := range keys {
		if err := memos.putByKey(k, values[i]); err != nil {
			return false, err
		}
		if err := old.Delete(k); err != nil {
			return false, err
		}
	}
	return false, nil
}
