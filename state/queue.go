package state

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// Read returns up to limit queued entries with Seq > after, in order.
func (db *DB) Read(after uint64, limit int) ([]crawl.Queued, error) {
	out := make([]crawl.Queued, 0, limit)
	err := db.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketQueue).Cursor()
		for k, v := c.Seek(seqKey(after + 1)); k != nil && len(out) < limit; k, v = c.Next() {
			e, err := decodeEntry(v)
			if err != nil {
				return err
			}
			out = append(out, crawl.Queued{Seq: binary.BigEndian.Uint64(k), Entry: e})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read queue in %s: %w", db.dir, err)
	}
	return out, nil
}

// Seen reports, for each URL, whether the traversal already has it.
func (db *DB) Seen(urls []string) ([]bool, error) {
	seen, _, err := db.SeenFresh(urls)
	return seen, err
}

// SeenFresh is Seen, and says for each URL whether the state has never
// held it: it has no page number, so no memo (crawl.FreshTeller).
func (db *DB) SeenFresh(urls []string) (seen, fresh []bool, err error) {
	seen, fresh = make([]bool, len(urls)), make([]bool, len(urls))
	err = db.readSeen(func(tx *bolt.Tx) error {
		set := db.seenOf(tx)
		for i, u := range urls {
			m, ok := set.get(seenKey(u))
			seen[i], fresh[i] = m.traversal == db.traversal, !ok
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read seen URLs in %s: %w", db.dir, err)
	}
	return seen, fresh, nil
}

// Commit applies a batch in order: new URLs join the queue and the seen
// set, then finished URLs leave the queue (failed ones for the failed set)
// and their items are stored with change detection, then URLs that failed
// during an outage go back from the failed set to the queue. It takes one
// transaction unless that would hold more changed pages than the write
// budget allows; then it goes on in more. A crash keeps a prefix of the
// batch, in which every new URL is queued before any URL of the batch is
// finished, so no page's links are lost.
func (db *DB) Commit(b *crawl.Batch) (crawl.Committed, error) {
	var total crawl.Committed
	c := batchCursor{Batch: b}
	first := true
	err := db.commitInParts(func(tx *bolt.Tx) (full, done bool, err error) {
		if first {
			first = false
			meta := tx.Bucket(bucketMeta)
			if b.NextSeq > getUint(meta, keySeq) {
				if err := putUint(meta, keySeq, b.NextSeq); err != nil {
					return false, false, err
				}
			}
		}
		var counts crawl.Committed
		full, err = db.commitPart(tx, &c, &counts)
		total = total.Add(counts)
		return full, c.done(), err
	})
	if err == nil {
		err = db.foldIfFull()
	}
	if err == nil {
		err = db.foldItemsIfFull()
	}
	if err != nil {
		return crawl.Committed{}, fmt.Errorf("commit batch to %s: %w", db.dir, err)
	}
	return total, nil
}

// batchCursor is how far Commit got through a batch.
type batchCursor struct {
	*crawl.Batch
	// keys holds each Enqueue entry's seen key (see seenKeys).
	keys [][]byte
	// marks are the seen marks the skipped pages get, by page number,
	// once the first transaction that reaches them has read them (see
	// planSkips); skipsPlanned says it has.
	marks        []skipMark
	skipsPlanned bool

	enqueued, skipped, finished, retried int
}

func (c *batchCursor) done() bool {
	return c.enqueued == len(c.Enqueue) && (len(c.Skipped) == 0 || c.skipsPlanned && c.skipped == len(c.marks)) && c.finished == len(c.Done) && c.retried == len(c.Retry)
}

// seenKeys computes the seen keys of the new URLs. They are marked seen
// in the batch's order, which is the order the pages that link them did:
// a URL the set does not hold gets the next page number, so the URL
// index's recent part, keyed by page number, is appended to, and the item
// pages a listing links get numbers in a row. Their memos and marks, which
// the page number keys too, land side by side, and a rerun that reads a
// listing's item memos steps from one to the next (see bucketGetter).
// (Marked in seen key order, as they were while the seen set was keyed by
// URL hash, a batch's pages got numbers in hash order: a listing's item
// pages were spread over those of the whole batch.)
func (c *batchCursor) seenKeys() {
	c.keys = make([][]byte, len(c.Enqueue))
	for i, q := range c.Enqueue {
		c.keys[i] = seenKey(q.URL)
	}
}

// skipMark is the mark a skipped page gets: the page, by its index in
// Batch.Skipped, and its seen key.
type skipMark struct {
	skip int
	key  []byte
	mark seenMark
	// first is the first traversal the URL index holds for the page: its
	// mark's traversal when the marks bucket has none.
	first uint64
}

// planSkips reads the marks of the skipped pages, drops those the
// traversal already marked (and a page skipped twice: the first of its
// skips is kept), and lists the marks to write by page number: each is a
// bit of the traversal's skip bitmap (see skipbits.go), whose chunks the
// page numbers key. A page the set does not hold yet (0) gets the next
// number when marked, and a mark in the marks bucket, so it goes last,
// in key order.
//
// The marks are read in page order, each a step of one cursor from the
// one before (no mark is written while they are read).
func (c *batchCursor) planSkips(seen seenSet, traversal uint64) {
	marks := make([]skipMark, len(c.Skipped))
	var pageless []skipMark
	paged := 0
	for i, sk := range c.Skipped {
		key := seenKey(sk.URL)
		e := seen.index(key)
		s := skipMark{skip: i, key: key, mark: seenMark{page: e.page}, first: e.first}
		if e.page == 0 {
			pageless = append(pageless, s)
			continue
		}
		marks[paged] = s
		paged++
	}
	marks = sortedByPage(marks[:paged], func(s *skipMark) uint64 { return s.mark.page })
	// A page number is one URL's: the same page is the same page skipped
	// again.
	marks = slices.CompactFunc(marks, func(a, b skipMark) bool { return a.mark.page == b.mark.page })
	slices.SortStableFunc(pageless, func(a, b skipMark) int { return bytes.Compare(a.key, b.key) })
	pageless = slices.CompactFunc(pageless, func(a, b skipMark) bool { return bytes.Equal(a.key, b.key) })
	get := &bucketGetter{b: seen.marks, steps: true}
	c.marks = marks[:0]
	for _, s := range marks {
		s.mark.traversal, s.mark.skipped = s.first, 0
		if v := get.get(pageKey(s.mark.page)); v != nil {
			s.mark.traversal, s.mark.skipped = decodeMark(v)
		}
		s.mark.traversal, s.mark.skipped = seen.withSkips(s.mark.page, s.mark.traversal, s.mark.skipped)
		if s.mark.traversal == traversal {
			continue
		}
		s.mark.traversal, s.mark.skipped = traversal, traversal
		c.marks = append(c.marks, s)
	}
	for _, s := range pageless {
		s.mark.traversal, s.mark.skipped = traversal, traversal
		c.marks = append(c.marks, s)
	}
	c.skipsPlanned = true
}

// sortedByPage returns xs sorted by the page numbers page gives, those of
// the same page in the order they had. Sorting structs whose pages came
// in about random order spent most of its time moving them: page numbers
// and places are packed into one integer each when they fit, those
// sorted, and the structs laid out in that order once.
func sortedByPage[T any](xs []T, page func(*T) uint64) []T {
	const placeBits = 24
	fits := len(xs) < 1<<placeBits
	for i := 0; fits && i < len(xs); i++ {
		fits = page(&xs[i]) < 1<<(64-placeBits)
	}
	if !fits {
		slices.SortStableFunc(xs, func(a, b T) int { return cmp.Compare(page(&a), page(&b)) })
		return xs
	}
	packed := make([]uint64, len(xs))
	for i := range xs {
		packed[i] = page(&xs[i])<<placeBits | uint64(i)
	}
	slices.Sort(packed)
	out := make([]T, len(xs))
	for i, p := range packed {
		out[i] = xs[p&(1<<placeBits-1)]
	}
	return out
}

// commitPart applies the batch from the cursor on, advancing it, until the
// batch is done or the write budget is spent (full).
func (db *DB) commitPart(tx *bolt.Tx, c *batchCursor, counts *crawl.Committed) (full bool, err error) {
	queue, seen, failed := tx.Bucket(bucketQueue), db.seenOf(tx), tx.Bucket(bucketFailed)
	if c.keys == nil {
		c.seenKeys()
	}
	// New URLs are marked seen and queued in the batch's order, both in
	// the same transaction.
	var fresh []int
	for c.enqueued < len(c.Enqueue) && !full {
		i := c.enqueued
		c.enqueued++
		full = db.commitFull(tx)
		// One read serves the check and the mark, which keeps the
		// traversal that last skipped the page.
		m, _ := seen.get(c.keys[i])
		if m.traversal == db.traversal {
			continue
		}
		m.traversal = db.traversal
		if err := seen.put(c.keys[i], &m); err != nil {
			return full, err
		}
		fresh = append(fresh, i)
	}
	slices.Sort(fresh)
	for _, i := range fresh {
		q := c.Enqueue[i]
		if err := queue.Put(seqKey(q.Seq), encodeEntry(q.Entry)); err != nil {
			return full, err
		}
	}
	items := db.newItemWriter(tx, db.traversal)
	if !c.skipsPlanned && len(c.Skipped) > 0 && !full {
		c.planSkips(seen, db.traversal)
	}
	for c.skipped < len(c.marks) && !full {
		s := &c.marks[c.skipped]
		c.skipped++
		if s.mark.page != 0 {
			seen.skip(s.mark.page, db.traversal)
		} else if err := seen.put(s.key, &s.mark); err != nil {
			return full, err
		}
		counts.Skipped += c.Skipped[s.skip].Items
		full = db.commitFull(tx)
	}
	if err := seen.flushSkips(); err != nil {
		return full, err
	}
	for c.finished < len(c.Done) && !full {
		d := &c.Done[c.finished]
		c.finished++
		// One read of the URL index serves the page's memo and its items'
		// records.
		urlKey := seenKey(d.URL)
		items.at = pageAt{url: d.URL, page: seen.page(urlKey)}
		if err := queue.Delete(seqKey(d.Seq)); err != nil {
			return full, err
		}
		failedKey, _ := storedKey(d.URL)
		if d.Failed {
			err = failed.Put(failedKey, encodeEntry(d.Entry))
		} else {
			err = failed.Delete(failedKey)
		}
		if err != nil {
			return full, err
		}
		duplicates := counts.DuplicateKeys
		for _, i := range itemOrder(d.Items) {
			if err := items.put(&d.Items[i], counts); err != nil {
				return full, err
			}
		}
		stands := true
		for _, ref := range d.Touched {
			ok, err := items.touch(ref, counts)
			if err != nil {
				return full, err
			}
			stands = stands && ok
		}
		if !d.Failed {
			// A page that yields a key another page holds keeps no memo:
			// a 304 could not tell a duplicate from a takeover.
			if err := putMemo(items.memos, d, items.at, urlKey, stands && counts.DuplicateKeys == duplicates); err != nil {
				return full, err
			}
		}
		full = db.commitFull(tx)
	}
	for c.retried < len(c.Retry) && !full {
		q := c.Retry[c.retried]
		c.retried++
		full = db.commitFull(tx)
		failedKey, _ := storedKey(q.URL)
		if err := failed.Delete(failedKey); err != nil {
			return full, err
		}
		if err := queue.Put(seqKey(q.Seq), encodeEntry(q.Entry)); err != nil {
			return full, err
		}
	}
	return full, nil
}

// itemOrder lists a page's items by key: bbolt keeps a node's entries in
// a sorted slice until the transaction commits, so inserting keys in
// random order costs a copy of the slice's tail per key, quadratic in the
// keys a transaction inserts, and a listing page of cards can hold
// thousands. Items with the same key keep their order on the page.
func itemOrder(items []crawl.ItemVersion) []int {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	if len(items) > 1 {
		slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(items[a].Key, items[b].Key) })
	}
	return order
}

// enqueue queues an entry and marks its URL seen in the traversal, giving
// it a page number if it has none.
func (db *DB) enqueue(tx *bolt.Tx, q crawl.Queued, traversal uint64) error {
	if err := db.seenOf(tx).mark(seenKey(q.URL), traversal); err != nil {
		return err
	}
	return tx.Bucket(bucketQueue).Put(seqKey(q.Seq), encodeEntry(q.Entry))
}
