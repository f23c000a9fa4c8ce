package state

import (
	"encoding/binary"
	"hash/fnv"

	bolt "go.etcd.io/bbolt"
)

// The seen set holds every URL a traversal queued, in two buckets. The
// URL index gives each URL its page number, keyed by a 128-bit FNV-1a hash
// of the URL (a fifth of a typical URL's size), with the traversal that
// first queued it; it is written once, when the URL is first queued (to
// its recent part, folded into the rest in hash order: see recent.go), and
// kept for as long as the set holds the URL. The marks bucket holds, by
// page number, the last traversal that queued the URL when a later one
// than the first did. A new traversal does not clear the set, which would
// read the whole bucket in one transaction and map it all; it counts only
// the marks carrying its own number.
//
// An item page a revisit policy skipped is marked seen too, and its mark
// adds the number of the last traversal that skipped it: its items were
// there in that traversal although their records, which carry the last
// traversal that fetched them, were not written (see itemWriter.lastSeen).
// A skip is a bit in the traversal's bitmap of skipped pages, which a
// page's mark reads with its entry here (see skipbits.go).
//
// Page numbers follow the order in which pages are found, which is about
// the order a crawl finishes them in and the order a listing page links
// them: the marks a commit writes, the bits it sets and the memos (see
// memo.go), which the page number keys too, land side by side in the file
// instead of one per page of a bucket keyed by hash. A rerun that skips a
// listing's item pages sets bits in a chunk of a bitmap, not a mark per
// page; a new URL costs an entry appended to the index's recent part.
// Format 8 kept the marks in the index's values (see upgrade.go).

var (
	// bucketURLs is the URL index: URL hash to page number and first
	// traversal.
	bucketURLs = []byte("urls")
	// bucketMarks holds the later seen marks by page number, but for
	// skips (see skipbits.go).
	bucketMarks = []byte("marks")
)

// keyPageSeq is the last page number given out.
var keyPageSeq = []byte("page_seq")

// marksFillPercent fills the marks bucket's pages: marks are appended in
// page number order and rewritten in place, growing by a byte or two at
// most.
const marksFillPercent = 0.9

// seenKey is the URL index's key for a URL.
func seenKey(url string) []byte {
	h := fnv.New128a()
	_, _ = h.Write([]byte(url))
	return h.Sum(make([]byte, 0, 16))
}

// seenMark is what the seen set holds of a URL: the last traversal that
// queued or skipped it, the last that skipped it (0: none), and its page
// number (0: none yet).
type seenMark struct{ traversal, skipped, page uint64 }

// seenSet reads and writes the seen set inside one transaction. A write
// transaction's has marks and meta open; a read transaction's opens the
// marks when it first looks one up (most readers only look page numbers
// up), and meta not at all.
type seenSet struct {
	tx          *bolt.Tx
	marks, meta *bolt.Bucket
	// urls is the URL index's runs (see runs.go), recent its recent part
	// (see recent.go).
	urls   *runsView
	recent *recentView
	// markGet looks marks up; skips are the bitmaps of skipped pages
	// (see skipbits.go).
	markGet *bucketGetter
	skips   *skipBits
}

// seenOf returns the seen set of a transaction. A read transaction that
// looks URLs up must be one of readSeen.
func (db *DB) seenOf(tx *bolt.Tx) seenSet {
	s := seenSet{tx: tx, recent: db.recentViewOf(tx), urls: db.urlRunsOf(tx)}
	if !tx.Writable() {
		s.markGet = &bucketGetter{tx: tx, name: bucketMarks, steps: true}
		s.skips = &skipBits{tx: tx}
		return s
	}
	w := db.writingOf(tx)
	if w.skips == nil {
		w.skips = &skipBits{tx: tx}
	}
	s.skips = w.skips
	s.marks, s.meta = tx.Bucket(bucketMarks), tx.Bucket(bucketMeta)
	s.markGet = db.getterOf(tx, s.marks, func(w *writingRecent) **bucketGetter { return &w.marks })
	s.marks.FillPercent = marksFillPercent
	return s
}

