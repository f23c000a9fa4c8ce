package state

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
)

// recordCheck decodes the records a walk of the tree hands it, bucket by
// bucket, and keeps what the checks across buckets need: which versions
// the log holds, which ones items point at, and the meta's counters.
type recordCheck struct {
	// read counts the records read per bucket; bad those that do not
	// decode, first says what was wrong with the first of them.
	read, bad map[string]int
	first     map[string]string
	meta      map[string]uint64
	// versions lists the sequence numbers of the versions that decode, in
	// order; pointers, the pending versions item records point at.
	versions, pointers []uint64
	// keyed are the pointers with a hash of their item's key, and
	// recentKeys the hashes of the keys the records' recent part holds: a
	// record there stands before the items bucket's (see recentitems.go).
	keyed      []keyedPointer
	recentKeys map[uint64]bool
	// publishedMax is the highest sequence number a committed publish
	// took, by its record.
	publishedMax uint64
	// maxTraversal is the highest traversal an item record names.
	maxTraversal uint64
}

func newRecordCheck() *recordCheck {
	return &recordCheck{read: map[string]int{}, bad: map[string]int{}, first: map[string]string{}, meta: map[string]uint64{},
		recentKeys: map[uint64]bool{}}
}

// keyedPointer is an item record's pending version, with a hash of the
// item's stored key and whether the record is in the recent part.
type keyedPointer struct {
	key    uint64
	seq    uint64
	recent bool
}

// keyHash is a 64-bit FNV-1a hash of an item's stored key.
func keyHash(key []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(key)
	return h.Sum64()
}

// visit decodes one record and notes what the checks across buckets
// need.
func (c *recordCheck) visit(bucket string, k, v []byte) {
	// A run's records count as its tree's (see runs.go).
	bucket = treeOf(bucket)
	c.read[bucket]++
	if err := checkRecord(bucket, k, v); err != nil {
		if c.bad[bucket] == 0 {
			c.first[bucket] = fmt.Sprintf("key %q: %v", k, err)
		}
		c.bad[bucket]++
		return
	}
	switch bucket {
	case string(bucketMeta):
		c.meta[string(k)] = binary.BigEndian.Uint64(v)
	case string(bucketItems), string(bucketItemsRecent):
		key := k
		if bucket == string(bucketItemsRecent) {
			key, v, _ = decodeRecentItem(v)
			c.recentKeys[keyHash(key)] = true
		}
		rec, _ := decodeItemRecord(v)
		if rec.pending != 0 {
			c.pointers = append(c.pointers, rec.pending)
			c.keyed = append(c.keyed, keyedPointer{key: keyHash(key), seq: rec.pending, recent: bucket == string(bucketItemsRecent)})
		}
		c.maxTraversal = max(c.maxTraversal, rec.traversal)
	case string(bucketVersions):
		c.versions = append(c.versions, binary.BigEndian.Uint64(k))
	case string(bucketPublished):
		var p Publication
		_ = json.Unmarshal(v, &p)
		c.publishedMax = max(c.publishedMax, p.MaxSeq)
	}
}

// checkRecord decodes one record of a bucket and says why it does not
// decode; the records of a bucket this package does not know, and the
// format 8 seen set's, always do.
func checkRecord(bucket string, k, v []byte) error {
	switch treeOf(bucket) {
	case string(bucketMeta):
		if len(v) != 8 {
			return fmt.Errorf("value of %d bytes, not 8", len(v))
		}
	case string(bucketQueue), string(bucketFailed):
		if bucket == string(bucketQueue) && len(k) != 8 {
			return fmt.Errorf("key of %d bytes, not 8", len(k))
		}
		_, err := decodeEntry(v)
		return err
	case string(bucketItems):
		_, err := decodeItemRecord(v)
		return err
	case string(bucketItemsRecent):
		if len(k) != 8 {
			return fmt.Errorf("key of %d bytes, not 8", len(k))
		}
		_, rec, ok := decodeRecentItem(v)
		if !ok {
			return errRecentItem
		}
		_, err := decodeItemRecord(rec)
		return err
	case string(bucketVersions):
		if len(k) != 8 {
			return fmt.Errorf("key of %d bytes, not 8", len(k))
		}
		_, err := decodeVersion(binary.BigEndian.Uint64(k), v)
		return err
	case string(bucketPublishing), string(bucketPublished):
		var p Publication
		return json.Unmarshal(v, &p)
	case string(bucketMemos):
		if len(k) != 8 {
			return fmt.Errorf("key of %d bytes, not 8", len(k))
		}
		_, err := decodeMemo(v)
		return err
	case string(bucketPagesV7):
		_, err := decodeMemo(v)
		return err
	case string(bucketURLs):
		if page, _ := decodeIndex(v); page == 0 {
			return fmt.Errorf("URL index value %x is not a page number and a traversal", v)
		}
	case string(bucketURLsRecent):
		if _, _, ok := decodeRecent(k, v); !ok {
			return fmt.Errorf("recent URL index entry %x: %x is not a page number, a URL hash and a traversal", k, v)
		}
	case string(bucketMarks):
		if decodePage(k) == 0 {
			return fmt.Errorf("page number key of %d bytes, not 8 and not 0", len(k))
		}
		if !validMark(v) {
			return fmt.Errorf("seen mark %x is not two varints", v)
		}
	case string(bucketSkips):
		if _, _, ok := decodeSkipKey(k); !ok {
			return fmt.Errorf("skip bitmap key of %d bytes, not 16", len(k))
		}
		if len(v) != skipChunkBytes {
			return fmt.Errorf("skip bitmap chunk of %d bytes, not %d", len(v), skipChunkBytes)
		}
	case string(bucketMoves):
		if len(v) < 8 {
			return fmt.Errorf("proposed move of %d bytes is too short", len(v))
		}
		_, err := decodeVersion(0, v[8:])
		return err
	}
	return nil
}

// publishedSeq is the highest sequence number a committed publish took: a
// version at or below it was published.
func (c *recordCheck) publishedSeq() uint64 {
	return max(c.meta[string(keyPublishedSeq)], c.publishedMax)
}

// holds reports whether the log holds a pending version with this
// sequence number that no committed publish took.
func (c *recordCheck) holds(seq uint64) bool {
	_, ok := slices.BinarySearch(c.versions, seq)
	return ok && seq > c.publishedSeq()
}

// dangling counts the item records whose pending version the log does not
// hold: the versions were lost. A record of the items bucket that the
// recent part holds too (a fold cut short) is not read, and not counted.
func (c *recordCheck) dangling() int {
	n := 0
	for _, p := range c.keyed {
		if (p.recent || !c.recentKeys[p.key]) && p.seq > c.publishedSeq() && !c.holds(p.seq) {
			n++
		}
	}
	return n
}

// problems lists what the records say is wrong: records that do not
// decode, and counters and pointers that do not match the records.
func (c *recordCheck) problems() []string {
	var out []string
	for _, b := range slices.Sorted(maps.Keys(c.bad)) {
		out = append(out, fmt.Sprintf("%s: %d records do not decode (the first: %s)", b, c.bad[b], c.first[b]))
	}
	if n := c.dangling(); n > 0 {
		out = append(out, fmt.Sprintf("items: %d records point at a pending version the log does not hold", n))
	}
	if count, ok := c.meta[string(keyPendingCount)]; ok && count != uint64(c.read[string(bucketVersions)]) {
		out = append(out, fmt.Sprintf("meta: %d versions are counted pending, the log holds %d", count, c.read[string(bucketVersions)]))
	}
	return out
}
