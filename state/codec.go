package state

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/databrew/databrew-stage/crawl"
)

// Entry flags.
const (
	flagStart = 1 << iota
	flagPaged
	flagCard
	flagPrev
)

// encodeEntry lays an entry out as kind, flags, URL, then with flagCard a
// zero byte and the card digest, and with flagPrev a zero byte and the
// digest of the chain's page before it (a normalised URL and a digest
// hold no zero byte).
func encodeEntry(e crawl.Entry) []byte {
	b := make([]byte, 2, 4+len(e.URL)+len(e.Card)+len(e.Prev))
	b[0] = byte(e.Kind)
	if e.Start {
		b[1] |= flagStart
	}
	if e.Paged {
		b[1] |= flagPaged
	}
	b = append(b, e.URL...)
	if e.Card != "" {
		b[1] |= flagCard
		b = append(b, 0)
		b = append(b, e.Card...)
	}
	if e.Prev != "" {
		b[1] |= flagPrev
		b = append(b, 0)
		b = append(b, e.Prev...)
	}
	return b
}

func decodeEntry(v []byte) (crawl.Entry, error) {
	if len(v) < 2 {
		return crawl.Entry{}, fmt.Errorf("queue entry of %d bytes is too short", len(v))
	}
	e := crawl.Entry{Kind: crawl.Kind(v[0]), Start: v[1]&flagStart != 0, Paged: v[1]&flagPaged != 0, URL: string(v[2:])}
	for _, f := range [...]struct {
		flag byte
		to   *string
	}{{flagPrev, &e.Prev}, {flagCard, &e.Card}} { // from the end
		if v[1]&f.flag == 0 {
			continue
		}
		i := strings.LastIndexByte(e.URL, 0)
		if i < 0 {
			return crawl.Entry{}, errors.New("queue entry flags a field it does not hold")
		}
		e.URL, *f.to = e.URL[:i], e.URL[i+1:]
	}
	return e, nil
}

// itemRecord is what the items bucket keeps per key: enough to detect a
// change, to know which traversal last saw the item, where its pending
// version is, and which page holds the key.
type itemRecord struct {
	hash      [16]byte
	traversal uint64
	// pending is the sequence number of the item's pending version in the
	// version log, 0 when none is pending.
	pending uint64
	flags   byte
	// key is the item's key when the bucket holds it by hash (itemFullKey).
	key string
	// challenger is another page that yielded the key, and chTraversal the
	// last traversal it did (itemChallenger; see itemWriter.put).
	challenger  string
	chTraversal uint64
	// url is the page that holds the key: its values are the item's.
	url string
	// page is url's page number (itemPage), which lets a tombstone sweep
	// read the page's mark and memo without the URL index; 0 when the
	// record does not carry it (the index then gives it).
	page uint64
}

const itemRecordHeader = 16 + 8 + 8 + 1

// An item record is the header — hash, traversal, pending, flags — then,
// when the flags say so, the full key and the challenger as
// length-prefixed strings (the challenger after its traversal) and the
// page number as a uvarint, then the URL.
func (r itemRecord) encode() []byte {
	b := make([]byte, itemRecordHeader, itemRecordHeader+len(r.key)+len(r.challenger)+len(r.url)+24)
	copy(b, r.hash[:])
	binary.BigEndian.PutUint64(b[16:], r.traversal)
	binary.BigEndian.PutUint64(b[24:], r.pending)
	b[32] = r.flags
	if r.flags&itemFullKey != 0 {
		b = binary.AppendUvarint(b, uint64(len(r.key)))
		b = append(b, r.key...)
	}
	if r.flags&itemChallenger != 0 {
		b = binary.BigEndian.AppendUint64(b, r.chTraversal)
		b = binary.AppendUvarint(b, uint64(len(r.challenger)))
		b = append(b, r.challenger...)
	}
	if r.flags&itemPage != 0 {
		b = binary.AppendUvarint(b, r.page)
	}
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
	b := v[itemRecordHeader:]
	var ok bool
	if r.flags&itemFullKey != 0 {
		if r.key, b, ok = cutString(b); !ok {
			return itemRecord{}, errors.New("item record's key is truncated")
		}
	}
	if r.flags&itemChallenger != 0 {
		if len(b) < 8 {
			return itemRecord{}, errors.New("item record's challenger is truncated")
		}
		r.chTraversal = binary.BigEndian.Uint64(b)
		if r.challenger, b, ok = cutString(b[8:]); !ok {
			return itemRecord{}, errors.New("item record's challenger is truncated")
		}
	}
	if r.flags&itemPage != 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n == 0 {
			return itemRecord{}, errors.New("item record's page number is truncated")
		}
		r.page, b = n, b[k:]
	}
	r.url = string(b)
	return r, nil
}

// cutString reads a length-prefixed string off the front of b.
func cutString(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}

// The items and failed buckets hold a key (an item key, a URL) as itself
// when it is short, and by its SHA-256 behind a zero byte otherwise: bbolt
// refuses keys over 32 KiB, and long keys make every page of the tree hold
// fewer. No key held as itself starts with a zero byte or is empty, so the
// two forms never meet.
const maxPlainKey = 512

// storedKey is the bucket key for k, and whether it is a hash.
func storedKey(k string) ([]byte, bool) {
	if k != "" && len(k) <= maxPlainKey && k[0] != 0 {
		return []byte(k), false
	}
	sum := sha256.Sum256([]byte(k))
	return append([]byte{0}, sum[:]...), true
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
		var ok bool
		if *dst, b, ok = cutString(b); !ok {
			return v, fmt.Errorf("version %d is truncated", seq)
		}
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
