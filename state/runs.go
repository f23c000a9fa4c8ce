package state

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// The URL index and the item records are each keyed by their own keys
// (URL hash, item key), so a large crawl makes each a tree far larger than
// the page cache a memory limit leaves. A fold that wrote a recent part
// into one such tree read and rewrote most of its leaves: at 1,000,000
// items under a 64 MiB limit, every fold read most of a tree of some
// 35,000 leaves from disk, slower each time. So each is kept as sorted
// runs instead: a fold writes its recent part, in key order, into a new
// bucket of its own (a run), appending to it and reading nothing; once
// mergeFanIn runs are of one size, they are merged into one, read and
// written in key order too (see merge.go). A key is in one run
// at a time. The runs are buckets inside the tree's runs bucket, named by
// a number that grows (a newer run has a higher one); a state written
// before format 11 keeps its tree where it was, as the base, the oldest
// run of all, which is never merged. Each run has a Bloom filter of its
// keys (see keyfilter.go), so a lookup reads only the runs that may hold
// the key: about one leaf for a key that is there, rarely any for one that
// is not.
//
// A fold marks its run filling in the meta bucket until the recent part
// has let go of what it wrote; a fold cut short by a crash leaves the mark,
// and the next fold writes to that run again rather than to a new one, so
// a key is never in two runs. A merge marks its new run merging until the
// transaction that deletes the runs it merged; a merge cut short leaves a
// run that Open deletes.
//
// Readers of the URL index (see DB.readSeen) hold the recent part's read
// lock for as long as their transaction: a run joins the list a view reads
// before its bucket holds anything (a view that misses the bucket skips
// it), and merged runs leave the list only after the transaction that
// deleted them, under the write lock, so no reader holds a list without a
// run its snapshot needs.

var (
	// bucketURLRuns holds the URL index's runs, bucketItemRuns the item
	// records'.
	bucketURLRuns  = []byte("urls_runs")
	bucketItemRuns = []byte("items_runs")
)

// runSet is one tree kept as sorted runs.
type runSet struct {
	// mu is the lock of the recent part's map, which readers hold (see
	// above); only the writer changes runs, under it.
	mu *sync.RWMutex
	// container is the bucket of the runs, base the tree before format 11.
	container, base []byte
	// filling and merging are the meta keys of the run a fold fills and of
	// the run a merge writes.
	filling, merging []byte
	// baseFilter holds the base's keys; baseCount counts them. Until load
	// filled them (loaded), lookups read the base.
	baseFilter *keyFilter
	baseCount  int
	loaded     bool
	// runs lists the runs, oldest first; fill is the number of the run a
	// fold fills, 0 for none.
	runs []run
	fill uint64
	// writes counts the writes and deletes to runs other than a fold's
	// and a merge's own: a merge that finds the count changed between its
	// transactions starts again.
	writes uint64
}

// run is one run of a runSet.
type run struct {
	id     uint64
	name   []byte
	filter *keyFilter
	// count is how many keys it holds, about: a key deleted may still be
	// counted.
	count int
}

// runName is the bucket name of run id: 16 hex digits, so that names sort
// as numbers do.
func runName(id uint64) []byte { return fmt.Appendf(make([]byte, 0, 16), "%016x", id) }

// newRunSet returns the runs of a tree, none loaded yet.
func newRunSet(mu *sync.RWMutex, container, base []byte) *runSet {
	return &runSet{mu: mu, container: container, base: base,
		filling: append(append([]byte(nil), container...), "_filling"...),
		merging: append(append([]byte(nil), container...), "_merging"...)}
}

// load reads the runs' keys into their filters and counts them, and the
// base's, which is sized for at least baseHint keys. It runs once, at
// Open, after a merge cut short was undone.
func (s *runSet) load(tx *bolt.Tx, baseHint uint) {
	s.baseFilter, s.baseCount = fillKeyFilter(tx.Bucket(s.base), baseHint)
	meta, container := tx.Bucket(bucketMeta), tx.Bucket(s.container)
	var runs []run
	_ = container.ForEachBucket(func(k []byte) error {
		id, ok := parseRunName(k)
		if !ok {
			return nil // not a run: state check names it
		}
		f, n := fillKeyFilter(container.Bucket(k), uint(getUint(meta, s.countKey(k))))
		runs = append(runs, run{id: id, name: bytes.Clone(k), filter: f, count: n})
		return nil
	})
	s.runs, s.fill, s.loaded = runs, getUint(meta, s.filling), true
}

