package storetest

import "github.com/databrew/databrew-stage/crawl"

// expectMoves fails unless a Finish or a Begin moved want.Moved keys,
// counted as want says.
func (f *fixture) expectMoves(what string, got, want crawl.Committed) {
	f.t.Helper()
	f.expectCounts(what, got, want)
	if got.Moved != want.Moved {
		f.t.Fatalf("%s: moved %d keys, want %d", what, got.Moved, want.Moved)
	}
}

// completeTraversal finishes the queue and the run, and returns the moves
// the completed traversal decided.
func (f *fixture) completeTraversal() crawl.Committed {
	f.t.Helper()
	f.drain()
	return f.finish(0).Moves
}

func keyMovesWhenItsHolderIsNotLinked(f *fixture) {
	a, b, c := itemURL(1), itemURL(2), itemURL(3)
	f.begin(start(startURL))
	f.yield(items(version("k", a, 1), version("j", a, 5)))
	f.nextTraversal()
	// Traversal 2 does not link a (a fresh session ID in every link):
	// b yields both keys, c one of them after b.
	got := f.yield(items(version("k", b, 2)), items(version("j", b, 5)), items(version("k", c, 3)))
	f.expectCounts("traversal 2", got, crawl.Committed{DuplicateKeys: 3, FirstDuplicate: dup("k", a, b)})
	f.expectMoves("traversal 2 completes", f.completeTraversal(), crawl.Committed{Changed: 1, Unchanged: 1, Moved: 2})
	f.begin(start(startURL))
	got = f.yield(items(version("k", b, 2), version("j", b, 5)))
	f.expectCounts("traversal 3, b holds the keys", got, crawl.Committed{Unchanged: 2})
	got = f.yield(items(version("k", a, 1)))
	f.expectCounts("traversal 3, a", got, crawl.Committed{DuplicateKeys: 1, FirstDuplicate: dup("k", b, a)})
	f.expectMoves("traversal 3 completes, a proposed", f.completeTraversal(), crawl.Committed{})
}

func keyStaysWithALinkedHolder(f *fixture) {
	a, b := itemURL(1), itemURL(2)
	f.begin(start(startURL))
	f.yield(items(version("k", a, 1)))
	f.nextTraversal()
	// a is linked in traversal 2, after b yielded the key, and fails.
	f.yield(items(version("k", b, 2)))
	qs := f.enqueue(item(a))
	f.finished(true, qs...)
	f.expectMoves("traversal 2 completes", f.completeTraversal(), crawl.Committed{})
	f.requeue(f.next)
	f.drain()
	f.finish(0)
	f.begin(start(startURL))
	got := f.yield(items(version("k", a, 1)))
	f.expectCounts("traversal 3, a holds the key", got, crawl.Committed{Unchanged: 1})
}

func keyStaysWithAHolderThatYieldedIt(f *fixture) {
	a, b := itemURL(1), itemURL(2)
	f.begin(start(startURL))
	// Two listing cards with one key: their URLs are never queued, and
	// both are there every traversal.
	f.yield(items(version("k", a, 1)), items(version("k", b, 2)))
	for traversal := 1; traversal <= 3; traversal++ {
		f.expectMoves("a traversal with both cards", f.completeTraversal(), crawl.Committed{})
		f.begin(start(startURL))
		got := f.yield(items(version("k", b, 2)), items(version("k", a, 1)))
		f.expectCounts("b first, then a", got, crawl.Committed{Unchanged: 1, DuplicateKeys: 1, FirstDuplicate: dup("k", a, b)})
	}
}

func movesWaitForTheTraversalToComplete(f *fixture) {
	a, b := itemURL(1), itemURL(2)
	f.begin(start(startURL))
	f.yield(items(version("k", a, 1)))
	f.nextTraversal()
	later := f.enqueue(listing("http://shop.test/later"))
	f.yield(items(version("k", b, 2)))
	if fin := f.finish(0); fin.Moves.Moved != 0 {
		f.t.Fatalf("Finish with a URL queued = %+v, want no move before the traversal completes", fin)
	}
	if st := f.begin(start(startURL)); st.NewTraversal || st.Moves.Moved != 0 {
		f.t.Fatalf("Begin with a URL queued = %+v, want the traversal resumed and nothing moved", st)
	}
	f.finished(false, later...)
	f.expectMoves("the traversal completes in its second run", f.completeTraversal(), crawl.Committed{Changed: 1, Moved: 1})
}
