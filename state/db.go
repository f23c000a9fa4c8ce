// Package state keeps a config's crawl state in a bbolt file, state.db, in
// the config's storage path: the queue, the URLs seen in the current
// traversal with their page numbers (see seen.go; the newest of them are
// held in memory too, see recent.go; the pages a traversal skipped are
// bits of a bitmap, see skipbits.go), the URLs that failed, the items with
// their content hashes (the newest indexed in memory too, see
// recentitems.go), the item versions not yet exported, and the pages'
// memos by page number (see memo.go). The URL index and the item records
// are each kept as sorted runs, written and merged in key order (see
// runs.go and merge.go). Open upgrades a state an older format wrote, once
// (see upgrade.go), and fills Bloom filters of each run's keys, which
// answer most lookups of a new URL or item without reading the file (see
// keyfilter.go). Every change is made in transactions ordered so that a
// crash between any two leaves a state the next run resumes from: most
// changes are one transaction; Commit and CommitPublish split a large
// change into several when one would hold more changed pages than the
// write budget, keeping a prefix of it on a crash (see their doc
// comments).
package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrLocked is returned when another process holds the storage path.
var ErrLocked = errors.New("storage is locked by another process")

// FileName is the state file's name inside the storage path.
const FileName = "state.db"

// formatVersion numbers the layout of the buckets; a file with another
// number is refused rather than misread.
const formatVersion = 12

var (
	bucketMeta     = []byte("meta")
	bucketQueue    = []byte("queue")
	bucketFailed   = []byte("failed")
	bucketItems    = []byte("items")
	bucketVersions = []byte("versions")

	keyFormat    = []byte("format")
	keyTraversal = []byte("traversal")
	keySeq       = []byte("seq")
	keyStreak    = []byte("empty_run_streak")
	// keyPendingSeq numbers pending versions.
	keyPendingSeq = []byte("pending_seq")
	// keyPublishedSeq is the highest version sequence number a committed
	// publish took: an item whose pending version is at or below it was
	// published, which its record learns the next time it is written.
	keyPublishedSeq = []byte("published_seq")
	// keyPendingCount counts pending versions.
	keyPendingCount = []byte("pending_count")
	// keyTraversalGaps counts coverage gaps over the current traversal.
	keyTraversalGaps = []byte("traversal_gaps")
	// keyRunTime is the last run time ClaimRunTime gave out, in Unix
	// milliseconds.
	keyRunTime = []byte("run_time_ms")

	bucketPublishing = []byte("publishing")
	bucketPublished  = []byte("published")
)

// buckets lists every bucket of the format.
var buckets = [][]byte{bucketMeta, bucketQueue, bucketURLs, bucketURLsRecent, bucketURLRuns, bucketMarks, bucketFailed, bucketItems,
	bucketItemsRecent, bucketItemRuns, bucketVersions, bucketPublishing, bucketPublished, bucketMemos, bucketMoves, bucketSkips}

// DB is an open state file. It implements crawl.Store. A method that
// finds the file damaged returns an error that matches ErrCorrupt, and
// every later one returns it too.
type DB struct {
	bolt   *boltDB
	dir    string
	origin Origin
	// traversal is cached at Begin for item records.
	traversal uint64
	// budget is the write budget (see writebudget.go).
	budget int64
	// recent and recentItems are the maps of the recent parts of the URL
	// index and of the item records (see recent.go, recentitems.go);
	// writing is what the write transaction in progress changed of them.
	recent      *recentURLs
	recentItems *recentItems
	writing     *writingRecent
	// urlRuns and itemRuns are the runs of the URL index and of the item
	// records (see runs.go).
	urlRuns, itemRuns *runSet
	// between, when a test sets it, runs between a fold's two steps
	// (stepFoldWritten) and between a merge's transactions
	// (stepMergePart).
	between func(step string)
}

// Options tune Open.
type Options struct {
	// LockTimeout is how long Open waits for another process to release
	// the file before it returns ErrLocked; 0 means 100ms.
	LockTimeout time.Duration
	// WriteBudget bounds what one write transaction holds of changed
	// pages in memory, in bytes; 0 means DefaultWriteBudget. A smaller
	// budget costs more transactions for large batches.
	WriteBudget int64
	// RecentURLs is how many URLs the URL index's recent part holds, in
	// memory, before a commit folds them into a run (see recent.go); the
	// item records' recent part holds half as many. 0 means
	// DefaultRecentURLs. A state may be opened with another size than it
	// was written with: a recent part that holds more is folded at the
	// next commit.
	RecentURLs int
	// MustExist says a state must be there (exports made from it exist):
	// a missing or empty state file is then an error that matches
	// ErrNoState rather than a new state.
	MustExist bool
	// Reset starts a new state instead of returning an error when the
	// state file is missing, empty or damaged; a damaged or empty file is
	// moved aside to state.db.broken-<UTC time> first. It checks every
	// page of an existing file, so a damaged one is found before it is
	// used. A sound state file is kept.
	Reset bool
}