// parseRunName returns the number of the run named k; ok is false for a
// name runName did not write.
func parseRunName(k []byte) (id uint64, ok bool) {
	if len(k) != 16 {
		return 0, false
	}
	for _, c := range k {
		switch {
		case '0' <= c && c <= '9':
			id = id<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			id = id<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return id, id != 0
}

// countKey is the meta key of how many keys the run named name held when
// it was written: what Open sizes its filter for.
func (s *runSet) countKey(name []byte) []byte {
	return append(append(append(make([]byte, 0, len(s.container)+1+len(name)), s.container...), '/'), name...)
}

// undoMerge deletes the run of a merge cut short, if any.
func (s *runSet) undoMerge(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	id := getUint(meta, s.merging)
	if id == 0 {
		return nil
	}
	name := runName(id)
	if tx.Bucket(s.container).Bucket(name) != nil {
		if err := tx.Bucket(s.container).DeleteBucket(name); err != nil {
			return err
		}
	}
	if err := meta.Delete(s.countKey(name)); err != nil {
		return err
	}
	return meta.Delete(s.merging)
}

// nextID is the number of the next run made.
func (s *runSet) nextID() uint64 {
	if len(s.runs) == 0 {
		return 1
	}
	return s.runs[len(s.runs)-1].id + 1
}

// setRuns replaces the list of runs, under the write lock.
func (s *runSet) setRuns(runs []run) {
	s.mu.Lock()
	s.runs = runs
	s.mu.Unlock()
}

// index returns the position in the list of the run id, -1 for none.
func (s *runSet) index(id uint64) int {
	for i, r := range s.runs {
		if r.id == id {
			return i
		}
	}
	return -1
}

// foldTarget returns the run a fold writes to: the one a fold cut short
// was filling, or else a new one, made and marked filling in a
// transaction of its own, sized for unit keys.
func (db *DB) foldTarget(s *runSet, unit int) (run, error) {
	if i := s.index(s.fill); s.fill != 0 && i >= 0 {
		return s.runs[i], nil
	}
	r := run{id: s.nextID(), filter: newKeyFilter(uint(unit))}
	r.name = runName(r.id)
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		if _, err := tx.Bucket(s.container).CreateBucket(r.name); err != nil {
			return err
		}
		return putUint(tx.Bucket(bucketMeta), s.filling, r.id)
	})
	if err != nil {
		return run{}, err
	}
	s.fill = r.id
	s.setRuns(append(slices.Clone(s.runs), r))
	return r, nil
}

// appendTo returns the bucket of the run named name in tx, to append to in
// key order: the bucket a fold or a merge writes.
func (s *runSet) appendTo(tx *bolt.Tx, name []byte) (*bolt.Bucket, error) {
	out := tx.Bucket(s.container).Bucket(name)
	if out == nil {
		return nil, fmt.Errorf("run %s of %s is missing", name, s.container)
	}
	out.FillPercent = 1.0 // appended in key order
	return out, nil
}

// seal unmarks the run a fold filled, in the transaction that ends the
// fold, and records how many keys it holds, which it returns.
func (s *runSet) seal(tx *bolt.Tx) (int, error) {
	meta, name := tx.Bucket(bucketMeta), runName(s.fill)
	if err := meta.Delete(s.filling); err != nil {
		return 0, err
	}
	n := 0
	if b := tx.Bucket(s.container).Bucket(name); b != nil {
		n = b.Stats().KeyN
	}
	return n, putUint(meta, s.countKey(name), uint64(n))
}

// sealed notes that the transaction seal ran in committed: the run holds
// n keys and no fold fills it.
func (s *runSet) sealed(n int) {
	if i := s.index(s.fill); i >= 0 {
		runs := slices.Clone(s.runs)
		runs[i].count = n
		s.setRuns(runs)
	}
	s.fill = 0
}

