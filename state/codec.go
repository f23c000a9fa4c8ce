package state

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

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
// change, to know which traversal last saw the item, and where its pending
// version is.
type itemRecord struct {
	hash      [16]byte
	traversal uint64
	// pending is the sequence number of the item's pending version in the
	// version log, 0 when none is pending.
	pending uint64
	flags   byte
	url     string
}

const itemRecordHeader = 16 + 8 + 8 + 1

func (r itemRecord) encode() []byte {
	b := make([]byte, itemRecordHeader, itemRecordHeader+len(r.url))
	copy(b, r.hash[:])
	binary.BigEndian.PutUint64(b[16:], r.traversal)
	binary.BigEndian.PutUint64(b[24:], r.pending)
	b[32] = r.flags
	return append(b, r.url...)
}

func decodeItemRecord(v []byte) (itemRecord, error) {
	if len(v) < itemRecordHeader {
		return itemRecord{}, fmt.Errorf("item record of %d bytes is too short", len(v))
	}
	var r itemRecord
	copy(r.hash[:], v)
	r.traversal = binary.BigEndian.Uint64(v[16:])
	r.pending = binary.BigEndian.Uint64(v[24:])
	r.flags = v[32]
	r.url = string(v[itemRecordHeader:])
	return r, nil
}

// Version log records: change byte, fetched-at nanoseconds, then the key,
// URL, hash and run id as length-prefixed strings, then the values' JSON.

var changeCodes = map[string]byte{ChangeNew: 1, ChangeChanged: 2, ChangeRemoved: 3}
var changeNames = [...]string{1: ChangeNew, 2: ChangeChanged, 3: ChangeRemoved}

func encodeVersion(v *Version) []byte {
	b := make([]byte, 0, 9+len(v.Key)+len(v.URL)+len(v.Hash)+len(v.RunID)+len(v.Values)+8)
	b = append(b, changeCodes[v.Change])
	b = binary.BigEndian.AppendUint64(b, uint64(v.FetchedAt.UnixNano()))
	for _, s := range []string{v.Key, v.URL, v.Hash, v.RunID} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return append(b, v.Values...)
}

func decodeVersion(seq uint64, b []byte) (Version, error) {
	v := Version{Seq: seq}
	if len(b) < 9 || b[0] == 0 || int(b[0]) >= len(changeNames) {
		return v, fmt.Errorf("version %d is malformed", seq)
	}
	v.Change = changeNames[b[0]]
	v.FetchedAt = time.Unix(0, int64(binary.BigEndian.Uint64(b[1:]))).UTC()
	b = b[9:]
	for _, dst := range []*string{&v.Key, &v.URL, &v.Hash, &v.RunID} {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return v, fmt.Errorf("version %d is truncated", seq)
		}
		*dst = string(b[k : k+int(n)])
		b = b[k+int(n):]
	}
	v.Values = append(json.RawMessage(nil), b...)
	return v, nil
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
