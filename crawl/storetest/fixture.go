package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
)

// fixture drives a store as the engine does: it keeps the engine's next
// sequence number and fails the test on any store error.
type fixture struct {
	t *testing.T
	s crawl.Store
	// next is the first sequence number the engine has not given out.
	next uint64
	// traversal is the one the last Begin worked on.
	traversal uint64
	// pages counts the listing pages yield made up.
	pages int
}

// The suite's URLs.
const (
	startURL  = "http://shop.test/"
	start2URL = "http://shop.test/sale"
)

func start(u string) crawl.Entry   { return crawl.Entry{URL: u, Kind: crawl.KindListing, Start: true} }
func listing(u string) crawl.Entry { return crawl.Entry{URL: u, Kind: crawl.KindListing} }
func item(u string) crawl.Entry    { return crawl.Entry{URL: u, Kind: crawl.KindItem} }
func itemURL(n int) string         { return fmt.Sprintf("http://shop.test/item/%d", n) }

// hash is a content hash as crawl.ItemVersion holds one: 32 hex digits.
func hash(n int) string { return fmt.Sprintf("%032x", n) }

// version is an item with key key at page url whose values hash to h.
func version(key, url string, h int) crawl.ItemVersion {
	return crawl.ItemVersion{Key: key, URL: url, Hash: hash(h), Values: []any{key, int64(h)},
		FetchedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), RunID: "storetest"}
}

func (f *fixture) begin(starts ...crawl.Entry) crawl.Start {
	f.t.Helper()
	st, err := f.s.Begin(starts)
	if err != nil {
		f.t.Fatalf("Begin: %v", err)
	}
	if st.NextSeq < 1 {
		f.t.Fatalf("Begin: next sequence number %d, want at least 1", st.NextSeq)
	}
	f.next, f.traversal = st.NextSeq, st.Traversal
	return st
}

// read returns the whole queue.
func (f *fixture) read() []crawl.Queued {
	f.t.Helper()
	qs, err := f.s.Read(0, 1<<20)
	if err != nil {
		f.t.Fatalf("Read: %v", err)
	}
	return qs
}

func (f *fixture) seen(urls ...string) []bool {
	f.t.Helper()
	got, err := f.s.Seen(urls)
	if err != nil {
		f.t.Fatalf("Seen: %v", err)
	}
	if len(got) != len(urls) {
		f.t.Fatalf("Seen(%d URLs) answered %d", len(urls), len(got))
	}
	return got
}

// commit commits b with the engine's next sequence number.
func (f *fixture) commit(b *crawl.Batch) crawl.Committed {
	f.t.Helper()
	if b.NextSeq == 0 {
		b.NextSeq = f.next
	}
	c, err := f.s.Commit(b)
	if err != nil {
		f.t.Fatalf("Commit: %v", err)
	}
	return c
}

// number gives entries the engine's next sequence numbers.
func (f *fixture) number(es ...crawl.Entry) []crawl.Queued {
	qs := make([]crawl.Queued, len(es))
	for i, e := range es {
		qs[i] = crawl.Queued{Seq: f.next, Entry: e}
		f.next++
	}
	return qs
}

// enqueue commits newly found URLs and returns them as given out.
func (f *fixture) enqueue(es ...crawl.Entry) []crawl.Queued {
	f.t.Helper()
	qs := f.number(es...)
	f.commit(&crawl.Batch{Enqueue: qs})
	return qs
}

// finished commits queued entries as done, failed or not.
func (f *fixture) finished(failed bool, qs ...crawl.Queued) {
	f.t.Helper()
	b := &crawl.Batch{}
	for _, q := range qs {
		b.Done = append(b.Done, crawl.Done{Seq: q.Seq, Entry: q.Entry, Failed: failed})
	}
	f.commit(b)
}

// link queues item pages in the traversal and finishes them, yielding
// nothing.
func (f *fixture) link(urls ...string) {
	f.t.Helper()
	es := make([]crawl.Entry, len(urls))
	for i, u := range urls {
		es[i] = item(u)
	}
	f.finished(false, f.enqueue(es...)...)
}

// drain finishes everything queued.
func (f *fixture) drain() {
	f.t.Helper()
	f.finished(false, f.read()...)
}

