package state

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// A key moves when its page is gone (SPEC 6c). A page that yields a key
// another page holds is a duplicate and is not stored; but when the
// traversal completes without having linked the holding page — a shop
// that writes a fresh session ID into its links every run links every item
// under a new URL each time — the key moves to the page that yielded it,
// and its values are compared and exported like any change. A holder that
// yielded the key in the traversal keeps it too (the URL of a listing
// card is never queued). The moves
// bucket keeps, per stored item key, the first such page of the traversal
// and what it yielded: the traversal's number, then the version as the
// version log encodes it. When the traversal completes, settleMoves
// moves each key whose holder the traversal did not link, and empties the
// bucket. A holder the traversal linked keeps its key, whichever page was
// read first.

// bucketMoves holds the proposed moves.
var bucketMoves = []byte("moves")

// propose notes that the page of v yielded a key the page of prev holds:
// unless the traversal linked the holder, or a page already proposed to
// take the key in this traversal, the key may move to it (see
// settleMoves).
func (w itemWriter) propose(key []byte, prev *itemRecord, v *crawl.ItemVersion) error {
	if w.seen.has(seenKey(prev.url), w.traversal) {
		return nil // the holder is linked: it keeps the key
	}
	if old := w.moves.Get(key); len(old) >= 8 && binary.BigEndian.Uint64(old) == w.traversal {
		return nil // the first page to yield it in a traversal proposes
	}
	values, err := json.Marshal(v.Values)
	if err != nil {
		return fmt.Errorf("item %q: encode values: %w", v.Key, err)
	}
	ver := Version{Key: v.Key, URL: v.URL, Hash: v.Hash, Change: ChangeNew, FetchedAt: v.FetchedAt.UTC(), RunID: v.RunID, Values: values}
	return w.moves.Put(key, append(binary.BigEndian.AppendUint64(nil, w.traversal), encodeVersion(&ver)...))
}

// settleMoves decides the moves proposed in a traversal that completed:
// each key whose holder the traversal did not link moves to the page that
// proposed it, counted changed or unchanged (and in Moved); every proposal
// is removed, those of earlier traversals too. It runs in transactions of
// the write budget, each removing the proposals it decides, so a crash
// leaves the undecided ones for the next call.
func (db *DB) settleMoves(traversal uint64) (crawl.Committed, error) {
	var total crawl.Committed
	err := db.commitInParts(func(tx *bolt.Tx) (full, done bool, err error) {
		w := db.newItemWriter(tx, traversal)
		var keys [][]byte
		c := w.moves.Cursor()
		for k, _ := c.First(); k != nil && len(keys) < 4096; k, _ = c.Next() {
			keys = append(keys, bytes.Clone(k))
		}
		if len(keys) == 0 {
			return false, true, nil
		}
		var counts crawl.Committed
		for _, k := range keys {
			if err := w.settleMove(k, w.moves.Get(k), &counts); err != nil {
				return false, false, err
			}
			if err := w.moves.Delete(k); err != nil {
				return false, false, err
			}
			if full = db.commitFull(tx); full {
				break
			}
		}
		total = total.Add(counts)
		return full, false, nil
	})
	if err != nil {
		return crawl.Committed{}, fmt.Errorf("move item keys in %s: %w", db.dir, err)
	}
	return total, nil
}

// settleMove decides one proposal: the key moves when the proposal is of
// this traversal, the item is stored for another page, and that page
// neither yielded the key in the traversal (a listing card's URL is not
// queued, but its card is there) nor was queued by it.
func (w itemWriter) settleMove(key, v []byte, counts *crawl.Committed) error {
	if len(v) < 8 || binary.BigEndian.Uint64(v) != w.traversal {
		return nil // of an earlier traversal, which never completed
	}
	ver, err := decodeVersion(0, v[8:])
	if err != nil {
		return fmt.Errorf("proposed move of item %q: %w", key, err)
	}
	old := w.items.Get(key)
	if old == nil {
		return nil
	}
	rec, err := decodeItemRecord(old)
	if err != nil {
		return fmt.Errorf("item %q: %w", ver.Key, err)
	}
	if rec.url == ver.URL || w.lastSeen(ver.Key, &rec) >= w.traversal || w.seen.has(seenKey(rec.url), w.traversal) {
		return nil // the holder yielded the key, or was linked, in the traversal
	}
	counts.Moved++
	iv := crawl.ItemVersion{Key: ver.Key, URL: ver.URL, Hash: ver.Hash, FetchedAt: ver.FetchedAt, RunID: ver.RunID}
	return w.putVersion(&iv, ver.Values, true, counts)
}
