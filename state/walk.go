package state

import (
	"bytes"
	"fmt"
)

// maxDepth bounds how deep a page tree may nest: bbolt's trees are a few
// levels deep, so a deeper one has a loop in it.
const maxDepth = 64

// maxProblems bounds how many problems a walk lists; it counts the rest.
const maxProblems = 20

// walkResult is what a walk of the page tree found.
type walkResult struct {
	// problems lists what is wrong, the first maxProblems of them; more
	// counts the others.
	problems []string
	more     int
	// broken counts, per bucket, the pages that could not be read: the
	// records on them, and below them, are lost.
	broken map[string]int
}

func (r *walkResult) add(format string, args ...any) {
	if len(r.problems) < maxProblems {
		r.problems = append(r.problems, fmt.Sprintf(format, args...))
		return
	}
	r.more++
}

// summary puts the problems in one line: the first, and how many more
// there are; "" when there are none.
func (r *walkResult) summary() string {
	switch n := len(r.problems) - 1 + r.more; {
	case len(r.problems) == 0:
		return ""
	case n == 0:
		return r.problems[0]
	default:
		return fmt.Sprintf("%s (and %d more problems)", r.problems[0], n)
	}
}

// all lists every problem, the count of the unlisted ones last.
func (r *walkResult) all() []string {
	out := append([]string(nil), r.problems...)
	if r.more > 0 {
		out = append(out, fmt.Sprintf("and %d more problems", r.more))
	}
	return out
}

// walker reads every page reachable from the meta's root with plain reads,
// checking what bbolt relies on when it reads them through its memory map:
// each page is in the file and below the high-water mark, says it is the
// page its parent points at, is a branch or a leaf, is reached once, and
// holds its elements, keys and values within itself, keys in order. A page
// that fails is skipped with what is below it; the walk goes on.
type walker struct {
	bf    *boltFile
	visit func(bucket string, k, v []byte)
	res   walkResult
	// used marks the pages reached.
	used []uint64
	// bufs holds one page buffer per depth: a parent's stays valid while
	// its children are read, so its keys can bound theirs.
	bufs [][]byte
}

// walk reads the whole tree. visit, when not nil, gets every record of
// every bucket in key order; the slices are valid only during the call. A
// bucket inside a bucket is named parent/child.
func (bf *boltFile) walk(visit func(bucket string, k, v []byte)) walkResult {
	w := &walker{bf: bf, visit: visit, used: make([]uint64, bf.meta.pgid/64+1)}
	w.res.broken = map[string]int{}
	w.tree("", bf.meta.root, 0, nil, nil)
	w.checkFreelist()
	return w.res
}

// label names a bucket in a problem; "" is the list of buckets.
func label(bucket string) string {
	if bucket == "" {
		return "the bucket list"
	}
	return bucket
}

func (w *walker) isUsed(id uint64) bool { return w.used[id/64]&(1<<(id%64)) != 0 }

// tree walks the pages of one bucket's tree from page id. lo and hi bound
// its keys (hi excluded); nil is no bound.
func (w *walker) tree(bucket string, id uint64, depth int, lo, hi []byte) {
	where := label(bucket)
	if depth >= maxDepth {
		w.res.add("%s: page %d is nested more than %d levels deep", where, id, maxDepth)
		w.res.broken[bucket]++
		return
	}
	for len(w.bufs) <= depth {
		w.bufs = append(w.bufs, nil)
	}
	page, err := w.bf.readPage(id, w.bufs[depth], pageBranch, pageLeaf)
	w.bufs[depth] = page
	if err == nil {
		err = w.claim(id, readHeader(page).overflow)
	}
	if err != nil {
		w.res.add("%s: %v", where, err)
		w.res.broken[bucket]++
		return
	}
	w.elements(bucket, page, id, depth, lo, hi)
}

// claim marks a page and its overflow pages used, or says which one was
// reached before.
func (w *walker) claim(id uint64, overflow uint32) error {
	for p := id; p <= id+uint64(overflow); p++ {
		if w.isUsed(p) {
			return fmt.Errorf("page %d is reached twice", p)
		}
	}
	for p := id; p <= id+uint64(overflow); p++ {
		w.used[p/64] |= 1 << (p % 64)
	}
	return nil
}

