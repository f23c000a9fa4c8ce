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
//
// A mark also carries the URL's page number, given once, when the URL is
// first queued, and kept for as long as the set holds the URL: the key of
// the page's memo (see memo.go). Numbers follow the order in which pages
// are found, which is about the order a crawl finishes them in, so the
// memos a commit writes land side by side in the file instead of one per
// page of the memo bucket.

// seenKey is the seen set's key for a URL.
func seenKey(url string) []byte {
	h := fnv.New128a()
	_, _ = h.Write([]byte(url))
	return h.Sum(make([]byte, 0, 16))
}

// seenMark is a seen set value: the last traversal that queued or skipped
// the URL, the last that skipped it (0: none), and the URL's page number
// (0: none yet).
type seenMark struct{ traversal, skipped, page uint64 }

// readSeen reads the mark of the URL with this key; ok is false when the
// set has none.
func readSeen(seen *bolt.Bucket, key []byte) (m seenMark, ok bool) {
	return decodeSeen(seen.Get(key))
}

// decodeSeen decodes a seen set value; ok is false when it is too short
// to be one (nil, say).
func decodeSeen(v []byte) (m seenMark, ok bool) {
	if len(v) < 8 {
		return seenMark{}, false
	}
	m.traversal = binary.BigEndian.Uint64(v)
	if len(v) >= 16 {
		m.skipped = binary.BigEndian.Uint64(v[8:])
	}
	if len(v) >= 24 {
		m.page = binary.BigEndian.Uint64(v[16:])
	}
	return m, true
}

// seenIn reports whether the traversal already queued the URL with this key.
func seenIn(seen *bolt.Bucket, key []byte, traversal uint64) bool {
	m, _ := readSeen(seen, key)
	return m.traversal == traversal
}

// markSeen records that the traversal queued the URL with this key,
// keeping the last traversal that skipped it and its page number.
func markSeen(seen *bolt.Bucket, key []byte, traversal uint64) error {
	m, _ := readSeen(seen, key)
	m.traversal = traversal
	return seen.Put(key, m.encode())
}

// markSkipped records that the traversal skipped the page at the URL with
// this key, keeping its page number.
func markSkipped(seen *bolt.Bucket, key []byte, traversal uint64) error {
	m, _ := readSeen(seen, key)
	m.traversal, m.skipped = traversal, traversal
	return seen.Put(key, m.encode())
}

// encode lays a mark out as the traversal, then the skipping traversal
// when there is one or a page number follows, then the page number when
// there is one, each 8 bytes.
func (m seenMark) encode() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 24), m.traversal)
	if m.skipped != 0 || m.page != 0 {
		b = binary.BigEndian.AppendUint64(b, m.skipped)
	}
	if m.page != 0 {
		b = binary.BigEndian.AppendUint64(b, m.page)
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
