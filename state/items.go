package state

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// Changes an exported row can carry.
const (
	ChangeNew     = "new"
	ChangeChanged = "changed"
	ChangeRemoved = "removed"
)

// Item record flags.
const (
	itemPublished = 1 << iota // some version of the item reached a published export
	itemRemoved               // the item was tombstoned and not seen since
	// itemHashPublished marks a removed item whose last values (its hash)
	// reached an export before the removal: if it comes back unchanged
	// while the removal is still pending, the removal is simply dropped.
	itemHashPublished
	// itemFullKey marks a record held by its key's hash: it carries the key.
	itemFullKey
	// itemChallenger marks a record that names another page yielding its
	// key.
	itemChallenger
	// itemPage marks a record that carries its page's number.
	itemPage
)

// Version is an item version waiting for export: the latest new or changed
// values of an item that no published export holds yet.
type Version struct {
	Key       string    `json:"key"`
	URL       string    `json:"url"`
	Hash      string    `json:"hash"`
	Change    string    `json:"change"`
	FetchedAt time.Time `json:"fetched_at"`
	RunID     string    `json:"run_id"`
	// Seq orders pending versions: a publish takes every version up to a
	// sequence number, so versions stored after it stay pending.
	Seq uint64 `json:"seq"`
	// Values is the JSON array of the item's typed values; null for a
	// removed item.
	Values json.RawMessage `json:"values"`
}

// itemWriter stores items inside one transaction. Pending versions go to
// the version log, keyed by sequence number so that writing one appends to
// the end of the file's tree instead of touching pages all over it; the
// item's record points at its pending version. A new item's record goes
// to the records' recent part, for the same reason (see recentitems.go).
type itemWriter struct {
	items          *itemRecords
	versions, meta *bolt.Bucket
	seen           seenSet
	memos          pageMemos
	// moves keeps the pages that yielded a key another page holds (see
	// moves.go).
	moves        *bolt.Bucket
	traversal    uint64
	publishedSeq uint64
	// stagedSeq is the highest sequence number a publish in flight took
	// (see stagedSeq).
	stagedSeq uint64
	// at is the page whose items are being stored, with its number, so
	// that their records carry it without a read of the URL index.
	at pageAt
}

// pageAt is a page's URL and number.
type pageAt struct {
	url  string
	page uint64
}

func (db *DB) newItemWriter(tx *bolt.Tx, traversal uint64) itemWriter {
	versions := tx.Bucket(bucketVersions)
	versions.FillPercent = 1.0 // appended in key order: pack pages full
	meta := tx.Bucket(bucketMeta)
	memos := db.writeMemos(tx)
	return itemWriter{items: db.itemRecordsOf(tx), versions: versions, meta: meta, seen: memos.seen,
		memos: memos, moves: tx.Bucket(bucketMoves), traversal: traversal, publishedSeq: getUint(meta, keyPublishedSeq),
		stagedSeq: stagedSeq(tx)}
}

// stagedSeq is the highest sequence number a publish in flight took. A
// whole-config run has none while it crawls (its reconcile settles every
// publish first); a shard does while an earlier attempt of its logical run
// waits for the run's commit, which may publish that attempt. A pending
// version at or below it may reach readers so: a newer version of the item
// is added beside it, as a change, instead of replacing it (see
// putPending), so whichever attempt the commit publishes, every version
// reaches an export once and is labelled as readers saw the item before.
func stagedSeq(tx *bolt.Tx) uint64 {
	var highest uint64
	_ = tx.Bucket(bucketPublishing).ForEach(func(_, v []byte) error {
		var p struct {
			MaxSeq uint64 `json:"max_seq"`
		}
		if json.Unmarshal(v, &p) == nil {
			highest = max(highest, p.MaxSeq)
		}
		return nil
	})
	return highest
}

// staged reports whether the pending version seq may reach readers
// through a publish in flight.
func (w itemWriter) staged(seq uint64) bool { return seq != 0 && seq <= w.stagedSeq }

// lastSeen is the last traversal in which the item with this key was
// yielded by the page its record names: the one the record carries, or a
// later one that skipped the page when the page's memo lists the key (a
// skip stands for what the page yielded when it was last read, no more). A
// removed item was not seen since its removal.
func (w itemWriter) lastSeen(key string, rec *itemRecord) uint64 {
	if rec.flags&itemRemoved != 0 {
		return rec.traversal
	}
	var m seenMark
	if rec.page != 0 {
		m.page = rec.page
		m.traversal, m.skipped = decodeMark(w.seen.markGet.get(pageKey(m.page)))
		m.traversal, m.skipped = w.seen.withSkips(m.page, m.traversal, m.skipped)
	} else {
		m, _ = w.seen.get(seenKey(rec.url))
	}
	if m.page == 0 || m.skipped <= rec.traversal {
		return rec.traversal
	}
	// The memo names its URL: a page number the record kept from before a
	// repair gave it out again finds another page's memo, not its own.
	if memoListsItem(w.memos.of(m.page), rec.url, key) {
		return m.skipped
	}
	return rec.traversal
}