// elements checks and walks the elements of a page already read: a page
// of the file, or an inline bucket's page inside a value (id 0).
func (w *walker) elements(bucket string, page []byte, id uint64, depth int, lo, hi []byte) {
	where := label(bucket)
	h := readHeader(page)
	if uint64(h.count)*elemSize > uint64(len(page)-pageHeaderSize) {
		w.res.add("%s: page %d claims %d elements, more than it holds", where, id, h.count)
		w.res.broken[bucket]++
		return
	}
	prev := lo
	for i := range int(h.count) {
		at := pageHeaderSize + i*elemSize
		e := page[at : at+elemSize]
		var pos, ksize, vsize uint64
		if h.flags == pageBranch {
			pos, ksize = uint64(native.Uint32(e)), uint64(native.Uint32(e[4:]))
		} else {
			pos, ksize, vsize = uint64(native.Uint32(e[4:])), uint64(native.Uint32(e[8:])), uint64(native.Uint32(e[12:]))
		}
		start := uint64(at) + pos
		if start+ksize+vsize > uint64(len(page)) {
			w.res.add("%s: page %d: element %d lies outside the page", where, id, i)
			w.res.broken[bucket]++
			return
		}
		key := page[start : start+ksize]
		if (prev != nil && bytes.Compare(key, prev) < 0) || (i > 0 && bytes.Equal(key, prev)) || (hi != nil && bytes.Compare(key, hi) >= 0) {
			w.res.add("%s: page %d: key %d is out of order", where, id, i)
			w.res.broken[bucket]++
			return
		}
		prev = key
		if h.flags == pageBranch {
			var next []byte
			if i+1 < int(h.count) {
				next = w.branchKey(page, i+1)
			} else {
				next = hi
			}
			w.tree(bucket, native.Uint64(e[8:]), depth+1, key, next)
			continue
		}
		value := page[start+ksize : start+ksize+vsize]
		if native.Uint32(e)&leafBucket != 0 {
			w.bucket(bucket, key, value, depth)
			continue
		}
		if bucket == "" {
			w.res.add("the bucket list: page %d holds a record that is not a bucket", id)
			continue
		}
		if w.visit != nil {
			w.visit(bucket, key, value)
		}
	}
}

// branchKey is the key of a branch page's element i, or nil when it lies
// outside the page (which the element's own turn reports).
func (w *walker) branchKey(page []byte, i int) []byte {
	e := page[pageHeaderSize+i*elemSize:]
	start := uint64(pageHeaderSize+i*elemSize) + uint64(native.Uint32(e))
	end := start + uint64(native.Uint32(e[4:]))
	if end > uint64(len(page)) {
		return nil
	}
	return page[start:end]
}

// bucket walks the bucket named key inside parent, whose value is its
// header and, for an inline bucket, its page.
func (w *walker) bucket(parent string, key, value []byte, depth int) {
	name := string(key)
	if parent != "" {
		name = parent + "/" + name
	}
	if len(value) < bucketHeaderSize {
		w.res.add("%s: its header is cut short", name)
		w.res.broken[name]++
		return
	}
	root := native.Uint64(value)
	if root != 0 {
		w.tree(name, root, depth+1, nil, nil)
		return
	}
	inline := value[bucketHeaderSize:]
	if len(inline) < pageHeaderSize || readHeader(inline).flags != pageLeaf {
		w.res.add("%s: its inline page is not a leaf", name)
		w.res.broken[name]++
		return
	}
	w.elements(name, inline, 0, depth+1, nil, nil)
}

// checkFreelist checks the free list, when the file has one, against the
// pages the walk reached: a page both free and in use would be handed out
// twice, and a page neither is lost.
func (w *walker) checkFreelist() {
	m := w.bf.meta
	if m.freelist == noFreelist {
		return
	}
	ids, err := w.bf.freePages()
	if err != nil {
		w.res.add("the free list: %v", err)
		return
	}
	free := make([]uint64, len(w.used))
	for _, id := range ids {
		switch {
		case w.isUsed(id):
			w.res.add("the free list: page %d is free and in use", id)
		case free[id/64]&(1<<(id%64)) != 0:
			w.res.add("the free list: page %d is listed twice", id)
		}
		free[id/64] |= 1 << (id % 64)
	}
	var head [pageHeaderSize]byte
	if w.bf.readAt(head[:], m.freelist*m.pageSize) != nil {
		return
	}
	lost := 0
	for id := uint64(2); id < m.pgid; id++ {
		own := id >= m.freelist && id <= m.freelist+uint64(readHeader(head[:]).overflow)
		if !own && !w.isUsed(id) && free[id/64]&(1<<(id%64)) == 0 {
			lost++
		}
	}
	if lost > 0 {
		w.res.add("%d pages are neither in use nor free", lost)
	}
}
