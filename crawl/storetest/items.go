package storetest

import (
	"strings"

	"github.com/databrew/databrew-stage/crawl"
)

// items is the items of one page.
func items(vs ...crawl.ItemVersion) []crawl.ItemVersion { return vs }

func dup(key, heldBy, alsoAt string) *crawl.DuplicateKey {
	return &crawl.DuplicateKey{Key: key, HeldBy: heldBy, AlsoAt: alsoAt}
}

func itemsCount(f *fixture) {
	a, b, c := itemURL(1), itemURL(2), itemURL(3)
	f.begin(start(startURL))
	got := f.yield(items(version("a", a, 1)), items(version("b", b, 1)))
	f.expectCounts("traversal 1", got, crawl.Committed{New: 2})
	got = f.yield(items(version("a", a, 1)))
	f.expectCounts("the same values again in traversal 1", got, crawl.Committed{Unchanged: 1})
	f.nextTraversal()
	got = f.yield(items(version("a", a, 1), version("b", b, 2), version("c", c, 1)))
	f.expectCounts("traversal 2", got, crawl.Committed{New: 1, Changed: 1, Unchanged: 1})
	f.nextTraversal()
	got = f.yield(items(version("b", b, 2)), items(version("c", c, 1)))
	f.expectCounts("traversal 3, against the values traversal 2 stored", got, crawl.Committed{Unchanged: 2})
}

func itemKeysOfAnyLength(f *fixture) {
	keys := []string{
		strings.Repeat("k", crawl.MaxKeyBytes),
		strings.Repeat("k", crawl.MaxKeyBytes-1) + "l",
		strings.Repeat("m", 600),
		"café ☕",
		"0",
	}
	f.begin(start(startURL))
	page := func(h ...int) []crawl.ItemVersion {
		vs := make([]crawl.ItemVersion, len(keys))
		for i, k := range keys {
			vs[i] = version(k, itemURL(i), h[i])
		}
		return vs
	}
	f.expectCounts("traversal 1", f.yield(page(1, 1, 1, 1, 1)), crawl.Committed{New: len(keys)})
	f.nextTraversal()
	f.expectCounts("traversal 2", f.yield(page(1, 2, 1, 2, 1)), crawl.Committed{Changed: 2, Unchanged: 3})
	got := f.yield(items(version(keys[0], itemURL(9), 1)))
	f.expectCounts("a long key at another page", got, crawl.Committed{DuplicateKeys: 1, FirstDuplicate: dup(keys[0], itemURL(0), itemURL(9))})
}

func duplicateHeldByFirst(f *fixture) {
	a, b := itemURL(1), itemURL(2)
	f.begin(start(startURL))
	got := f.yield(items(version("k", a, 1)), items(version("k", b, 2)))
	f.expectCounts("two pages with one key", got, crawl.Committed{New: 1, DuplicateKeys: 1, FirstDuplicate: dup("k", a, b)})
	f.nextTraversal()
	// The other page comes first in traversal 2: the key stays with a.
	got = f.yield(items(version("k", b, 2)))
	f.expectCounts("traversal 2, the other page first", got, crawl.Committed{DuplicateKeys: 1, FirstDuplicate: dup("k", a, b)})
	got = f.yield(items(version("k", a, 1)))
	f.expectCounts("traversal 2, the holder", got, crawl.Committed{Unchanged: 1})
	f.nextTraversal()
	got = f.yield(items(version("k", a, 1)))
	f.expectCounts("traversal 3, the holder", got, crawl.Committed{Unchanged: 1})
}

func holderFirstValuesWin(f *fixture) {
	a := itemURL(1)
	f.begin(start(startURL))
	got := f.yield(items(version("k", a, 1), version("k", a, 2)))
	f.expectCounts("a page with one key twice", got, crawl.Committed{New: 1, DuplicateKeys: 1, FirstDuplicate: dup("k", a, a)})
	got = f.yield(items(version("k", a, 1)), items(version("k", a, 3)))
	f.expectCounts("the page again in traversal 1", got, crawl.Committed{Unchanged: 1, DuplicateKeys: 1, FirstDuplicate: dup("k", a, a)})
	f.nextTraversal()
	got = f.yield(items(version("k", a, 2), version("k", a, 1)))
	f.expectCounts("traversal 2", got, crawl.Committed{Changed: 1, DuplicateKeys: 1, FirstDuplicate: dup("k", a, a)})
	f.nextTraversal()
	got = f.yield(items(version("k", a, 2)))
	f.expectCounts("traversal 3, against traversal 2's first values", got, crawl.Committed{Unchanged: 1})
}