// Open opens (creating if needed) the state file in dir. A dir held by
// another process yields an error that matches ErrLocked and names dir; a
// damaged file, one that matches ErrCorrupt and names the file and what is
// wrong with it (see Options for a missing or empty one); nothing is
// written to dir then.
func Open(dir string, opts Options) (*DB, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 100 * time.Millisecond
	}
	path := filepath.Join(dir, FileName)
	origin, err := prepare(path, opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create storage %s: %w", dir, err)
	}
	bdb, err := openBolt(path, &bolt.Options{
		Timeout: opts.LockTimeout,
		// Commits do not write the list of free pages; Close does (see
		// there), and only a file that was not closed has it rebuilt.
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
		// Map a large address range once: growing the file then needs no
		// remap, which would copy every node the transaction holds.
		InitialMmapSize: 1 << 30,
	})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("storage %s is in use by another process: %w", dir, ErrLocked)
	case errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch):
		return nil, &CorruptError{Path: path, Problem: err.Error()}
	case errors.Is(err, ErrCorrupt):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("open storage %s: %w", dir, err)
	}
	recentURLs := opts.RecentURLs
	if recentURLs <= 0 {
		recentURLs = DefaultRecentURLs
	}
	db := &DB{bolt: &boltDB{DB: bdb, path: path}, dir: dir, origin: origin, recent: newRecentURLs(recentURLs),
		recentItems: newRecentItems(recentURLs / 2)}
	db.urlRuns = newRunSet(&db.recent.mu, bucketURLRuns, bucketURLs)
	db.itemRuns = newRunSet(&db.recentItems.mu, bucketItemRuns, bucketItems)
	db.bolt.prepare, db.bolt.settle = db.prepareRecent, db.settleRecent
	db.budget = opts.WriteBudget
	if db.budget <= 0 {
		db.budget = DefaultWriteBudget
	}
	if err := db.init(); err != nil {
		_ = bdb.Close()
		return nil, err
	}
	return db, nil
}

// init readies a file Open opened: it creates the buckets a new file
// lacks and marks its format, upgrades an older format, reads the recent
// parts and the runs, and undoes a merge a crash cut short. A file of the
// current format with nothing to undo is only read: each write
// transaction costs two syncs.
func (db *DB) init() error {
	var err error
	if !db.current() {
		err = db.bolt.Update(db.initFormat)
	}
	if err != nil {
		return fmt.Errorf("initialise storage %s: %w", db.dir, err)
	}
	// The two recent parts load side by side, each in a read transaction
	// of its own.
	var itemsErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		itemsErr = db.bolt.View(func(tx *bolt.Tx) error {
			loadRecentItems(db.recentItems, tx)
			return nil
		})
	})
	err = db.bolt.View(func(tx *bolt.Tx) error {
		loadRecentURLs(db.recent, tx)
		return nil
	})
	wg.Wait()
	if err = errors.Join(err, itemsErr); err != nil {
		return fmt.Errorf("initialise storage %s: read the recent parts: %w", db.dir, err)
	}
	err = db.moveSeen()
	if err == nil {
		err = db.moveMemos()
	}
	if err != nil {
		return fmt.Errorf("initialise storage %s: upgrade to format %d: %w", db.dir, formatVersion, err)
	}
	loadRuns := func(tx *bolt.Tx) error {
		for _, s := range []*runSet{db.urlRuns, db.itemRuns} {
			if err := s.undoMerge(tx); err != nil {
				return err
			}
			s.load(tx, uint(getUint(tx.Bucket(bucketMeta), keyPageSeq)))
		}
		return nil
	}
	if db.merging() {
		err = db.bolt.Update(loadRuns)
	} else {
		err = db.bolt.View(loadRuns) // undoMerge finds nothing to undo
	}
	if err != nil {
		return fmt.Errorf("initialise storage %s: read the keys of the URL index and the items: %w", db.dir, err)
	}
	return nil
}

