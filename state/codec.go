package state

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/databrew/databrew-stage/crawl"
)

const flagStart = 1

// encodeEntry lays an entry out as kind, flags, URL.
func encodeEntry(e crawl.Entry) []byte {
	b := make([]byte, 2, 2+len(e.URL))
	b[0] = byte(e.Kind)
	if e.Start {
		b[1] = flagStart
	}
	return append(b, e.URL...)
}

func decodeEntry(v []byte) (crawl.Entry, error) {
	if len(v) < 2 {
		return crawl.Entry{}, fmt.Errorf("queue entry of %d bytes is too short", len(v))
	}
	return crawl.Entry{Kind: crawl.Kind(v[0]), Start: v[1]&flagStart != 0, URL: string(v[2:])}, nil
}

// itemRecord is what the items bucket keeps per key: enough to detect a
// change and to know which traversal last saw the item.
type itemRecord struct {
	hash      [16]byte
	traversal uint64
	flags     byte
	url       string
}

const itemRecordHeader = 16 + 8 + 1

func (r itemRecord) encode() []byte {
	b := make([]byte, itemRecordHeader, itemRecordHeader+len(r.url))
	copy(b, r.hash[:])
	binary.BigEndian.PutUint64(b[16:], r.traversal)
	b[24] = r.flags
	return append(b, r.url...)
}

func decodeItemRecord(v []byte) (itemRecord, error) {
	if len(v) < itemRecordHeader {
		return itemRecord{}, fmt.Errorf("item record of %d bytes is too short", len(v))
	}
	var r itemRecord
	copy(r.hash[:], v)
	r.traversal = binary.BigEndian.Uint64(v[16:])
	r.flags = v[24]
	r.url = string(v[itemRecordHeader:])
	return r, nil
}

// hashBytes reads a 32-hex-digit content hash.
func hashBytes(h string) ([16]byte, error) {
	var out [16]byte
	if len(h) != 32 {
		return out, fmt.Errorf("content hash %q is not 32 hex digits", h)
	}
	if _, err := hex.Decode(out[:], []byte(h)); err != nil {
		return out, fmt.Errorf("content hash %q: %w", h, err)
	}
	return out, nil
}