// index returns the URL index's entry of the URL with this key, from its
// recent part or the rest; page is 0 when the set has none.
func (s seenSet) index(key []byte) indexEntry {
	if e, ok := s.recent.get(key); ok {
		return e
	}
	page, first := decodeIndex(s.urls.get(key))
	return indexEntry{page: page, first: first}
}

// page returns the page number of the URL with this key, 0 when the set
// has none.
func (s seenSet) page(key []byte) uint64 { return s.index(key).page }

// get returns the mark of the URL with this key; ok is false when the set
// does not hold the URL.
func (s seenSet) get(key []byte) (m seenMark, ok bool) {
	e := s.index(key)
	if e.page == 0 {
		return seenMark{}, false
	}
	m.page = e.page
	m.traversal, m.skipped = s.markOf(e.page, e.first)
	return m, true
}

// markOf returns the traversals of the page's mark: its entry in the marks
// bucket, or the first traversal the index holds when it has none, with
// the skip bitmaps' (see withSkips).
func (s seenSet) markOf(page, first uint64) (traversal, skipped uint64) {
	traversal = first
	if v := s.markGet.get(pageKey(page)); v != nil {
		traversal, skipped = decodeMark(v)
	}
	return s.withSkips(page, traversal, skipped)
}

// withSkips returns a page's mark, whose entry in the marks bucket (or
// first traversal) says traversal and skipped, with the newest traversal
// whose skip bitmap holds the page: the greater of each.
func (s seenSet) withSkips(page, traversal, skipped uint64) (uint64, uint64) {
	if t := s.skips.latest(page); t != 0 {
		return max(traversal, t), max(skipped, t)
	}
	return traversal, skipped
}

// skip marks the page seen and skipped in the traversal, in the
// traversal's skip bitmap; flushSkips writes it before the transaction
// commits.
func (s seenSet) skip(page, traversal uint64) { s.skips.set(traversal, page) }

// flushSkips writes what skip set.
func (s seenSet) flushSkips() error { return s.skips.flush() }

// has reports whether the traversal already queued the URL with this key.
func (s seenSet) has(key []byte, traversal uint64) bool {
	m, _ := s.get(key)
	return m.traversal == traversal
}

// put writes the mark of the URL with this key. A mark without a page
// number is a URL the set does not hold yet: it gets the next number,
// which the URL index's recent part records with the mark's traversal;
// only a skip needs the marks bucket then. A known URL's mark goes to the marks bucket; one
// naming no traversal writes nothing.
func (s seenSet) put(key []byte, m *seenMark) error {
	if m.page == 0 {
		m.page = getUint(s.meta, keyPageSeq) + 1
		if err := putUint(s.meta, keyPageSeq, m.page); err != nil {
			return err
		}
		if err := s.recent.add(key, indexEntry{page: m.page, first: m.traversal}); err != nil {
			return err
		}
		if m.skipped == 0 {
			return nil
		}
	}
	if m.traversal == 0 && m.skipped == 0 {
		return nil
	}
	return s.marks.Put(pageKey(m.page), encodeMark(m.traversal, m.skipped))
}

// mark records that the traversal queued the URL with this key, keeping
// the last traversal that skipped it and its page number.
func (s seenSet) mark(key []byte, traversal uint64) error {
	m, _ := s.get(key)
	m.traversal = traversal
	return s.put(key, &m)
}

// remove drops the URL with this key, whose page number is page, from the
// set.
func (s seenSet) remove(key []byte, page uint64) error {
	if _, ok := s.recent.get(key); ok {
		if err := s.recent.remove(key, page); err != nil {
			return err
		}
	}
	if err := s.urls.delete(key); err != nil {
		return err
	}
	return s.marks.Delete(pageKey(page))
}

// pageKey is the key of a page number in the marks and memo buckets, and
// the URL index's value.
func pageKey(page uint64) []byte { return seqKey(page) }