// settle folds committed publishes into a record read from the items
// bucket: a pending version at or below the published sequence number was
// published, so the item counts as published and has no pending version.
func (w itemWriter) settle(rec *itemRecord) {
	if rec.pending != 0 && rec.pending <= w.publishedSeq {
		rec.flags |= itemPublished
		rec.pending = 0
		// A published removal is what readers last saw of the item.
		rec.flags &^= itemHashPublished
	}
}

// put stores one item version: a new key or a changed hash is stored and
// becomes pending; an unchanged one only records that this traversal saw
// it; one whose key another page holds is a duplicate (see holds), which
// may move the key when the traversal completes (see propose).
func (w itemWriter) put(v *crawl.ItemVersion, counts *crawl.Committed) error {
	return w.putVersion(v, nil, false, counts)
}

// putVersion stores v as put does; encoded, when set, is its values'
// JSON already. A takeover stores it whichever page holds the key (see
// settleMoves).
func (w itemWriter) putVersion(v *crawl.ItemVersion, encoded json.RawMessage, takeover bool, counts *crawl.Committed) error {
	hash, err := hashBytes(v.Hash)
	if err != nil {
		return fmt.Errorf("item %q: %w", v.Key, err)
	}
	key, hashed := storedKey(v.Key)
	rec := itemRecord{hash: hash, traversal: w.traversal, url: v.URL}
	if hashed {
		rec.flags, rec.key = itemFullKey, v.Key
	}
	w.numberPage(&rec)
	change := ChangeNew
	if old := w.items.Get(key); old != nil {
		prev, err := decodeItemRecord(old)
		if err != nil {
			return fmt.Errorf("item %q: %w", v.Key, err)
		}
		w.settle(&prev)
		if !takeover && !w.holds(v.Key, &prev, v.URL, hash) {
			counts.Duplicate(v.Key, prev.url, v.URL)
			if err := w.propose(key, &prev, v); err != nil {
				return err
			}
			if !w.challenges(&prev, v.URL) {
				return nil
			}
			prev.flags |= itemChallenger
			prev.challenger, prev.chTraversal = v.URL, w.traversal
			return w.items.Put(key, prev.encode())
		}
		rec.flags |= prev.flags &^ (itemRemoved | itemHashPublished | itemChallenger | itemPage)
		rec.pending = prev.pending
		if rec.flags&itemPage == 0 && prev.flags&itemPage != 0 && prev.url == v.URL {
			rec.page = prev.page
			rec.flags |= itemPage
		}
		if prev.url == v.URL && prev.flags&itemChallenger != 0 {
			rec.flags |= itemChallenger
			rec.challenger, rec.chTraversal = prev.challenger, prev.chTraversal
		}
		if prev.hash == hash && prev.flags&itemHashPublished != 0 && prev.pending != 0 && !w.staged(prev.pending) {
			// Back, unchanged, before its removal reached an export: readers
			// still hold these values, so the removal is dropped.
			if err := w.versions.Delete(seqKey(prev.pending)); err != nil {
				return err
			}
			if err := addUint(w.meta, keyPendingCount, -1); err != nil {
				return err
			}
			rec.pending = 0
			counts.Unchanged++
			return w.items.Put(key, rec.encode())
		}
		if prev.hash == hash && prev.flags&itemRemoved == 0 {
			counts.Unchanged++
			if prev.traversal == w.traversal && prev.url == v.URL && prev.page == rec.page {
				return nil
			}
			return w.items.Put(key, rec.encode())
		}
		counts.Changed++
		if w.staged(prev.pending) {
			// The staged version stays, and will reach an export (the
			// publish that took it, or a later one if that is abandoned).
			rec.flags |= itemPublished
		}
		if rec.flags&itemPublished != 0 {
			change = ChangeChanged
		}
	} else {
		counts.New++
	}
	values := encoded
	if values == nil {
		if values, err = json.Marshal(v.Values); err != nil {
			return fmt.Errorf("item %q: encode values: %w", v.Key, err)
		}
	}
	ver := Version{Key: v.Key, URL: v.URL, Hash: v.Hash, Change: change, FetchedAt: v.FetchedAt.UTC(), RunID: v.RunID, Values: values}
	return w.putPending(key, &rec, &ver)
}