func (f *fixture) finish(gaps int) crawl.Finish {
	f.t.Helper()
	fin, err := f.s.Finish(gaps)
	if err != nil {
		f.t.Fatalf("Finish: %v", err)
	}
	return fin
}

// nextTraversal finishes the queue and the run, and begins a run that
// starts the traversal after the current one.
func (f *fixture) nextTraversal() crawl.Start {
	f.t.Helper()
	before := f.traversal
	f.drain()
	f.finish(0)
	st := f.begin(start(startURL))
	if !st.NewTraversal || st.Traversal != before+1 {
		f.t.Fatalf("Begin on an empty queue after traversal %d = %+v, want new traversal %d", before, st, before+1)
	}
	return st
}

// yield commits one listing page per argument, found and finished in one
// batch, each yielding the items given, and returns the counts.
func (f *fixture) yield(pages ...[]crawl.ItemVersion) crawl.Committed {
	f.t.Helper()
	b := &crawl.Batch{}
	for _, items := range pages {
		f.pages++
		q := f.number(listing(fmt.Sprintf("http://shop.test/list/%d", f.pages)))[0]
		b.Enqueue = append(b.Enqueue, q)
		b.Done = append(b.Done, crawl.Done{Seq: q.Seq, Entry: q.Entry, Items: items})
	}
	return f.commit(b)
}

// expectQueue fails unless the queue holds exactly these entries, in
// order, with increasing sequence numbers of at least 1.
func (f *fixture) expectQueue(what string, want ...crawl.Entry) []crawl.Queued {
	f.t.Helper()
	qs := f.read()
	got := make([]crawl.Entry, len(qs))
	for i, q := range qs {
		got[i] = q.Entry
		if q.Seq < 1 || i > 0 && q.Seq <= qs[i-1].Seq {
			f.t.Fatalf("%s: queue %+v is not numbered from 1 in increasing order", what, qs)
		}
	}
	if !slices.Equal(got, want) {
		f.t.Fatalf("%s: queue = %+v, want %+v", what, qs, want)
	}
	return qs
}

// expectQueueSet is expectQueue for entries queued in an order the store
// chooses.
func (f *fixture) expectQueueSet(what string, want ...crawl.Entry) []crawl.Queued {
	f.t.Helper()
	qs := f.read()
	got := make([]crawl.Entry, len(qs))
	for i, q := range qs {
		got[i] = q.Entry
	}
	byURL := func(a, b crawl.Entry) int { return strings.Compare(a.URL, b.URL) }
	slices.SortFunc(got, byURL)
	want = slices.Clone(want)
	slices.SortFunc(want, byURL)
	if !slices.Equal(got, want) {
		f.t.Fatalf("%s: queue = %+v, want %+v in any order", what, qs, want)
	}
	return qs
}

// expectCounts fails unless a commit counted want.
func (f *fixture) expectCounts(what string, got, want crawl.Committed) {
	f.t.Helper()
	same := got.New == want.New && got.Changed == want.Changed && got.Unchanged == want.Unchanged &&
		got.Skipped == want.Skipped && got.DuplicateKeys == want.DuplicateKeys
	switch {
	case got.FirstDuplicate == nil || want.FirstDuplicate == nil:
		same = same && got.FirstDuplicate == want.FirstDuplicate
	default:
		same = same && *got.FirstDuplicate == *want.FirstDuplicate
	}
	if !same {
		f.t.Fatalf("%s: counted %s, want %s", what, counts(got), counts(want))
	}
}

func counts(c crawl.Committed) string {
	s := fmt.Sprintf("%d new, %d changed, %d unchanged, %d skipped, %d duplicate keys", c.New, c.Changed, c.Unchanged, c.Skipped, c.DuplicateKeys)
	if d := c.FirstDuplicate; d != nil {
		s += fmt.Sprintf(" (first: %q held by %s, also at %s)", d.Key, d.HeldBy, d.AlsoAt)
	}
	return s
}

// requeue calls RequeueFailed and takes its next sequence number.
func (f *fixture) requeue(nextSeq uint64) (moved int, next uint64) {
	f.t.Helper()
	moved, next, err := f.s.RequeueFailed(nextSeq)
	if err != nil {
		f.t.Fatalf("RequeueFailed: %v", err)
	}
	f.next = max(f.next, next)
	return moved, next
}
