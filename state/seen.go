package state

import (
	"encoding/binary"
	"hash/fnv"

	bolt "go.etcd.io/bbolt"
)

// The seen set holds every URL a traversal queued, keyed by a 128-bit
// FNV-1a hash of the URL (a fifth of a typical URL's size), with the number
// of the last traversal that queued it as the value. A new traversal does
// not clear the set, which would read the whole bucket in one transaction
// and map it all; it counts only the entries carrying its own number.

// seenKey is the seen set's key for a URL.
func seenKey(url string) []byte {
	h := fnv.New128a()
	_, _ = h.Write([]byte(url))
	return h.Sum(make([]byte, 0, 16))
}

// seenIn reports whether the traversal already queued the URL with this key.
func seenIn(seen *bolt.Bucket, key []byte, traversal uint64) bool {
	v := seen.Get(key)
	return len(v) == 8 && binary.BigEndian.Uint64(v) == traversal
}

// markSeen records that the traversal queued the URL with this key.
func markSeen(seen *bolt.Bucket, key []byte, traversal uint64) error {
	return seen.Put(key, seqKey(traversal))
}

// migrateSeen converts a format 2 seen set, whose values were a bare mark
// and which a new traversal cleared, to the current one: every entry
// belongs to the current traversal.
func migrateSeen(tx *bolt.Tx, traversal uint64) error {
	var keys [][]byte
	err := tx.Bucket(bucketSeen).ForEach(func(k, _ []byte) error {
		keys = append(keys, append([]byte(nil), k...))
		return nil
	})
	if err != nil {
		return err
	}
	seen := tx.Bucket(bucketSeen)
	for _, k := range keys {
		if err := markSeen(seen, k, traversal); err != nil {
			return err
		}
	}
	return nil
}