// touch records that a page which answered 304 Not Modified still holds
// the item: counted unchanged, seen in this traversal. It reports false
// when it could not stand for a fetch: the key is not stored, is held for
// another URL (counted a duplicate, as a fetch would be), is held as
// removed, or had its hash cleared by a repair — the page must be fetched
// whole next time.
func (w itemWriter) touch(ref crawl.ItemRef, counts *crawl.Committed) (bool, error) {
	k, _ := storedKey(ref.Key)
	rec, ok, err := w.standing(k, ref, counts)
	if !ok || err != nil {
		return false, err
	}
	counts.Unchanged++
	if rec.traversal >= w.traversal {
		return true, nil
	}
	w.settle(&rec)
	rec.traversal = w.traversal
	w.numberPage(&rec)
	return true, w.items.Put(k, rec.encode())
}

// numberPage gives the record the number of its page when that is the
// page being stored. A record carries the number its page had when the
// page last yielded it: a page forgotten and linked again gets a new
// number, which the record learns when the page is next read, and until
// then the old number finds no skip mark of the page (numbers are not
// given twice) and no memo of its URL.
func (w itemWriter) numberPage(rec *itemRecord) {
	if rec.url == w.at.url && w.at.page != 0 {
		rec.page = w.at.page
		rec.flags |= itemPage
	}
}

// standing reads the record of an item a page yielded last time and
// reports whether it still stands for that page (see touch).
func (w itemWriter) standing(k []byte, ref crawl.ItemRef, counts *crawl.Committed) (itemRecord, bool, error) {
	old := w.items.Get(k)
	if old == nil {
		return itemRecord{}, false, nil
	}
	rec, err := decodeItemRecord(old)
	if err != nil {
		return itemRecord{}, false, fmt.Errorf("item %q: %w", ref.Key, err)
	}
	switch {
	case rec.url != ref.URL:
		counts.Duplicate(ref.Key, rec.url, ref.URL)
		return rec, false, nil
	case rec.flags&itemRemoved != 0 || rec.hash == ([16]byte{}):
		return rec, false, nil
	}
	return rec, true, nil
}

// challenges reports whether the page at url, yielding a key another page
// holds, becomes (or stays) its challenger in this traversal. One
// challenger keeps its claim while it yields the key every traversal:
// another page only replaces a challenger that missed the previous one, so
// with several other pages the key still changes hands, once.
func (w itemWriter) challenges(prev *itemRecord, url string) bool {
	switch {
	case prev.flags&itemChallenger == 0:
		return true
	case prev.challenger == url:
		return prev.chTraversal != w.traversal
	}
	return prev.chTraversal+1 < w.traversal
}

// holds reports whether the page at url may write the item whose record is
// prev. The page that holds a key keeps it: a second page yielding the same
// key in a traversal is a duplicate, counted and not stored, so the key does
// not change hands (and get exported again) with the order pages are
// fetched in; the holding page's first values in a traversal win too. The
// other page takes the key over when the item was removed, or when the
// holder missed a whole traversal in which that page yielded the key.
func (w itemWriter) holds(key string, prev *itemRecord, url string, hash [16]byte) bool {
	if prev.url == url {
		return prev.traversal != w.traversal || prev.hash == hash
	}
	last := w.lastSeen(key, prev)
	switch {
	case last == w.traversal:
		return false
	case prev.flags&itemRemoved != 0:
		return true
	}
	return prev.flags&itemChallenger != 0 && prev.challenger == url &&
		prev.chTraversal+1 == w.traversal && last+1 < w.traversal
}

// putPending makes ver the item's pending version, dropping the one it
// replaces unless a publish in flight took that one (see stagedSeq), and
// stores the item's record pointing at it.
func (w itemWriter) putPending(key []byte, rec *itemRecord, ver *Version) error {
	if rec.pending != 0 && !w.staged(rec.pending) {
		if err := w.versions.Delete(seqKey(rec.pending)); err != nil {
			return err
		}
	} else if err := addUint(w.meta, keyPendingCount, 1); err != nil {
		return err
	}
	ver.Seq = getUint(w.meta, keyPendingSeq) + 1
	if err := putUint(w.meta, keyPendingSeq, ver.Seq); err != nil {
		return err
	}
	if err := w.versions.Put(seqKey(ver.Seq), encodeVersion(ver)); err != nil {
		return err
	}
	rec.pending = ver.Seq
	return w.items.Put(key, rec.encode())
}
