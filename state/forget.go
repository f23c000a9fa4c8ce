package state

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
)

// ForgetAfterTraversals is how many whole traversals in a row must not
// link a URL before a new traversal drops it from the seen set, with its
// page memo: a site that stopped linking a page does not grow the state
// forever. A URL linked again is a new URL (its page is read whole).
const ForgetAfterTraversals = 3

// forgetBatch bounds the keys one transaction of forget deletes.
const forgetBatch = 4096

// forget drops the seen entries, and the page memos, of the URLs no
// traversal from traversal-ForgetAfterTraversals on linked, in
// transactions of forgetBatch keys; it returns how many it dropped. A
// crash between two transactions leaves the rest for the next traversal.
func (db *DB) forget(traversal uint64) (int, error) {
	if traversal <= ForgetAfterTraversals+1 {
		return 0, nil
	}
	last := traversal - 1 - ForgetAfterTraversals // the newest traversal to forget
	var after []byte
	var recent pageSet // pages whose mark is newer than last
	forgotten := 0
	for {
		var stale [][]byte
		var pages []uint64 // the stale URLs' page numbers
		var next []byte
		err := db.readSeen(func(tx *bolt.Tx) error {
			seen := db.seenOf(tx)
			if recent == nil {
				// The URLs a traversal after the first linked again, from
				// one read of the marks, not a read per URL.
				var err error
				if recent, err = seen.queuedAfter(last); err != nil {
					return err
				}
			}
			c := seen.urls.cursor()
			k, v := c.first()
			if after != nil {
				if k, v = c.seek(after); k != nil && bytes.Equal(k, after) {
					k, v = c.next()
				}
			}
			for ; k != nil && len(stale) < forgetBatch; k, v = c.next() {
				// A URL's mark is never older than the traversal that first
				// queued it.
				if page, first := decodeIndex(v); page != 0 && first <= last && !recent.has(page) {
					stale = append(stale, bytes.Clone(k))
					pages = append(pages, page)
				}
				next = k
			}
			if k == nil {
				next = nil
			} else {
				next = bytes.Clone(next)
			}
			return nil
		})
		if err != nil {
			return forgotten, err
		}
		if err := db.forgetURLs(stale, pages); err != nil {
			return forgotten, err
		}
		forgotten += len(stale)
		if next == nil {
			break
		}
		after = next
	}
	// Then the URL index's recent part (at most its fold size of URLs), by page.
	var stale [][]byte
	var pages []uint64
	err := db.readSeen(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketURLsRecent).ForEach(func(k, v []byte) error {
			if h, e, ok := decodeRecent(k, v); ok && e.first <= last && !recent.has(e.page) {
				stale, pages = append(stale, bytes.Clone(h[:])), append(pages, e.page)
			}
			return nil
		})
	})
	if err == nil {
		err = db.forgetURLs(stale, pages)
	}
	if err != nil {
		return forgotten, err
	}
	return forgotten + len(stale), nil
}

// forgetURLs drops the URLs with these keys, at these page numbers, from
// the seen set, with their memos, in transactions within the write budget.
func (db *DB) forgetURLs(keys [][]byte, pages []uint64) error {
	if len(keys) == 0 {
		return nil
	}
	i := 0
	return db.commitInParts(func(tx *bolt.Tx) (full, done bool, err error) {
		seen, memos := db.seenOf(tx), tx.Bucket(bucketMemos)
		for ; i < len(keys) && !full; i++ {
			if err := seen.remove(keys[i], pages[i]); err != nil {
				return false, false, err
			}
			if err := memos.Delete(memoKey(pages[i])); err != nil {
				return false, false, err
			}
			full = db.commitFull(tx)
		}
		return full, i == len(keys), nil
	})
}