// runsView is a runSet as one transaction sees it.
type runsView struct {
	set  *runSet
	runs []run
	tx   *bolt.Tx
	// base, container and buckets are opened as lookups need them
	// (rooted says base and container are): buckets[i] is runs[i]'s, nil
	// when the transaction has none (yet, or any more). A reader whose
	// keys are all in the recent part opens none.
	rooted          bool
	base, container *bolt.Bucket
	buckets         []*bolt.Bucket
	opened          []bool
	// getters[i] looks keys up in buckets[i], the last one in the base
	// (see bucketGetter).
	getters []bucketGetter
}

// view returns the runs as tx sees them. A reader calls it inside
// DB.readSeen, the writer anywhere.
func (s *runSet) view(tx *bolt.Tx) *runsView {
	n := len(s.runs)
	return &runsView{set: s, runs: s.runs, tx: tx,
		buckets: make([]*bolt.Bucket, n), opened: make([]bool, n), getters: make([]bucketGetter, n+1)}
}

// root opens the base and the container, once.
func (v *runsView) root() {
	if !v.rooted {
		v.rooted = true
		v.base, v.container = v.tx.Bucket(v.set.base), v.tx.Bucket(v.set.container)
	}
}

// bucket returns the bucket of the view's run i, nil when the
// transaction has none.
func (v *runsView) bucket(i int) *bolt.Bucket {
	if !v.opened[i] {
		v.opened[i] = true
		if v.root(); v.container != nil {
			v.buckets[i] = v.container.Bucket(v.runs[i].name)
		}
	}
	return v.buckets[i]
}

// locate returns the value of key and the bucket and run (-1: the base)
// that hold it; b is nil when none does.
func (v *runsView) locate(key []byte) (val []byte, b *bolt.Bucket, at int) {
	if len(v.runs) == 0 && v.set.loaded && v.set.baseCount == 0 {
		return nil, nil, -1
	}
	locations := filterLocations(key)
	for i := len(v.runs) - 1; i >= 0; i-- {
		if !v.runs[i].filter.mayHoldAt(locations) {
			continue
		}
		if b := v.bucket(i); b != nil {
			if val := v.lookup(i, b, key); val != nil {
				return val, b, i
			}
		}
	}
	if v.root(); v.base != nil && (!v.set.loaded || v.set.baseCount > 0 && v.set.baseFilter.mayHoldAt(locations)) {
		if val := v.lookup(len(v.runs), v.base, key); val != nil {
			return val, v.base, -1
		}
	}
	return nil, nil, -1
}

// lookup returns the value of key in b, nil when b does not hold it,
// through the getter kept at i.
func (v *runsView) lookup(i int, b *bolt.Bucket, key []byte) []byte {
	g := &v.getters[i]
	g.b = b
	return g.get(key)
}

// get returns the value of key, nil when no run holds it.
func (v *runsView) get(key []byte) []byte {
	val, _, _ := v.locate(key)
	return val
}

// putWhere writes key's value in the run that holds it; found is false,
// and nothing written, when none does.
func (v *runsView) putWhere(key, val []byte) (found bool, err error) {
	_, b, _ := v.locate(key)
	if b == nil {
		return false, nil
	}
	v.set.writes++
	return true, b.Put(key, val)
}

// delete takes key out of the run that holds it.
func (v *runsView) delete(key []byte) error {
	_, b, _ := v.locate(key)
	if b == nil {
		return nil
	}
	v.set.writes++
	return b.Delete(key)
}

