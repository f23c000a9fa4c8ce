package state

import (
	"bytes"
	"encoding/binary"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// bucketPagesV7 held the page memos by seen key up to format 7; format 8
// keeps them by page number in bucketMemos.
var bucketPagesV7 = []byte("pages")

// bucketSeenV8 held the seen set up to format 8: by URL hash, a mark of
// the traversal, the skipping traversal and the page number; format 9
// keeps the page number in the URL index and the marks by page number (see
// seen.go).
var bucketSeenV8 = []byte("seen")

// upgradeBatch bounds the entries one transaction of moveSeen or
// moveMemos moves.
const upgradeBatch = 4096

// moveMemos moves the memos of a format 7 file from the pages bucket to
// the memo bucket, giving each page a number in the URL index, then drops
// the pages bucket; a file without one is left alone. It runs in
// transactions of upgradeBatch memos, each moving its own, so a crash
// leaves the rest for the next Open: the memos stay whole either way.
func (db *DB) moveMemos() error { return db.inBatches(bucketPagesV7, db.moveMemoBatch) }

// inBatches runs an upgrade step, one transaction of upgradeBatch entries
// at a time, until it says it is done; a file without the bucket old,
// which the step empties and drops, is only read.
func (db *DB) inBatches(old []byte, step func(tx *bolt.Tx, n int) (done bool, err error)) error {
	if !db.hasBucket(old) {
		return nil
	}
	for done := false; !done; {
		err := db.bolt.Update(func(tx *bolt.Tx) (err error) {
			done, err = step(tx, upgradeBatch)
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
func (db *DB) moveMemoBatch(tx *bolt.Tx, n int) (done bool, err error) {
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
	memos := db.writeMemos(tx)
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

// moveSeen moves the seen set of a format 8 file (or older) to the URL
// index and the marks bucket, giving a page number to every URL that has
// none, then drops the old bucket; a file without one is left alone. It
// runs in transactions of upgradeBatch entries, each moving its own, so a
// crash leaves the rest for the next Open. It runs before moveMemos, which
// finds a format 7 memo's page through the URL index.
func (db *DB) moveSeen() error { return db.inBatches(bucketSeenV8, db.moveSeenBatch) }

// hasBucket reports whether the file holds the top-level bucket name; a
// file that cannot be read is said to, so that the write transaction
// that follows meets the error.
func (db *DB) hasBucket(name []byte) bool {
	has := true
	_ = db.bolt.View(func(tx *bolt.Tx) error {
		has = tx.Bucket(name) != nil
		return nil
	})
	return has
}

// moveSeenBatch moves up to n entries of the format 8 seen set, or drops
// the bucket when it is empty; done reports that there is no such bucket
// left.
func (db *DB) moveSeenBatch(tx *bolt.Tx, n int) (done bool, err error) {
	old := tx.Bucket(bucketSeenV8)
	if old == nil {
		return true, nil
	}
	type entry struct {
		key  []byte
		mark seenMark
	}
	var moved []entry
	c := old.Cursor()
	for k, v := c.First(); k != nil && len(moved) < n; k, v = c.Next() {
		moved = append(moved, entry{key: bytes.Clone(k), mark: decodeSeenV8(v)})
	}
	if len(moved) == 0 {
		return true, tx.DeleteBucket(bucketSeenV8)
	}
	// Marks in page number order: each lands after the one before.
	slices.SortStableFunc(moved, func(a, b entry) int {
		return cmpPage(a.mark.page, b.mark.page)
	})
	seen := db.seenOf(tx)
	for i := range moved {
		e := &moved[i]
		if e.mark.page == 0 {
			// A new number, in the index with the mark's traversal.
			err = seen.put(e.key, &e.mark)
		} else {
			err = tx.Bucket(bucketURLs).Put(e.key, encodeIndex(e.mark.page, e.mark.traversal))
			if err == nil && e.mark.skipped != 0 {
				err = seen.marks.Put(pageKey(e.mark.page), encodeMark(e.mark.traversal, e.mark.skipped))
			}
		}
		if err != nil {
			return false, err
		}
		if err := old.Delete(e.key); err != nil {
			return false, err
		}
	}
	return false, nil
}

// cmpPage orders page numbers, 0 (none yet) last.
func cmpPage(a, b uint64) int {
	switch {
	case a == b:
		return 0
	case a == 0:
		return 1
	case b == 0:
		return -1
	case a < b:
		return -1
	}
	return 1
}

// decodeSeenV8 decodes a format 8 seen value: the traversal, then the
// skipping traversal, then the page number, each 8 bytes and each but the
// first optional. A value too short to hold a traversal (format 2's bare
// mark, which migrateSeen rewrites first) reads as no traversal.
func decodeSeenV8(v []byte) (m seenMark) {
	if len(v) < 8 {
		return seenMark{}
	}
	m.traversal = binary.BigEndian.Uint64(v)
	if len(v) >= 16 {
		m.skipped = binary.BigEndian.Uint64(v[8:])
	}
	if len(v) >= 24 {
		m.page = binary.BigEndian.Uint64(v[16:])
	}
	return m
}

// migrateSeen converts a format 2 seen set, whose values were a bare mark
// and which a new traversal cleared, to format 8's, which moveSeen then
// moves: every entry belongs to the current traversal.
func migrateSeen(tx *bolt.Tx, traversal uint64) error {
	var keys [][]byte
	old := tx.Bucket(bucketSeenV8)
	err := old.ForEach(func(k, _ []byte) error {
		keys = append(keys, bytes.Clone(k))
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := old.Put(k, binary.BigEndian.AppendUint64(nil, traversal)); err != nil {
			return err
		}
	}
	return nil
}
