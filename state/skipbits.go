package state

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	bolt "go.etcd.io/bbolt"
)

// The pages a traversal skipped are kept as a bitmap of page numbers per
// traversal, in the skips bucket, not as a mark per page in the marks
// bucket: an unchanged rerun skips every item page, and a mark each was a
// bbolt Put each, a fifth of such a rerun's writer. A bitmap is cut in
// chunks of skipChunkPages pages, keyed by the traversal and the chunk's
// number, so a commit rewrites the few chunks its pages fall in.
//
// A page's mark is the greater, part by part, of its entry in the marks
// bucket (or the first traversal the URL index holds, when it has none)
// and (t, t) for the newest traversal t whose bitmap holds it: a skip
// made the page seen and skipped in t. A bit is set only for a page the
// traversal had not marked yet, as a mark was written only then.
//
// The bucket holds the bitmaps of the current traversal and the one
// before, no more: when a traversal begins, the older bitmaps are folded
// into the marks bucket (see fold) and deleted. Folding writes a mark
// only for a page the newer bitmap does not hold, one the traversal
// before did not skip again: on a site that did not change, none. The
// sweep of a traversal reads its own bitmap whole (see skippedSince).
//
// Page numbers are never given out again while the set holds the page,
// and forget, the only caller of remove, drops only pages no traversal
// after the fourth before the current one marked, which no bitmap the
// bucket keeps can hold; a repair counts the bitmaps' pages among those
// given out (see maxSeenMarks).

// bucketSkips holds the bitmaps of the pages a traversal skipped.
var bucketSkips = []byte("skips")

const (
	// skipChunkPages is how many page numbers a chunk of a bitmap covers.
	skipChunkPages = 4096
	// skipChunkBytes is a chunk's size: a bit a page, page p of the chunk
	// at bit p%8 of byte p/8.
	skipChunkBytes = skipChunkPages / 8
)

// skipKey is the key of a bitmap's chunk: the traversal, then the
// chunk's number, 8 bytes each, big-endian.
func skipKey(traversal, chunk uint64) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 16), traversal)
	return binary.BigEndian.AppendUint64(k, chunk)
}

// decodeSkipKey reads what skipKey wrote; ok is false for a key that is
// not 16 bytes.
func decodeSkipKey(k []byte) (traversal, chunk uint64, ok bool) {
	if len(k) != 16 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:]), true
}

// chunkHas reports whether a chunk holds the page at offset i.
func chunkHas(chunk []byte, i uint64) bool {
	return i/8 < uint64(len(chunk)) && chunk[i/8]&(1<<(i%8)) != 0
}

// eachChunkPage calls fn with each page number a chunk holds, in order.
func eachChunkPage(chunk []byte, n uint64, fn func(page uint64)) {
	for j, b := range chunk {
		for b != 0 {
			i := bits.TrailingZeros8(b)
			b &^= 1 << i
			fn(n*skipChunkPages + uint64(j)*8 + uint64(i))
		}
	}
}

// skipBits reads and writes the bitmaps inside one transaction. A write
// transaction has one (see writingRecent), so that what a commit set is
// what every reader in it sees; set keeps the chunks it changed until
// flush writes them.
type skipBits struct {
	tx     *bolt.Tx
	bucket *bolt.Bucket
	// traversals are those the bucket holds bitmaps of, newest first,
	// read at the first lookup (loaded).
	traversals []uint64
	loaded     bool
	// last is the chunk a lookup last read of each of traversals, by
	// index.
	last []readChunk
	// dirty are the chunks set changed and flush has not written, of the
	// traversal dirtyOf.
	dirty   map[uint64][]byte
	dirtyOf uint64
}

// readChunk is a chunk a lookup read: its number, and its bytes (nil for
// one the bitmap does not have).
type readChunk struct {
	n     uint64
	bytes []byte
	ok    bool
}

// load reads which traversals the bucket holds bitmaps of.
func (s *skipBits) load() {
	if s.loaded {
		return
	}
	s.loaded = true
	if s.bucket = s.tx.Bucket(bucketSkips); s.bucket == nil {
		return
	}
	c := s.bucket.Cursor()
	for k, _ := c.First(); k != nil; {
		t, _, ok := decodeSkipKey(k)
		if !ok {
			k, _ = c.Next()
			continue
		}
		s.traversals = append([]uint64{t}, s.traversals...)
		k, _ = c.Seek(skipKey(t+1, 0))
	}
	s.last = make([]readChunk, len(s.traversals))
}

// chunk returns the bytes of chunk n of traversal t's bitmap, nil when it
// has none; i is t's index in traversals.
func (s *skipBits) chunk(i int, n uint64) []byte {
	t := s.traversals[i]
	if s.dirty != nil && t == s.dirtyOf {
		if b, ok := s.dirty[n]; ok {
			return b
		}
	}
	if r := s.last[i]; r.ok && r.n == n {
		return r.bytes
	}
	if s.bucket == nil {
		return nil
	}
	b := s.bucket.Get(skipKey(t, n))
	s.last[i] = readChunk{n: n, bytes: b, ok: true}
	return b
}

