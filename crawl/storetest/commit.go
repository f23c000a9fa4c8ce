package storetest

import (
	"slices"

	"github.com/databrew/databrew-stage/crawl"
)

func enqueueSkipsSeen(f *fixture) {
	f.begin(start(startURL))
	first := f.read()[0]
	f.finished(false, f.enqueue(item(itemURL(1)))...)
	// The start is queued, item 1 finished: a batch finds both again, and
	// item 2 twice.
	qs := f.number(item(itemURL(1)), listing(startURL), item(itemURL(2)), item(itemURL(2)), item(itemURL(3)))
	f.commit(&crawl.Batch{Enqueue: qs})
	want := []crawl.Queued{first, qs[2], qs[4]}
	if got := f.read(); !slices.Equal(got, want) {
		f.t.Fatalf("queue = %+v, want %+v: URLs seen in the traversal are skipped, and a URL twice in a batch is queued once", got, want)
	}
}

func doneLeavesTheQueue(f *fixture) {
	f.begin(start(startURL))
	first := f.read()[0]
	qs := f.enqueue(item(itemURL(1)), item(itemURL(2)), item(itemURL(3)))
	f.finished(false, first)
	f.finished(true, qs[0], qs[1])
	if got := f.read(); !slices.Equal(got, qs[2:]) {
		f.t.Fatalf("queue = %+v, want %+v", got, qs[2:])
	}
	if fin := f.finish(0); fin.Failed != 2 || fin.Queued != 3 {
		f.t.Fatalf("Finish = %+v, want 2 failed, 3 queued with them", fin)
	}
	// Item 1 finished otherwise leaves the failed set; item 2 failing
	// again stays in it once.
	f.finished(false, qs[0])
	f.finished(true, qs[1])
	if fin := f.finish(0); fin.Failed != 1 || fin.Queued != 2 {
		f.t.Fatalf("Finish = %+v, want 1 failed, 2 queued with it", fin)
	}
	moved, _ := f.requeue(f.next)
	if moved != 1 {
		f.t.Fatalf("RequeueFailed moved %d, want item 2 alone", moved)
	}
	f.expectQueue("after RequeueFailed", item(itemURL(3)), item(itemURL(2)))
}

func retryMovesFailed(f *fixture) {
	f.begin(start(startURL))
	first := f.read()[0]
	qs := f.enqueue(item(itemURL(1)), item(itemURL(2)))
	f.finished(true, qs...)
	retry := f.number(qs[1].Entry)
	f.commit(&crawl.Batch{Retry: retry})
	if got, want := f.read(), []crawl.Queued{first, retry[0]}; !slices.Equal(got, want) {
		f.t.Fatalf("queue = %+v, want %+v", got, want)
	}
	if fin := f.finish(0); fin.Failed != 1 || fin.Queued != 3 {
		f.t.Fatalf("Finish = %+v, want item 1 failed, 3 queued with it", fin)
	}
}

func commitOrder(f *fixture) {
	f.begin(start(startURL))
	first := f.read()[0]
	found := f.number(item(itemURL(1)), item(itemURL(2)))
	retry := f.number(first.Entry)
	// Enqueue before Done: item 1, found and finished in the batch, leaves
	// the queue. Done before Retry: the start, failed and sent back in the
	// batch, is queued and not failed.
	f.commit(&crawl.Batch{
		Enqueue: found,
		Done:    []crawl.Done{{Seq: first.Seq, Entry: first.Entry, Failed: true}, {Seq: found[0].Seq, Entry: found[0].Entry}},
		Retry:   retry,
	})
	if got, want := f.read(), []crawl.Queued{found[1], retry[0]}; !slices.Equal(got, want) {
		f.t.Fatalf("queue = %+v, want %+v", got, want)
	}
	if fin := f.finish(0); fin.Failed != 0 || fin.Queued != 2 {
		f.t.Fatalf("Finish = %+v, want nothing failed, 2 queued", fin)
	}
	if got := f.seen(itemURL(1)); !got[0] {
		f.t.Fatal("a URL found and finished in one batch is not seen")
	}
}

func commitRaisesNextSeq(f *fixture) {
	f.begin(start(startURL))
	first := f.read()[0]
	qs := f.number(item(itemURL(1)))
	high := qs[0].Seq + 100
	f.commit(&crawl.Batch{Enqueue: qs, NextSeq: high})
	f.commit(&crawl.Batch{Done: []crawl.Done{{Seq: first.Seq, Entry: first.Entry}}, NextSeq: qs[0].Seq + 1})
	if st := f.begin(start(startURL)); st.NewTraversal || st.NextSeq < high {
		f.t.Fatalf("Begin after a commit with next sequence number %d = %+v, want it resumed and numbering from there", high, st)
	}
	f.finished(true, qs...)
	f.finish(0)
	st := f.begin(start(startURL))
	queue := f.expectQueueSet("new traversal", item(itemURL(1)), start(startURL))
	for _, q := range queue {
		if q.Seq < high || q.Seq >= st.NextSeq {
			f.t.Fatalf("%+v queued by Begin, want a sequence number from %d to below %d", q, high, st.NextSeq)
		}
	}
}

func requeueFailed(f *fixture) {
	f.begin(start(startURL))
	first := f.read()[0]
	qs := f.enqueue(item(itemURL(1)), item(itemURL(2)), item(itemURL(3)))
	f.finished(true, qs[0], qs[2])
	f.finished(false, qs[1])
	// The engine's next number may be above the store's.
	from := f.next + 10
	moved, next := f.requeue(from)
	if moved != 2 {
		f.t.Fatalf("RequeueFailed moved %d, want 2", moved)
	}
	queue := f.read()
	if len(queue) != 3 || queue[0] != first {
		f.t.Fatalf("queue = %+v, want the start, then the failed URLs", queue)
	}
	f.expectQueueSet("after RequeueFailed", start(startURL), item(itemURL(1)), item(itemURL(3)))
	for _, q := range queue[1:] {
		if q.Seq < from || q.Seq >= next {
			f.t.Fatalf("%+v requeued, want a sequence number from %d to below %d", q, from, next)
		}
	}
	if fin := f.finish(0); fin.Failed != 0 || fin.Queued != 3 {
		f.t.Fatalf("Finish = %+v, want nothing failed, 3 queued", fin)
	}
	if got := f.seen(itemURL(1), itemURL(3)); slices.Contains(got, false) {
		f.t.Fatalf("seen = %v, want the requeued URLs still seen", got)
	}
	if moved, again := f.requeue(next); moved != 0 || again != next {
		f.t.Fatalf("RequeueFailed of an empty failed set = %d, %d, want 0, %d", moved, again, next)
	}
	// A nextSeq below the store's next free number does not reuse numbers.
	f.finished(true, queue[1])
	moved, last := f.requeue(1)
	queue = f.read()
	if moved != 1 || queue[len(queue)-1].Seq < next || last <= queue[len(queue)-1].Seq {
		f.t.Fatalf("RequeueFailed(1) = %d, %d, queue %+v: want 1 moved, numbered from %d", moved, last, queue, next)
	}
}