// forEach calls fn for every key of the runs, the base's first, then the
// runs' from the oldest.
func (v *runsView) forEach(fn func(k, val []byte) error) error {
	if v.root(); v.base != nil {
		if err := v.base.ForEach(fn); err != nil {
			return err
		}
	}
	for i := range v.runs {
		if b := v.bucket(i); b != nil {
			if err := b.ForEach(fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// cursor returns a cursor over every key of the runs in key order.
func (v *runsView) cursor() *mergedCursor {
	var cursors []*bolt.Cursor
	for i := len(v.runs) - 1; i >= 0; i-- {
		if b := v.bucket(i); b != nil {
			cursors = append(cursors, b.Cursor())
		}
	}
	if v.root(); v.base != nil {
		cursors = append(cursors, v.base.Cursor())
	}
	return newMergedCursor(cursors)
}

// mergedCursor walks several buckets' cursors as one, in key order; a key
// in more than one is given once, as the first cursor holding it has it.
type mergedCursor struct {
	cursors    []*bolt.Cursor
	keys, vals [][]byte
}

func newMergedCursor(cursors []*bolt.Cursor) *mergedCursor {
	return &mergedCursor{cursors: cursors, keys: make([][]byte, len(cursors)), vals: make([][]byte, len(cursors))}
}

// first moves to the first key and returns it, nil when there is none.
func (m *mergedCursor) first() (k, v []byte) {
	for i, c := range m.cursors {
		m.keys[i], m.vals[i] = c.First()
	}
	return m.current()
}

// seek moves to the first key at or after key and returns it.
func (m *mergedCursor) seek(key []byte) (k, v []byte) {
	for i, c := range m.cursors {
		m.keys[i], m.vals[i] = c.Seek(key)
	}
	return m.current()
}

// next moves past the current key and returns the next.
func (m *mergedCursor) next() (k, v []byte) {
	at := m.lowest()
	if at < 0 {
		return nil, nil
	}
	low := m.keys[at]
	for i, c := range m.cursors {
		if i != at && m.keys[i] != nil && bytes.Equal(m.keys[i], low) {
			m.keys[i], m.vals[i] = c.Next()
		}
	}
	m.keys[at], m.vals[at] = m.cursors[at].Next()
	return m.current()
}

// current returns the lowest key the cursors are at, with the value of
// the first that holds it; nil when all are past their last key.
func (m *mergedCursor) current() (k, v []byte) {
	if at := m.lowest(); at >= 0 {
		return m.keys[at], m.vals[at]
	}
	return nil, nil
}

// lowest is the first cursor at the lowest key, -1 when all are past
// their last key.
func (m *mergedCursor) lowest() int {
	at := -1
	for i, key := range m.keys {
		if key != nil && (at < 0 || bytes.Compare(key, m.keys[at]) < 0) {
			at = i
		}
	}
	return at
}

// treeOf names the tree whose records a bucket holds: the base's name for
// a run's bucket, the bucket's own for any other.
func treeOf(bucket string) string {
	for _, t := range [...][2][]byte{{bucketURLRuns, bucketURLs}, {bucketItemRuns, bucketItems}} {
		if strings.HasPrefix(bucket, string(t[0])+"/") {
			return string(t[1])
		}
	}
	return bucket
}

// isRunKey reports whether a meta key is a runs': a run's count, or the
// run a fold fills or a merge writes.
func isRunKey(k []byte) bool {
	return bytes.HasPrefix(k, bucketURLRuns) || bytes.HasPrefix(k, bucketItemRuns)
}

// bucketGetter looks keys up in one bucket through a cursor it keeps: a
// cursor that seeks again reuses its stack, where bbolt's Get makes a new
// cursor and grows its stack for every lookup.
//
// In a read transaction it also steps: a key after the one the cursor is
// on is first looked for in the next entry, which is on the same page
// most of the time, before it seeks from the root. Item pages are
// numbered in the order their listing linked them, so a rerun's reads of
// a listing's item memos go key after key. A write transaction seeks
// every time: bbolt's cursor is not to be trusted after a Put.
type bucketGetter struct {
	b *bolt.Bucket
	c *bolt.Cursor
	// tx and name, when b is nil, name the bucket to open at the first
	// lookup; a bucket tx does not hold answers nothing.
	tx   *bolt.Tx
	name []byte
	// steps says the getter may step (a read transaction's); at is the
	// key the cursor is on, nil before the first lookup and at the end.
	steps bool
	at    []byte
}

// get returns the value of key, nil when the bucket does not hold it.
func (g *bucketGetter) get(key []byte) []byte {
	if g.c == nil {
		if g.b == nil && g.tx != nil {
			g.b = g.tx.Bucket(g.name)
		}
		if g.b == nil {
			return nil
		}
		g.c = g.b.Cursor()
	}
	if g.steps && g.at != nil && bytes.Compare(key, g.at) > 0 {
		k, v := g.c.Next()
		g.at = k
		switch c := bytes.Compare(k, key); {
		case k == nil || c > 0:
			return nil // the entry after the one before key is past it
		case c == 0:
			return v
		}
	}
	k, v := g.c.Seek(key)
	g.at = k
	if bytes.Equal(k, key) {
		return v
	}
	return nil
}
