package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// The memos bucket keeps a memo per page (crawl.PageMemo), by the page's
// number (see seen.go): the validators of its last answer read whole, and
// the links and items it yielded, which a 304 Not Modified yields again.
// Format 7 kept them by seen key, in the pages bucket (see upgrade.go).

// bucketMemos holds the page memos by page number.
var bucketMemos = []byte("memos")

// memoFillPercent fills the memo bucket's pages: memos are mostly appended
// in page number order, and rewritten in place at about the same size.
const memoFillPercent = 0.9

// memoVersion starts every encoded memo.
const memoVersion = 1

// Memo returns the memo of the page at url, nil when the state has none.
func (db *DB) Memo(url string) (*crawl.PageMemo, error) {
	ms, err := db.Memos([]string{url})
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// Memos returns the memos of the pages at urls, in one read transaction;
// nil for a page the state has none of.
func (db *DB) Memos(urls []string) ([]*crawl.PageMemo, error) {
	out := make([]*crawl.PageMemo, len(urls))
	err := db.eachMemo(urls, func(i int, url string, v []byte) error {
		got, err := decodeMemo(v)
		if err != nil {
			return fmt.Errorf("page memo of %s: %w", url, err)
		}
		if got.url == url { // another URL with the same 128-bit hash is no memo
			out[i] = &got.PageMemo
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Dues returns what the memos of the pages at urls say of when they are
// due (see crawl.Store), in one read transaction. It reads each memo in
// place, as memoListsItem does: a rerun asks it of every item page a
// listing links to, and would otherwise decode every link and item key of
// each memo only to drop them.
func (db *DB) Dues(urls []string) ([]crawl.PageDue, error) {
	out := make([]crawl.PageDue, len(urls))
	var tag string // the tag of the memo before: most share it
	err := db.eachMemo(urls, func(i int, url string, v []byte) error {
		d, ok, err := decodeDue(v, url, tag)
		if err != nil {
			return fmt.Errorf("page memo of %s: %w", url, err)
		}
		if ok {
			out[i], tag = d, d.Tag
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachMemo calls fn with the encoded memo of each page at urls that has
// one, in one read transaction.
func (db *DB) eachMemo(urls []string, fn func(i int, url string, v []byte) error) error {
	err := db.readSeen(func(tx *bolt.Tx) error {
		memos := db.pageMemosOf(tx, tx.Bucket(bucketMemos))
		for i, url := range urls {
			if v := memos.of(memos.seen.page(seenKey(url))); v != nil {
				if err := fn(i, url, v); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read page memos in %s: %w", db.dir, err)
	}
	return nil
}

// pageMemos finds and writes page memos inside one transaction: the seen
// set's URL index gives a page's number, the memo bucket holds its memo
// under it.
type pageMemos struct {
	seen  seenSet
	memos *bolt.Bucket
	// memoGet looks memos up.
	memoGet *bucketGetter
}

// writeMemos returns the memo access of a write transaction.
func (db *DB) writeMemos(tx *bolt.Tx) pageMemos {
	memos := tx.Bucket(bucketMemos)
	memos.FillPercent = memoFillPercent
	return db.pageMemosOf(tx, memos)
}

// pageMemosOf returns the memo access of tx, whose memo bucket is memos.
func (db *DB) pageMemosOf(tx *bolt.Tx, memos *bolt.Bucket) pageMemos {
	return pageMemos{seen: db.seenOf(tx), memos: memos,
		memoGet: db.getterOf(tx, memos, func(w *writingRecent) **bucketGetter { return &w.memos })}
}

// of returns the encoded memo of the page with this number, nil when
// there is none.
func (p pageMemos) of(page uint64) []byte {
	if page == 0 {
		return nil
	}
	return p.memoGet.get(memoKey(page))
}

// putByKey stores the encoded memo of the page whose URL hash is k,
// giving the page a number first if it has none: one the seen set does
// not hold (it is then in the URL index with no mark).
func (p pageMemos) putByKey(k, v []byte) error { return p.putAt(k, p.seen.page(k), v) }

// putAt stores the encoded memo of the page whose URL hash is k and whose
// number is page (0: none yet, given here).
func (p pageMemos) putAt(k []byte, page uint64, v []byte) error {
	if page == 0 {
		m := seenMark{}
		if err := p.seen.put(k, &m); err != nil {
			return err
		}
		page = m.page
	}
	return p.memos.Put(memoKey(page), v)
}

// remove removes the memo of the page at url, if any.
func (p pageMemos) remove(url string) error { return p.removeAt(p.seen.page(seenKey(url))) }

// removeAt removes the memo of the page with this number, if any.
func (p pageMemos) removeAt(page uint64) error {
	if page == 0 {
		return nil
	}
	return p.memos.Delete(memoKey(page))
}

// memoKey is the memo bucket's key of a page number.
func memoKey(page uint64) []byte { return pageKey(page) }

// putMemo replaces or removes the memo of a finished page as its Done
// says; keep false removes it whatever the Done says. at is the page's
// URL hash and number (0: none yet).
func putMemo(memos pageMemos, d *crawl.Done, at pageAt, key []byte, keep bool) error {
	switch {
	case !keep:
		return memos.removeAt(at.page)
	case d.Memo != nil:
		return memos.putAt(key, at.page, encodeMemo(d.URL, d.Memo))
	case d.ForgetMemo:
		return memos.removeAt(at.page)
	}
	return nil
}

// storedMemo is a memo with the URL it belongs to.
type storedMemo struct {
	url string
	crawl.PageMemo
}

// encodeMemo lays a memo out as its version, then length-prefixed strings:
// the URL, the tag, the ETag, the Last-Modified date; the links, each an
// encoded entry and its card; the items, each a key, URL and hash; each
// list after its length; then the interval in nanoseconds and the due time
// in Unix nanoseconds (0 for none), as varints, and the card; then, for a
// chain page, what it held plus one as a varint (a memo that ends before
// it has no chain mark).
func encodeMemo(url string, m *crawl.PageMemo) []byte {
	n := 1 + 9*binary.MaxVarintLen64 + len(url) + len(m.Tag) + len(m.ETag) + len(m.LastModified) + len(m.Card)
	for _, l := range m.Links {
		n += 2*binary.MaxVarintLen64 + 2 + len(l.URL) + len(l.Card)
	}
	for _, it := range m.Items {
		n += 3*binary.MaxVarintLen64 + len(it.Key) + len(it.URL) + len(it.Hash)
	}
	b := make([]byte, 0, n)
	b = append(b, memoVersion)
	for _, s := range []string{url, m.Tag, m.ETag, m.LastModified} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(m.Links)))
	for _, l := range m.Links {
		e := encodeEntry(l)
		b = binary.AppendUvarint(b, uint64(len(e)))
		b = append(b, e...)
		b = appendString(b, l.Card)
	}
	b = binary.AppendUvarint(b, uint64(len(m.Items)))
	for _, it := range m.Items {
		b = appendString(b, it.Key)
		b = appendString(b, it.URL)
		b = appendString(b, it.Hash)
	}
	b = binary.AppendVarint(b, int64(m.Interval))
	var due int64
	if !m.Due.IsZero() {
		due = m.Due.UnixNano()
	}
	b = binary.AppendVarint(b, due)
	b = appendString(b, m.Card)
	if m.Chain != nil {
		b = binary.AppendUvarint(b, uint64(max(m.Chain.Held, 0))+1)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errShortMemo = errors.New("page memo is cut short")

// decodeMemo reads what encodeMemo wrote.
func decodeMemo(v []byte) (storedMemo, error) {
	var m storedMemo
	if len(v) == 0 || v[0] != memoVersion {
		return m, fmt.Errorf("page memo of %d bytes has no version %d", len(v), memoVersion)
	}
	r := memoReader{b: v[1:]}
	m.url, m.Tag, m.ETag, m.LastModified = r.string(), r.string(), r.string(), r.string()
	links := r.count()
	if links > 0 {
		m.Links = make([]crawl.Entry, 0, links)
	}
	for i := uint64(0); i < links && r.err == nil; i++ {
		e, err := decodeEntry(r.bytes())
		if err != nil && r.err == nil {
			r.err = err
		}
		e.Card = r.string()
		m.Links = append(m.Links, e)
	}
	items := r.count()
	if items > 0 {
		m.Items = make([]crawl.ItemRef, 0, items)
	}
	for i := uint64(0); i < items && r.err == nil; i++ {
		m.Items = append(m.Items, crawl.ItemRef{Key: r.string(), URL: r.string(), Hash: r.string()})
	}
	m.Interval = time.Duration(r.varint())
	if due := r.varint(); due != 0 {
		m.Due = time.Unix(0, due).UTC()
	}
	m.Card = r.string()
	if r.err == nil && len(r.b) > 0 {
		if held := r.uvarint(); held > 0 {
			m.Chain = &crawl.ChainMark{Held: int(held - 1)}
		} else if r.err == nil {
			r.err = errors.New("page memo has a zero byte after its end")
		}
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("page memo has %d bytes after its end", len(r.b))
	}
	return m, r.err
}

// decodeDue reads what a revisit policy needs of an encoded memo (see
// crawl.PageDue), in place: ok is false for a memo of another URL with the
// same 128-bit hash, which is no memo of url. tag is a tag read before:
// the PageDue shares it when the memo's is the same.
func decodeDue(v []byte, url, tag string) (d crawl.PageDue, ok bool, err error) {
	if len(v) == 0 || v[0] != memoVersion {
		return d, false, fmt.Errorf("page memo of %d bytes has no version %d", len(v), memoVersion)
	}
	r := memoReader{b: v[1:]}
	owner := r.bytes()
	if b := r.bytes(); string(b) == tag {
		d.Tag = tag
	} else {
		d.Tag = string(b)
	}
	r.bytes() // ETag
	r.bytes() // Last-Modified
	for n := r.count(); n > 0 && r.err == nil; n-- {
		r.bytes() // the link's entry
		r.bytes() // its card
	}
	items := r.count()
	for n := items; n > 0 && r.err == nil; n-- {
		r.bytes() // key
		r.bytes() // URL
		r.bytes() // hash
	}
	d.Items = int(items)
	r.varint() // interval
	if due := r.varint(); due != 0 {
		d.Due = time.Unix(0, due).UTC()
	}
	d.Card = r.string()
	if r.err == nil && len(r.b) > 0 {
		if held := r.uvarint(); held == 0 && r.err == nil {
			r.err = errors.New("page memo has a zero byte after its end")
		}
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("page memo has %d bytes after its end", len(r.b))
	}
	if r.err != nil {
		return crawl.PageDue{}, false, r.err
	}
	d.Found = true
	return d, string(owner) == url, nil
}

// memoReader reads the parts of an encoded memo, keeping the first error.
type memoReader struct {
	b   []byte
	err error
}

func (r *memoReader) count() uint64 {
	if r.err != nil {
		return 0
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)) { // every element takes a byte at least
		r.err = errShortMemo
		return 0
	}
	r.b = r.b[k:]
	return n
}

func (r *memoReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err = errShortMemo
		return 0
	}
	r.b = r.b[k:]
	return n
}

func (r *memoReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	n, k := binary.Varint(r.b)
	if k <= 0 {
		r.err = errShortMemo
		return 0
	}
	r.b = r.b[k:]
	return n
}

// bytes reads a length-prefixed string without copying it.
func (r *memoReader) bytes() []byte {
	n := r.count()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errShortMemo
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

// memoListsItem reports whether an encoded memo belongs to url and lists
// the item key, reading it in place: tombstoning asks it of every item on
// a skipped page.
func memoListsItem[K string | []byte](v []byte, url string, key K) bool {
	if len(v) == 0 || v[0] != memoVersion {
		return false
	}
	r := memoReader{b: v[1:]}
	if string(r.bytes()) != url {
		return false
	}
	r.bytes() // tag
	r.bytes() // ETag
	r.bytes() // Last-Modified
	for n := r.count(); n > 0 && r.err == nil; n-- {
		r.bytes() // the link's entry
		r.bytes() // its card
	}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		k := r.bytes()
		r.bytes() // URL
		r.bytes() // hash
		if r.err == nil && string(k) == string(key) {
			return true
		}
	}
	return false
}

func (r *memoReader) string() string {
	n := r.count()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.err = errShortMemo
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
