package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Salvage is what Repair found and did.
type Salvage struct {
	// Health is what the check before the repair found; a file it found
	// sound is left as it is.
	Health
	// MovedTo is where the damaged file is kept; empty when nothing was
	// repaired.
	MovedTo string
	// Copied counts the records copied to the new file per bucket;
	// Dropped, the records read but left out (undecodable, or versions a
	// committed publish took); Unreadable, the pages that could not be
	// read, whose records are lost.
	Copied, Dropped, Unreadable map[string]int
	// LostPending counts the pending versions the meta counted that could
	// not be read.
	LostPending int
	// Reexport counts the items whose pending version was lost: their
	// content hash was cleared, so they are exported again the next time
	// they are fetched.
	Reexport int
	// Rebuilt counts the item records rebuilt from their pending version.
	Rebuilt int
	// Incomplete is true when queued or failed URLs were lost: the current
	// traversal then counts a coverage gap, so that it removes no item.
	Incomplete bool
}

// repairBatch bounds the bytes of records one transaction of the new file
// takes.
const repairBatch = 4 << 20

// Repair salvages the state file in dir when the checks Check makes,
// short of bbolt's own, find it damaged: it
// copies every record it can still read into a new file, keeps what was
// pending for export (an item whose pending version was lost gets its
// content hash cleared, so its next fetch exports it again; one whose
// record was lost gets it rebuilt from its pending version; publishes in
// progress are kept for the next run to reconcile), recounts the meta's
// counters, then keeps the damaged file aside as state.db.broken-<UTC
// time> and puts the new one in its place with a rename. It holds the
// file's lock throughout: an error that matches ErrLocked is returned while
// a run holds it. Records are copied as they are stored, except the item
// records it changes. A missing or empty file, or one without a valid meta
// page, has nothing to salvage: the error then matches ErrNoState or
// ErrCorrupt.
func Repair(dir string, opts Options) (Salvage, error) {
	path := filepath.Join(dir, FileName)
	s := Salvage{Health: Health{Path: path, Records: map[string]int{}},
		Copied: map[string]int{}, Dropped: map[string]int{}, Unreadable: map[string]int{}}
	f, err := openLocked(path, true, lockTimeout(opts))
	if errors.Is(err, fs.ErrNotExist) {
		return s, fmt.Errorf("state file %s is missing: nothing to salvage: %w", path, ErrNoState)
	}
	if err != nil {
		return s, err
	}
	defer f.Close()
	recs, res, err := examine(f, &s.Health)
	switch {
	case err != nil:
		return s, err
	case s.Size == 0:
		return s, fmt.Errorf("state file %s is empty (0 bytes): nothing to salvage: %w", path, ErrNoState)
	case res == nil:
		return s, &CorruptError{Path: path, Problem: s.Problems[0] + ": nothing can be salvaged"}
	case len(s.Problems) == 0:
		return s, nil
	case recs.meta[string(keyFormat)] > formatVersion:
		// Its records may be laid out in a way this binary cannot read.
		return s, fmt.Errorf("state file %s is in format %d, newer than this binary's %d: repair it with the version that wrote it", path, recs.meta[string(keyFormat)], formatVersion)
	}
	s.Records = recs.read
	for name, n := range res.broken {
		s.Unreadable[treeOf(name)] += n // a run's pages count as its tree's
	}
	bf, err := openBoltFile(f)
	if err != nil {
		return s, err
	}
	tmp, err := salvageTo(bf, recs, &s)
	if err != nil {
		return s, fmt.Errorf("repair %s: %w", path, err)
	}
	if s.MovedTo, err = keepAside(path, time.Now()); err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return s, fmt.Errorf("repair %s: put the new file in place: %w", path, err)
	}
	return s, nil
}