func firstDuplicate(f *fixture) {
	a, b, c := itemURL(1), itemURL(2), itemURL(3)
	f.begin(start(startURL))
	f.expectCounts("traversal 1", f.yield(items(version("k1", a, 1), version("k2", a, 1))), crawl.Committed{New: 2})
	got := f.yield(items(version("k3", c, 1)), items(version("k2", b, 1)), items(version("k1", c, 1)))
	f.expectCounts("three pages", got, crawl.Committed{New: 1, DuplicateKeys: 2, FirstDuplicate: dup("k2", a, b)})
}

func takeover(f *fixture) {
	a, b := itemURL(1), itemURL(2)
	f.begin(start(startURL))
	f.yield(items(version("k", a, 1), version("j", a, 5)))
	f.nextTraversal()
	// a is linked in traversal 2 but yields nothing (a page that failed,
	// say), and b yields its keys: the key does not move (see moves.go).
	f.link(a)
	got := f.yield(items(version("k", b, 2)), items(version("j", b, 5)))
	f.expectCounts("traversal 2", got, crawl.Committed{DuplicateKeys: 2, FirstDuplicate: dup("k", a, b)})
	f.nextTraversal()
	got = f.yield(items(version("k", b, 2)), items(version("j", b, 5)))
	f.expectCounts("traversal 3, b takes the keys over", got, crawl.Committed{Changed: 1, Unchanged: 1})
	got = f.yield(items(version("k", a, 1)))
	f.expectCounts("traversal 3, a", got, crawl.Committed{DuplicateKeys: 1, FirstDuplicate: dup("k", b, a)})
	f.nextTraversal()
	got = f.yield(items(version("k", b, 2)))
	f.expectCounts("traversal 4, b holds the key", got, crawl.Committed{Unchanged: 1})
}

func noTakeoverWhileHeld(f *fixture) {
	a, b := itemURL(1), itemURL(2)
	f.begin(start(startURL))
	f.yield(items(version("k", a, 1)))
	f.nextTraversal()
	// b yields the key in traversal 2, but so does a.
	f.yield(items(version("k", b, 2)))
	f.expectCounts("traversal 2, a", f.yield(items(version("k", a, 1))), crawl.Committed{Unchanged: 1})
	f.nextTraversal()
	f.link(a)
	got := f.yield(items(version("k", b, 2)))
	f.expectCounts("traversal 3, b", got, crawl.Committed{DuplicateKeys: 1, FirstDuplicate: dup("k", a, b)})
	f.nextTraversal()
	// a, linked, missed traversal 3, in which b yielded the key.
	got = f.yield(items(version("k", b, 2)))
	f.expectCounts("traversal 4, b takes the key over", got, crawl.Committed{Changed: 1})
}

func noTakeoverWithoutYielding(f *fixture) {
	a, b := itemURL(1), itemURL(2)
	f.begin(start(startURL))
	f.yield(items(version("k", a, 1)))
	f.nextTraversal()
	// Nobody yields the key in traversals 2 and 4; b in 3 and 5, while a
	// is linked and yields nothing.
	for range 2 {
		f.nextTraversal()
		f.link(a)
		got := f.yield(items(version("k", b, 2)))
		f.expectCounts("b after a traversal without the key", got, crawl.Committed{DuplicateKeys: 1, FirstDuplicate: dup("k", a, b)})
		f.nextTraversal()
	}
	got := f.yield(items(version("k", b, 2)))
	f.expectCounts("traversal 6, b takes the key over", got, crawl.Committed{Changed: 1})
}
