package extract

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"time"
)

// Type tags of the hash encoding; a list tag is its element tag | tagList.
const (
	tagNull    byte = 0x00
	tagString  byte = 0x01
	tagInt64   byte = 0x02
	tagFloat64 byte = 0x03
	tagBool    byte = 0x04
	tagTime    byte = 0x05
	tagList    byte = 0x10
	tagOther   byte = 0xff
)

// Hash returns a content hash of the item's values: 32 lowercase hex
// digits, the first 16 bytes of a SHA-256 over a canonical encoding of
// Values. URL, Key and Reasons do not take part (unless the key is also a
// field value). The encoding is positional, so the hash depends on the
// field order: reordering a Spec's fields changes every hash.
//
// Per value the encoding holds a type tag, a null flag and the data:
// strings length-prefixed, int64 and float64 as big-endian 64-bit words
// (-0 written as 0, every NaN alike), bools as one byte, times as Unix
// seconds plus nanoseconds (exact for every time.Time, unlike UnixNano),
// lists as a count and their elements. Equal values give equal hashes;
// any change of a value, its type, its null-ness or a list's order or
// length gives a different one.
func (it Item) Hash() string {
	var stack [512]byte
	b := binary.AppendUvarint(stack[:0], uint64(len(it.Values)))
	for _, v := range it.Values {
		b = appendValue(b, v)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// appendValue encodes one field value; types Item never holds are
// encoded by their Go syntax representation under tagOther.
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, tagNull, 1)
	case string:
		return appendString(append(b, tagString, 0), v)
	case int64:
		return binary.BigEndian.AppendUint64(append(b, tagInt64, 0), uint64(v))
	case float64:
		return appendFloat(append(b, tagFloat64, 0), v)
	case bool:
		return appendBool(append(b, tagBool, 0), v)
	case time.Time:
		return appendTime(append(b, tagTime, 0), v)
	case []string:
		return appendList(b, tagString, v, appendString)
	case []int64:
		return appendList(b, tagInt64, v, func(b []byte, e int64) []byte {
			return binary.BigEndian.AppendUint64(b, uint64(e))
		})
	case []float64:
		return appendList(b, tagFloat64, v, appendFloat)
	case []bool:
		return appendList(b, tagBool, v, appendBool)
	case []time.Time:
		return appendList(b, tagTime, v, appendTime)
	}
	return appendString(append(b, tagOther, 0), fmt.Sprintf("%T:%#v", v, v))
}

// appendList writes a list; a nil slice counts as null.
func appendList[T any](b []byte, tag byte, l []T, elem func([]byte, T) []byte) []byte {
	if l == nil {
		return append(b, tag|tagList, 1)
	}
	b = binary.AppendUvarint(append(b, tag|tagList, 0), uint64(len(l)))
	for _, e := range l {
		b = elem(b, e)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendFloat(b []byte, f float64) []byte {
	switch {
	case f == 0:
		f = 0
	case math.IsNaN(f):
		f = math.NaN()
	}
	return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendTime(b []byte, t time.Time) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(t.Unix()))
	return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
}