// salvageTo writes what bf still holds to a new file beside it and returns
// its name.
func salvageTo(bf *boltFile, recs *recordCheck, s *Salvage) (_ string, err error) {
	tf, err := os.CreateTemp(filepath.Dir(s.Path), FileName+".repair-*")
	if err != nil {
		return "", err
	}
	tmp := tf.Name()
	_ = tf.Close()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	out, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return "", err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	c := &salvager{out: out, recs: recs, s: s, referenced: make([]bool, len(recs.versions))}
	if err := out.Update(func(tx *bolt.Tx) error {
		for _, name := range buckets {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return "", err
	}
	_ = bf.walk(c.visit)
	if err := c.flush(); err != nil {
		return "", err
	}
	if err := out.Update(c.finish); err != nil {
		return "", err
	}
	return tmp, nil
}

// salvager copies the records of a walk to the new file, in batches.
type salvager struct {
	out  *bolt.DB
	recs *recordCheck
	s    *Salvage
	// batch holds copies of records not yet written; size is their bytes.
	batch []record
	size  int
	err   error
	// referenced marks the versions of recs.versions an item points at;
	// orphans lists the kept versions none points at, known once the
	// versions, which come after the items, are read.
	referenced []bool
	orphans    []uint64
	// maxQueued is the highest queue sequence number copied.
	maxQueued uint64
}

type record struct {
	bucket string
	k, v   []byte
}

// visit copies one record, changing an item record whose pending version
// was lost, and leaving out what does not decode.
func (c *salvager) visit(bucket string, k, v []byte) {
	if c.err != nil {
		return
	}
	if err := checkRecord(bucket, k, v); err != nil {
		c.s.Dropped[treeOf(bucket)]++
		return
	}
	if bucket == string(bucketMemos) || bucket == string(bucketPagesV7) {
		// Page memos are a cache: an item whose pending version was lost
		// must be fetched whole again, not answered 304, so none is kept.
		return
	}
	switch {
	case bucket == string(bucketMeta) && isRunKey(k):
		// The repaired file has no runs (see below).
		return
	case bucket != treeOf(bucket):
		// Copied as the tree's base: the repaired file has no runs. A
		// record in a run and in the recent part (a fold cut short) keeps
		// the recent part's.
		tree := treeOf(bucket)
		if tree == string(bucketItems) {
			if c.recs.recentKeys[keyHash(k)] {
				return
			}
			v = c.item(v)
		}
		c.s.Copied[tree]++
		c.add(tree, k, v)
		return
	}
	switch bucket {
	case string(bucketItemsRecent):
		// Copied as the items bucket's: the repaired file has no recent
		// part, and a record in both (a fold cut short) keeps the recent
		// part's, which comes after.
		key, rec, _ := decodeRecentItem(v)
		c.s.Copied[bucket]++
		c.add(string(bucketItems), key, c.item(rec))
		return
	case string(bucketItems):
		v = c.item(v)
	case string(bucketVersions):
		seq := binary.BigEndian.Uint64(k)
		if seq <= c.recs.publishedSeq() {
			c.s.Dropped[bucket]++ // published: only not yet deleted
			return
		}
		if i, _ := slices.BinarySearch(c.recs.versions, seq); !c.referenced[i] {
			c.orphans = append(c.orphans, seq)
		}
	case string(bucketQueue):
		c.maxQueued = max(c.maxQueued, binary.BigEndian.Uint64(k))
	}
	c.s.Copied[bucket]++
	c.add(bucket, k, v)
}

// add copies one record to the batch, writing the batch once it is full.
func (c *salvager) add(bucket string, k, v []byte) {
	c.batch = append(c.batch, record{bucket: bucket, k: slices.Clone(k), v: slices.Clone(v)})
	c.size += len(k) + len(v)
	if c.size >= repairBatch {
		c.err = c.flush()
	}
}

// item returns an item record to copy: as it is, or, when its pending
// version was lost, with its hash cleared, so the next fetch finds it
// changed and exports it again, and with no removal, so a traversal that
// does not see it again tombstones it again.
func (c *salvager) item(v []byte) []byte {
	rec, _ := decodeItemRecord(v)
	if rec.pending == 0 || rec.pending <= c.recs.publishedSeq() {
		return v
	}
	if i, ok := slices.BinarySearch(c.recs.versions, rec.pending); ok {
		c.referenced[i] = true
		return v
	}
	rec.hash, rec.pending = [16]byte{}, 0
	rec.flags &^= itemRemoved | itemHashPublished
	c.s.Reexport++
	return rec.encode()
}

func (c *salvager) flush() error {
	if c.err != nil || len(c.batch) == 0 {
		return c.err
	}
	err := c.out.Update(func(tx *bolt.Tx) error {
		for _, r := range c.batch {
			b, err := tx.CreateBucketIfNotExists([]byte(r.bucket))
			if err != nil {
				return err
			}
			if err := b.Put(r.k, r.v); err != nil {
				return err
			}
		}
		return nil
	})
	c.batch, c.size = c.batch[:0], 0
	return err
}

// finish rebuilds the records of items whose record was lost from their
// pending version, and recounts the meta's counters from what was copied.
func (c *salvager) finish(tx *bolt.Tx) error {
	meta, items, versions := tx.Bucket(bucketMeta), tx.Bucket(bucketItems), tx.Bucket(bucketVersions)
	seenTraversal, seenPage := maxSeenMarks(tx)
	traversal, ok := c.recs.meta[string(keyTraversal)]
	if !ok {
		// Skipped pages advance their seen marks, not their items'
		// records: the highest traversal either names is the last.
		traversal = max(c.recs.maxTraversal, seenTraversal, 1)
	}
	staged := uint64(0)
	if tx.Bucket(bucketPublishing) != nil {
		staged = stagedSeq(tx)
	}
	for _, seq := range c.orphans {
		ver, err := decodeVersion(seq, versions.Get(seqKey(seq)))
		if err != nil {
			return err
		}
		key, hashed := storedKey(ver.Key)
		if items.Get(key) != nil && seq <= staged {
			// A version a publish in flight took, kept beside the item's
			// newer one (see stagedSeq): it stays for that publish.
			continue
		}
		if items.Get(key) != nil {
			// Its item points elsewhere: a stray version.
			c.s.Copied[string(bucketVersions)]--
			c.s.Dropped[string(bucketVersions)]++
			if err := versions.Delete(seqKey(seq)); err != nil {
				return err
			}
			continue
		}
		rec := itemRecord{traversal: traversal, pending: seq, url: ver.URL}
		rec.hash, _ = hashBytes(ver.Hash)
		switch ver.Change {
		case ChangeChanged:
			rec.flags = itemPublished
		case ChangeRemoved:
			rec.flags = itemPublished | itemRemoved
		}
		if hashed {
			rec.flags |= itemFullKey
			rec.key = ver.Key
		}
		if err := items.Put(key, rec.encode()); err != nil {
			return err
		}
		c.s.Rebuilt++
	}
	r := c.recs
	_, hadMeta := r.meta[string(keyFormat)]
	if !hadMeta {
		if err := putUint(meta, keyFormat, formatVersion); err != nil {
			return err
		}
	}
	kept := c.s.Copied[string(bucketVersions)]
	c.s.LostPending = max(int(r.meta[string(keyPendingCount)])-r.read[string(bucketVersions)], 0)
	c.s.Incomplete = !hadMeta || c.s.Unreadable[""] > 0 ||
		c.s.Unreadable[string(bucketQueue)]+c.s.Dropped[string(bucketQueue)] > 0 ||
		c.s.Unreadable[string(bucketFailed)]+c.s.Dropped[string(bucketFailed)] > 0
	gaps := r.meta[string(keyTraversalGaps)]
	if c.s.Incomplete {
		gaps++
	}
	maxPending := r.meta[string(keyPendingSeq)]
	for _, seq := range slices.Concat(r.versions, r.pointers) {
		maxPending = max(maxPending, seq)
	}
	for _, kv := range []struct {
		key []byte
		v   uint64
	}{
		{keyTraversal, traversal},
		{keySeq, max(r.meta[string(keySeq)], c.maxQueued+1)},
		{keyPendingSeq, maxPending},
		{keyPendingCount, uint64(kept)},
		{keyPublishedSeq, r.publishedSeq()},
		{keyTraversalGaps, gaps},
		// A page number given out again would share its memo key.
		{keyPageSeq, max(r.meta[string(keyPageSeq)], seenPage)},
	} {
		if err := putUint(meta, kv.key, kv.v); err != nil {
			return err
		}
	}
	return nil
}

// maxSeenMarks is the highest traversal and the highest page number the
// seen set names, in either layout: a damaged format 8 file is repaired as
// it is, and upgraded when it is next opened.
func maxSeenMarks(tx *bolt.Tx) (traversal, page uint64) {
	if b := tx.Bucket(bucketSeenV8); b != nil {
		_ = b.ForEach(func(_, v []byte) error {
			m := decodeSeenV8(v)
			traversal, page = max(traversal, m.traversal), max(page, m.page)
			return nil
		})
	}
	if b := tx.Bucket(bucketURLs); b != nil {
		_ = b.ForEach(func(_, v []byte) error {
			p, first := decodeIndex(v)
			traversal, page = max(traversal, first), max(page, p)
			return nil
		})
	}
	if b := tx.Bucket(bucketURLRuns); b != nil {
		_ = b.ForEachBucket(func(name []byte) error {
			return b.Bucket(name).ForEach(func(_, v []byte) error {
				p, first := decodeIndex(v)
				traversal, page = max(traversal, first), max(page, p)
				return nil
			})
		})
	}
	if b := tx.Bucket(bucketURLsRecent); b != nil {
		_ = b.ForEach(func(k, v []byte) error {
			if _, e, ok := decodeRecent(k, v); ok {
				traversal, page = max(traversal, e.first), max(page, e.page)
			}
			return nil
		})
	}
	if b := tx.Bucket(bucketMarks); b != nil {
		_ = b.ForEach(func(k, v []byte) error {
			t, _ := decodeMark(v)
			traversal, page = max(traversal, t), max(page, decodePage(k))
			return nil
		})
	}
	if b := tx.Bucket(bucketSkips); b != nil {
		_ = b.ForEach(func(k, v []byte) error {
			if t, n, ok := decodeSkipKey(k); ok {
				traversal = max(traversal, t)
				eachChunkPage(v, n, func(p uint64) { page = max(page, p) })
			}
			return nil
		})
	}
	return traversal, page
}
