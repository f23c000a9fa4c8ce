package storetest

import (
	"slices"
	"strings"

	"github.com/databrew/databrew-stage/crawl"
)

func beginStartsTraversal1(f *fixture) {
	st := f.begin(start(startURL), start(start2URL), start(startURL))
	if !st.NewTraversal || st.Traversal != 1 || st.Queued != 2 {
		f.t.Fatalf("Begin on an empty store = %+v, want new traversal 1 with 2 entries queued", st)
	}
	qs := f.expectQueue("after Begin", start(startURL), start(start2URL))
	if st.NextSeq <= qs[1].Seq {
		f.t.Fatalf("Begin's next sequence number %d is not above the queue %+v", st.NextSeq, qs)
	}
	if got := f.seen(startURL, start2URL, itemURL(1)); !slices.Equal(got, []bool{true, true, false}) {
		f.t.Fatalf("seen = %v, want the starts and nothing else", got)
	}
}

func beginResumes(f *fixture) {
	f.begin(start(startURL))
	qs := f.enqueue(item(itemURL(1)), item(itemURL(2)))
	f.finished(false, f.read()[0], qs[0])
	f.finish(0)
	next := f.next
	st := f.begin(start(startURL), start(start2URL))
	if st.NewTraversal || st.Traversal != 1 || st.Queued != 1 || st.NextSeq < next {
		f.t.Fatalf("Begin with an entry queued = %+v, want traversal 1 resumed with 1 queued and next sequence number >= %d", st, next)
	}
	if got := f.read(); !slices.Equal(got, qs[1:]) {
		f.t.Fatalf("resumed queue = %+v, want %+v: the starts are not queued again", got, qs[1:])
	}
	if got := f.seen(startURL, itemURL(1), start2URL); !slices.Equal(got, []bool{true, true, false}) {
		f.t.Fatalf("seen = %v, want the traversal's URLs and not the new start", got)
	}
}

func beginRequeuesFailed(f *fixture) {
	f.begin(start(startURL))
	qs := f.enqueue(item(itemURL(1)), item(itemURL(2)), item(itemURL(3)))
	f.finished(true, f.read()[0], qs[0])
	f.finished(false, qs[1])
	f.finish(0)
	next := f.next
	st := f.begin(start(startURL))
	if st.NewTraversal || st.Traversal != 1 || st.Queued != 3 {
		f.t.Fatalf("Begin with an entry queued and two failed = %+v, want traversal 1 resumed with 3 queued", st)
	}
	got := f.expectQueueSet("after Begin", item(itemURL(3)), start(startURL), item(itemURL(1)))
	for _, q := range got {
		if q.URL != itemURL(3) && (q.Seq < next || q.Seq >= st.NextSeq) {
			f.t.Fatalf("failed URL queued again as %+v, want a sequence number from %d to below %d", q, next, st.NextSeq)
		}
	}
	if fin := f.finish(0); fin.Failed != 0 || fin.Queued != 3 {
		f.t.Fatalf("Finish after Begin = %+v, want the failed set emptied into the queue", fin)
	}
}

func beginRequeuesFailedInANewTraversal(f *fixture) {
	f.begin(start(startURL), start(start2URL))
	starts := f.read()
	qs := f.enqueue(item(itemURL(1)), item(itemURL(2)))
	f.finished(true, starts[0], qs[0])
	f.finished(false, starts[1], qs[1])
	f.finish(0)
	next := f.next
	st := f.begin(start(startURL), start(start2URL))
	if !st.NewTraversal || st.Traversal != 2 || st.Queued != 3 {
		f.t.Fatalf("Begin with nothing queued and two failed = %+v, want new traversal 2 with 3 queued", st)
	}
	got := f.expectQueueSet("after Begin", start(startURL), start(start2URL), item(itemURL(1)))
	for _, q := range got {
		if q.Seq < next || q.Seq >= st.NextSeq {
			f.t.Fatalf("%+v queued by Begin, want a sequence number from %d to below %d", q, next, st.NextSeq)
		}
	}
	if got := f.seen(startURL, start2URL, itemURL(1), itemURL(2)); !slices.Equal(got, []bool{true, true, true, false}) {
		f.t.Fatalf("seen in the new traversal = %v, want the starts and the failed URL", got)
	}
}

func readAfterInOrder(f *fixture) {
	f.begin(start(startURL))
	f.drain()
	qs := f.number(item(itemURL(1)), item(itemURL(2)), item(itemURL(3)), item(itemURL(4)), item(itemURL(5)))
	// Read orders by sequence number, whatever the order of the batch.
	f.commit(&crawl.Batch{Enqueue: []crawl.Queued{qs[3], qs[0], qs[4], qs[1], qs[2]}})
	f.finished(false, qs[2])
	queue := []crawl.Queued{qs[0], qs[1], qs[3], qs[4]}
	cases := []struct {
		after uint64
		limit int
		want  []crawl.Queued
	}{
		{0, 10, queue},
		{0, 4, queue},
		{0, 2, queue[:2]},
		{qs[0].Seq - 1, 1, queue[:1]},
		{qs[0].Seq, 2, queue[1:3]},
		{qs[2].Seq, 10, queue[2:]}, // after a number no longer queued
		{qs[4].Seq, 10, nil},
		{qs[4].Seq + 100, 10, nil},
	}
	for _, c := range cases {
		got, err := f.s.Read(c.after, c.limit)
		if err != nil {
			f.t.Fatalf("Read(%d, %d): %v", c.after, c.limit, err)
		}
		if !slices.Equal(got, c.want) {
			f.t.Fatalf("Read(%d, %d) = %+v, want %+v", c.after, c.limit, got, c.want)
		}
	}
}

