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
//
// An item page a revisit policy skipped is marked seen too, and its value
// adds the number of the last traversal that skipped it: its items were
// there in that traversal although their records, which carry the last
// traversal that fetched them, were not written (see itemWriter.lastSeen).
// Writing the mark alone halves what a skipped page costs a commit.

// seenKey is the seen set's key for a URL.
func seenKey(url string) []byte {
	h := fnv.New128a()
	_, _ = h.Write([]byte(url))
	return h.Sum(make([]byte, 0, 16))
}

// seenMark is a seen set value: the last traversal that queued or skipped
// the URL, and the last that skipped it (0: none).
type seenMark struct{ traversal, skipped uint64 }

// readSeen reads the mark of the URL with this key; ok is false when the
// set has none.
func readSeen(seen *bolt.Bucket, key []byte) (m seenMark, ok bool) {
	v := seen.Get(key)
	if len(v) < 8 {
		return seenMark{}, false
	}
	m.traversal = binary.BigEndian.Uint64(v)
	if len(v) >= 16 {
		m.skipped = binary.BigEndian.Uint64(v[8:])
	}
	return m, true
}

// seenIn reports whether the traversal already queued the URL with this key.
func seenIn(seen *bolt.Bucket, key []byte, traversal uint64) bool {
	m, _ := readSeen(seen, key)
	return m.traversal == traversal
}

// markSeen records that the traversal queued the URL with this key,
// keeping the last traversal that skipped it.
func markSeen(seen *bolt.Bucket, key []byte, traversal uint64) error {
	m, _ := readSeen(seen, key)
	m.traversal = traversal
	return seen.Put(key, m.encode())
}

// markSkipped records that the traversal skipped the page at the URL with
// this key.
func markSkipped(seen *bolt.Bucket, key []byte, traversal uint64) error {
	return seen.Put(key, seenMark{traversal: traversal, skipped: traversal}.encode())
}

func (m seenMark) encode() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), m.traversal)
	if m.skipped != 0 {
		b = binary.BigEndian.AppendUint64(b, m.skipped)
	}
	return b
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
