package storetest

func finishGaps(f *fixture) {
	f.begin(start(startURL))
	if fin := f.finish(2); fin.TraversalGaps != 2 {
		f.t.Fatalf("Finish(2) = %+v, want 2 traversal gaps", fin)
	}
	if st := f.begin(start(startURL)); st.NewTraversal {
		f.t.Fatalf("Begin with the start queued = %+v, want traversal 1 resumed", st)
	}
	if fin := f.finish(3); fin.TraversalGaps != 5 {
		f.t.Fatalf("Finish(3) in a resumed traversal = %+v, want 5 traversal gaps", fin)
	}
	f.nextTraversal()
	if fin := f.finish(0); fin.TraversalGaps != 0 {
		f.t.Fatalf("Finish(0) in a new traversal = %+v, want no traversal gaps", fin)
	}
	if fin := f.finish(1); fin.TraversalGaps != 1 {
		f.t.Fatalf("Finish(1) = %+v, want 1 traversal gap", fin)
	}
}

func finishCounts(f *fixture) {
	f.begin(start(startURL))
	first := f.read()[0]
	qs := f.enqueue(item(itemURL(1)), item(itemURL(2)), item(itemURL(3)))
	f.finished(false, first)
	f.finished(true, qs[0])
	if fin := f.finish(0); fin.Queued != 3 || fin.Failed != 1 {
		f.t.Fatalf("Finish = %+v, want 3 queued, the failed one among them, and 1 failed", fin)
	}
	f.finished(false, qs[1:]...)
	if fin := f.finish(0); fin.Queued != 1 || fin.Failed != 1 {
		f.t.Fatalf("Finish = %+v, want only the failed one queued", fin)
	}
	f.finished(false, f.read()...) // nothing: the failed URL waits outside the queue
	f.requeue(f.next)
	f.drain()
	if fin := f.finish(0); fin.Queued != 0 || fin.Failed != 0 {
		f.t.Fatalf("Finish = %+v, want nothing left", fin)
	}
}