// latest returns the newest traversal whose bitmap holds the page, 0 when
// none does.
func (s *skipBits) latest(page uint64) uint64 {
	s.load()
	n, i := page/skipChunkPages, page%skipChunkPages
	for j := range s.traversals {
		if chunkHas(s.chunk(j, n), i) {
			return s.traversals[j]
		}
	}
	return 0
}

// set puts the page in the traversal's bitmap, which must be the newest
// the bucket holds or a new one; flush writes it.
func (s *skipBits) set(traversal, page uint64) {
	s.load()
	if len(s.traversals) == 0 || s.traversals[0] < traversal {
		s.traversals = append([]uint64{traversal}, s.traversals...)
		s.last = append([]readChunk{{}}, s.last...)
	}
	if s.dirty == nil {
		s.dirty, s.dirtyOf = map[uint64][]byte{}, traversal
	}
	n, i := page/skipChunkPages, page%skipChunkPages
	b, ok := s.dirty[n]
	if !ok {
		b = make([]byte, skipChunkBytes)
		if s.bucket != nil {
			copy(b, s.bucket.Get(skipKey(traversal, n)))
		}
		s.dirty[n] = b
	}
	b[i/8] |= 1 << (i % 8)
}

// flush writes the chunks set changed.
func (s *skipBits) flush() error {
	if len(s.dirty) == 0 {
		return nil
	}
	if s.bucket == nil {
		b, err := s.tx.CreateBucketIfNotExists(bucketSkips)
		if err != nil {
			return err
		}
		s.bucket = b
	}
	for n, b := range s.dirty {
		if err := s.bucket.Put(skipKey(s.dirtyOf, n), b); err != nil {
			return err
		}
	}
	s.dirty = nil
	// What a lookup read before the Puts may have moved.
	clear(s.last)
	return nil
}

// eachChunk calls fn with each chunk of traversal t's bitmap, in order,
// after writing what set changed.
func (s *skipBits) eachChunk(t uint64, fn func(k []byte, n uint64, chunk []byte)) error {
	if err := s.flush(); err != nil {
		return err
	}
	s.load()
	if s.bucket == nil {
		return nil
	}
	c := s.bucket.Cursor()
	for k, v := c.Seek(skipKey(t, 0)); k != nil; k, v = c.Next() {
		kt, n, ok := decodeSkipKey(k)
		if !ok || kt != t {
			break
		}
		fn(k, n, v)
	}
	return nil
}

// addPages adds to set the pages of the bitmaps of the traversals keep
// accepts.
func (s *skipBits) addPages(set *pageSet, keep func(traversal uint64) bool) error {
	s.load()
	for _, t := range s.traversals {
		if !keep(t) {
			continue
		}
		err := s.eachChunk(t, func(_ []byte, n uint64, chunk []byte) { eachChunkPage(chunk, n, set.add) })
		if err != nil {
			return err
		}
	}
	return nil
}

// fold folds the bitmaps of the traversals before traversal-1 into the
// marks bucket and deletes them, when traversal begins: a page of such a
// bitmap that no newer one holds gets the bitmap's traversal as its
// mark's, and as its skipping traversal, where its mark is older.
func (s *skipBits) fold(traversal uint64, marks *bolt.Bucket) error {
	s.load()
	for j := len(s.traversals) - 1; j >= 0; j-- {
		t := s.traversals[j]
		if t+1 >= traversal {
			break
		}
		var keys [][]byte
		var pages []uint64
		err := s.eachChunk(t, func(k []byte, n uint64, chunk []byte) {
			keys = append(keys, bytes.Clone(k))
			eachChunkPage(chunk, n, func(p uint64) { pages = append(pages, p) })
		})
		if err != nil {
			return err
		}
		for _, p := range pages {
			if s.newerHas(j, p) {
				continue
			}
			tr, sk := decodeMark(marks.Get(pageKey(p)))
			if tr >= t && sk >= t {
				continue
			}
			if err := marks.Put(pageKey(p), encodeMark(max(tr, t), max(sk, t))); err != nil {
				return err
			}
		}
		for _, k := range keys {
			if err := s.bucket.Delete(k); err != nil {
				return err
			}
		}
		s.traversals, s.last = s.traversals[:j], s.last[:j]
		clear(s.last)
	}
	return nil
}

// newerHas reports whether the bitmap of a traversal newer than the one
// at index j holds the page.
func (s *skipBits) newerHas(j int, page uint64) bool {
	n, i := page/skipChunkPages, page%skipChunkPages
	for k := range j {
		if chunkHas(s.chunk(k, n), i) {
			return true
		}
	}
	return false
}