// encodeMark lays a mark out as two uvarints: the traversal, then the
// skipping traversal (0 for none).
func encodeMark(traversal, skipped uint64) []byte {
	b := binary.AppendUvarint(make([]byte, 0, 2*binary.MaxVarintLen64), traversal)
	return binary.AppendUvarint(b, skipped)
}

// decodeMark reads what encodeMark wrote; a missing or short mark is no
// traversal.
func decodeMark(v []byte) (traversal, skipped uint64) {
	traversal, skipped, _ = parseMark(v)
	return traversal, skipped
}

// validMark reports whether v is what encodeMark writes.
func validMark(v []byte) bool {
	_, _, ok := parseMark(v)
	return ok
}

// parseMark reads a mark as far as it goes; ok says it was whole, with
// nothing after it.
func parseMark(v []byte) (traversal, skipped uint64, ok bool) {
	traversal, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, 0, false
	}
	skipped, k := binary.Uvarint(v[n:])
	if k <= 0 {
		return traversal, 0, false
	}
	return traversal, skipped, n+k == len(v)
}

// pageSet is a set of page numbers, a bit each: 125 KiB per million.
type pageSet []uint64

// has reports whether the set holds the page number.
func (s pageSet) has(page uint64) bool {
	i := page / 64
	return i < uint64(len(s)) && s[i]&(1<<(page%64)) != 0
}

// add puts a page number in the set, growing it as needed.
func (s *pageSet) add(page uint64) {
	i := page / 64
	if i >= uint64(len(*s)) {
		*s = append(*s, make(pageSet, i+1-uint64(len(*s)))...)
	}
	(*s)[i] |= 1 << (page % 64)
}

// queuedAfter returns the pages whose mark names a traversal after last,
// from one read of the marks and of the skip bitmaps.
func (s seenSet) queuedAfter(last uint64) (pageSet, error) {
	set := s.marked(func(t, _ uint64) bool { return t > last })
	return set, s.skips.addPages(&set, func(t uint64) bool { return t > last })
}

// skippedSince returns the pages a traversal from the given one on
// skipped, from one read of the marks and of the skip bitmaps.
func (s seenSet) skippedSince(traversal uint64) (pageSet, error) {
	set := s.marked(func(_, skipped uint64) bool { return skipped >= traversal })
	return set, s.skips.addPages(&set, func(t uint64) bool { return t >= traversal })
}

// marked reads the marks bucket once, in page order, and returns the
// pages whose entry keep accepts (the skip bitmaps are not read).
func (s seenSet) marked(keep func(traversal, skipped uint64) bool) pageSet {
	marks, meta := s.marks, s.meta
	if marks == nil { // a read transaction's
		marks, meta = s.tx.Bucket(bucketMarks), s.tx.Bucket(bucketMeta)
	}
	set := make(pageSet, 0, getUint(meta, keyPageSeq)/64+1)
	_ = marks.ForEach(func(k, v []byte) error {
		if keep(decodeMark(v)) {
			set.add(decodePage(k))
		}
		return nil
	})
	return set
}

// decodePage reads a page number key, 0 for one that is not 8 bytes.
func decodePage(v []byte) uint64 {
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// encodeIndex lays a URL index value out as the page number, 8 bytes,
// then the first traversal as a uvarint.
func encodeIndex(page, first uint64) []byte {
	return binary.AppendUvarint(binary.BigEndian.AppendUint64(make([]byte, 0, 8+binary.MaxVarintLen64), page), first)
}

// decodeIndex reads what encodeIndex wrote; page is 0 for a value that is
// not one.
func decodeIndex(v []byte) (page, first uint64) {
	if len(v) < 8 {
		return 0, 0
	}
	first, n := binary.Uvarint(v[8:])
	if n <= 0 || 8+n != len(v) {
		return 0, 0
	}
	return binary.BigEndian.Uint64(v), first
}