func queueKeepsEntries(f *fixture) {
	f.begin(start(startURL))
	prefix := "http://shop.test/item/"
	entries := []crawl.Entry{
		item(prefix + strings.Repeat("x", crawl.MaxURLBytes-len(prefix))),
		item(prefix + strings.Repeat("x", crawl.MaxURLBytes-len(prefix)-1) + "y"),
		listing("http://shop.test/caf%C3%A9?page=2&q=%E2%82%AC"),
		{URL: "http://shop.test/list/3", Kind: crawl.KindListing, Start: true},
		{URL: "http://shop.test/search?page=4", Kind: crawl.KindListing, Paged: true},
		{URL: "http://shop.test/search?page=5", Kind: crawl.KindListing, Paged: true, Prev: "3f2a9c0d11e4b7a8c2d1e0f9"},
		{URL: "http://shop.test/item/card", Kind: crawl.KindItem, Card: "c0ffee"},
		{URL: "http://shop.test/item/card?page=6", Kind: crawl.KindListing, Paged: true, Card: "c1", Prev: "p1"},
		{URL: "http://shop.test/sitemap.xml.gz", Kind: crawl.KindSitemap, Start: true},
		{URL: "http://shop.test/robots.txt", Kind: crawl.KindRobots, Start: true},
	}
	qs := f.enqueue(entries...)
	want := append([]crawl.Queued{f.read()[0]}, qs...)
	if got := f.read(); !slices.Equal(got, want) {
		f.t.Fatalf("queue = %+v, want %+v", got, want)
	}
	urls := make([]string, len(entries))
	for i, e := range entries {
		urls[i] = e.URL
	}
	if got := f.seen(urls...); slices.Contains(got, false) {
		f.t.Fatalf("seen = %v, want every URL queued", got)
	}
	// Through the failed set and back.
	f.finished(true, qs...)
	moved, _ := f.requeue(f.next)
	if moved != len(entries) {
		f.t.Fatalf("RequeueFailed moved %d, want %d", moved, len(entries))
	}
	f.expectQueueSet("after the failed set", append([]crawl.Entry{start(startURL)}, entries...)...)
}

func seenPerTraversal(f *fixture) {
	f.begin(start(startURL))
	f.finished(false, f.enqueue(item(itemURL(1)))...)
	if got := f.seen(itemURL(1), startURL, itemURL(2)); !slices.Equal(got, []bool{true, true, false}) {
		f.t.Fatalf("seen in traversal 1 = %v, want the URLs queued, finished or not", got)
	}
	f.nextTraversal()
	if got := f.seen(itemURL(1), startURL); !slices.Equal(got, []bool{false, true}) {
		f.t.Fatalf("seen in traversal 2 = %v, want only the start", got)
	}
	f.enqueue(item(itemURL(1)))
	f.expectQueue("traversal 2", start(startURL), item(itemURL(1)))
	if got := f.seen(itemURL(1)); !got[0] {
		f.t.Fatal("a URL queued in traversal 2 is not seen")
	}
}

// seenFreshNamesURLsNeverHeld checks a crawl.FreshTeller: a URL is fresh
// until the store first holds it, in any traversal, and SeenFresh's seen
// is Seen's.
func seenFreshNamesURLsNeverHeld(f *fixture) {
	ft, ok := f.s.(crawl.FreshTeller)
	if !ok {
		f.t.Skip("the store is not a crawl.FreshTeller")
	}
	seenFresh := func(urls ...string) (seen, fresh []bool) {
		f.t.Helper()
		seen, fresh, err := ft.SeenFresh(urls)
		if err != nil {
			f.t.Fatalf("SeenFresh: %v", err)
		}
		if want := f.seen(urls...); !slices.Equal(seen, want) || len(fresh) != len(urls) {
			f.t.Fatalf("SeenFresh(%v) = %v, %v; want Seen's %v and one fresh flag a URL", urls, seen, fresh, want)
		}
		return seen, fresh
	}
	f.begin(start(startURL))
	f.finished(false, f.enqueue(item(itemURL(1)))...)
	f.enqueue(item(itemURL(2)))
	if _, fresh := seenFresh(startURL, itemURL(1), itemURL(2), itemURL(3)); !slices.Equal(fresh, []bool{false, false, false, true}) {
		f.t.Fatalf("fresh in traversal 1 = %v, want only the URL never queued", fresh)
	}
	f.nextTraversal()
	if seen, fresh := seenFresh(itemURL(1), itemURL(3)); !slices.Equal(seen, []bool{false, false}) || !slices.Equal(fresh, []bool{false, true}) {
		f.t.Fatalf("traversal 2: seen %v, fresh %v; want neither seen, and only the URL never queued fresh", seen, fresh)
	}
}
