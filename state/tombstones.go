package state

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// MarkRemoved tombstones, in one transaction, every item the given
// traversal did not see: a published item gets a pending "removed" version;
// an item no export ever held just loses its pending version. The memo of
// the page that held it goes too. Call it only
// after a traversal that completed cleanly. It returns how many removed
// versions it queued for export.
func (db *DB) MarkRemoved(traversal uint64, runID string, at time.Time) (int, error) {
	removed := 0
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		removed = 0
		w := db.newItemWriter(tx, traversal)
		type gone struct {
			key []byte
			rec itemRecord
		}
		var stale []gone
		// The pages skipped in the traversal, from one read of the marks.
		skipped, err := w.seen.skippedSince(traversal)
		if err != nil {
			return err
		}
		err = w.items.ForEach(func(k, v []byte) error {
			rec, err := decodeItemRecord(v)
			if err != nil {
				return fmt.Errorf("item %q: %w", k, err)
			}
			w.settle(&rec)
			// A key another page yielded in the traversal is still there
			// (see itemWriter.holds), as is one whose page was skipped.
			seen := rec.traversal >= traversal || rec.flags&itemChallenger != 0 && rec.chTraversal >= traversal ||
				rec.flags&itemRemoved == 0 && w.listedBySkipped(&rec, k, skipped)
			if !seen && rec.flags&itemRemoved == 0 {
				stale = append(stale, gone{key: append([]byte(nil), k...), rec: rec})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, g := range stale {
			rec := g.rec
			// The page that held it is fetched whole when it is linked
			// again: a 304 could not bring the item back.
			if err := w.memos.remove(rec.url); err != nil {
				return err
			}
			rec.flags |= itemRemoved
			if rec.pending == 0 {
				rec.flags |= itemHashPublished // its last values reached an export
			} else if w.staged(rec.pending) {
				// Its last values are staged: they reach an export
				// whichever attempt is published (see stagedSeq).
				rec.flags |= itemPublished | itemHashPublished
			}
			if rec.flags&itemPublished == 0 && !w.staged(rec.pending) {
				// No export ever held it: drop its pending version.
				if rec.pending != 0 {
					if err := w.versions.Delete(seqKey(rec.pending)); err != nil {
						return err
					}
					if err := addUint(w.meta, keyPendingCount, -1); err != nil {
						return err
					}
					rec.pending = 0
				}
				if err := w.items.Put(g.key, rec.encode()); err != nil {
					return err
				}
				continue
			}
			removed++
			key := string(g.key)
			if rec.flags&itemFullKey != 0 {
				key = rec.key
			}
			ver := Version{Key: key, URL: rec.url, Change: ChangeRemoved,
				FetchedAt: at.UTC(), RunID: runID, Values: json.RawMessage("null")}
			if err := w.putPending(g.key, &rec, &ver); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("mark removed items in %s: %w", db.dir, err)
	}
	return removed, nil
}

// listedBySkipped reports whether the page that holds the item, whose key
// is k, was skipped in the traversal and lists the key in its memo: the
// skip stands for what it yielded when it was last read (see
// itemWriter.lastSeen, which it answers as the traversal's marks, skipped,
// tell it: a record that carries its page's number needs no look at the
// page's mark, and none at the page unless the traversal skipped it).
func (w itemWriter) listedBySkipped(rec *itemRecord, k []byte, skipped pageSet) bool {
	switch {
	case rec.page == 0:
		key := string(k)
		if rec.flags&itemFullKey != 0 {
			key = rec.key
		}
		return w.lastSeen(key, rec) >= w.traversal
	case !skipped.has(rec.page):
		return false
	case rec.flags&itemFullKey != 0:
		return memoListsItem(w.memos.of(rec.page), rec.url, rec.key)
	default:
		return memoListsItem(w.memos.of(rec.page), rec.url, k)
	}
}