// current reports whether the file holds every bucket and is of the
// current format; a file that cannot be read is said not to be, so that
// the write transaction that follows meets the error.
func (db *DB) current() bool {
	ok := false
	_ = db.bolt.View(func(tx *bolt.Tx) error {
		for _, name := range buckets {
			if tx.Bucket(name) == nil {
				return nil
			}
		}
		ok = getUint(tx.Bucket(bucketMeta), keyFormat) == formatVersion
		return nil
	})
	return ok
}

// merging reports whether a merge of either runSet was cut short, which
// Open undoes; a file that cannot be read is said to have one.
func (db *DB) merging() bool {
	merging := true
	_ = db.bolt.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		merging = getUint(meta, db.urlRuns.merging) != 0 || getUint(meta, db.itemRuns.merging) != 0
		return nil
	})
	return merging
}

// initFormat creates the buckets a file lacks and marks its format, or
// readies an older format's upgrade.
func (db *DB) initFormat(tx *bolt.Tx) error {
	for _, name := range buckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	meta := tx.Bucket(bucketMeta)
	switch v := getUint(meta, keyFormat); v {
	case 0:
		return putUint(meta, keyFormat, formatVersion)
	case formatVersion:
		return nil
	case 2:
		db.origin.UpgradedFrom = int(v)
		if err := migrateSeen(tx, getUint(meta, keyTraversal)); err != nil {
			return fmt.Errorf("convert state format 2: %w", err)
		}
		return putUint(meta, keyFormat, formatVersion)
	case 3, 4:
		db.origin.UpgradedFrom = int(v)
		// Format 4 adds long keys held by hash and the challenger of an
		// item record, both behind flags a format 3 record lacks;
		// format 5 the page memos, in a bucket of their own.
		return putUint(meta, keyFormat, formatVersion)
	case 9, 10, 11:
		// Format 10 adds the recent parts of the URL index and of the
		// item records, format 11 their runs (see runs.go), buckets of
		// their own, made above; the trees before are the runs' bases.
		// Format 12 the bitmaps of skipped pages (see skipbits.go), a
		// bucket of its own too: the marks format 11 wrote for skips
		// read as they did.
		db.origin.UpgradedFrom = int(v)
		return putUint(meta, keyFormat, formatVersion)
	case 5, 6, 7, 8:
		// Format 6 lets a seen mark carry the traversal that last
		// skipped the page; a format 5 mark, the traversal alone,
		// reads as one never skipped. Format 7 adds the proposed key
		// moves, in a bucket of their own, a queue entry's digest of
		// the page before it in a pages chain and a chain page's memo
		// of what it held, each behind a flag or an end older records
		// lack. Format 8 keeps the memos by page number, format 9 the
		// seen marks too, each moved there after this transaction (see
		// upgrade.go); a URL that has no page number gets one then.
		// Marked with the current format first, so that an older
		// binary refuses the file even while they are moved.
		db.origin.UpgradedFrom = int(v)
		return putUint(meta, keyFormat, formatVersion)
	default:
		return fmt.Errorf("state format %d is not %d: written by another version", v, formatVersion)
	}
}

// Origin says how Open came by the state: whether it started a new one,
// and what was wrong with the file it found then.
func (db *DB) Origin() Origin { return db.origin }

// Close releases the file and its lock. It first records the free pages
// in the file: without that list the next Open would rebuild it by reading
// every page of the file, mapping all of it into memory at once. A file
// found damaged is not written to.
func (db *DB) Close() error {
	var err error
	if !db.bolt.damaged() {
		db.bolt.NoFreelistSync = false
		err = db.bolt.Update(func(*bolt.Tx) error { return nil })
	}
	if errors.Is(err, berrors.ErrDatabaseNotOpen) || errors.Is(err, ErrCorrupt) {
		err = nil // closed already, or found damaged just now
	}
	if err := errors.Join(err, db.bolt.Close()); err != nil {
		return fmt.Errorf("close storage %s: %w", db.dir, err)
	}
	return nil
}

func getUint(b *bolt.Bucket, key []byte) uint64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

func putUint(b *bolt.Bucket, key []byte, v uint64) error {
	return b.Put(key, binary.BigEndian.AppendUint64(nil, v))
}

// addUint adds delta to a counter, never below zero.
func addUint(b *bolt.Bucket, key []byte, delta int) error {
	v := int64(getUint(b, key)) + int64(delta)
	return putUint(b, key, uint64(max(v, 0)))
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), seq) }
