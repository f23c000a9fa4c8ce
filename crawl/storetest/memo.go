package storetest

import (
	"reflect"
	"time"

	"github.com/databrew/databrew-stage/crawl"
)

// memoOf reads the store's memo of url.
func (f *fixture) memoOf(url string) *crawl.PageMemo {
	f.t.Helper()
	m, err := f.s.Memo(url)
	if err != nil {
		f.t.Fatalf("Memo(%s): %v", url, err)
	}
	return m
}

// done commits one finished entry as d says, numbering nothing.
func (f *fixture) done(q crawl.Queued, d crawl.Done) crawl.Committed {
	f.t.Helper()
	d.Seq, d.Entry = q.Seq, q.Entry
	return f.commit(&crawl.Batch{Done: []crawl.Done{d}})
}

func memoReplacedForgottenKept(f *fixture) {
	f.begin(start(startURL))
	page := f.enqueue(listing("http://shop.test/list/1"))[0]
	if m := f.memoOf(page.URL); m != nil {
		f.t.Fatalf("memo of a page never finished = %+v, want nil", m)
	}
	memo := &crawl.PageMemo{Tag: "spec-1", ETag: `"v1"`, LastModified: "Tue, 01 Apr 2025 10:00:00 GMT",
		Links: []crawl.Entry{item(itemURL(1)), {URL: "http://shop.test/list/2?page=2", Kind: crawl.KindListing, Paged: true}},
		Items: []crawl.ItemRef{{Key: "k1", URL: itemURL(1)}, {Key: "a much longer key, ünïcode", URL: itemURL(2)}}}
	f.done(page, crawl.Done{Memo: memo})
	if got := f.memoOf(page.URL); !reflect.DeepEqual(got, memo) {
		f.t.Fatalf("memo = %+v, want %+v", got, memo)
	}
	if m := f.memoOf("http://shop.test/list/9"); m != nil {
		f.t.Fatalf("memo of another page = %+v", m)
	}
	ds, err := f.s.Dues([]string{"http://shop.test/list/9", page.URL})
	want := crawl.PageDue{Found: true, Tag: memo.Tag, Items: 2}
	if err != nil || len(ds) != 2 || ds[0] != (crawl.PageDue{}) || ds[1] != want {
		f.t.Fatalf("Dues = %+v, %v; want [{}, %+v]", ds, err, want)
	}
	due := &crawl.PageMemo{Tag: "spec-1", ETag: `"v2"`, Due: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC), Card: "c1",
		Items: []crawl.ItemRef{{Key: "k3", URL: itemURL(3)}}}
	next := f.enqueue(item(itemURL(3)))[0]
	f.done(next, crawl.Done{Memo: due})
	ds, err = f.s.Dues([]string{itemURL(3)})
	want = crawl.PageDue{Found: true, Tag: due.Tag, Card: due.Card, Due: due.Due, Items: 1}
	if err != nil || len(ds) != 1 || !ds[0].Due.Equal(want.Due) || ds[0].Due.Location() != time.UTC {
		f.t.Fatalf("Dues = %+v, %v; want [%+v]", ds, err, want)
	}
	if ds[0].Due = want.Due; ds[0] != want {
		f.t.Fatalf("Dues = %+v; want [%+v]", ds, want)
	}
	again := f.enqueue(listing("http://shop.test/list/1?again"))[0]
	again.URL = page.URL // the same page, finished again
	f.done(again, crawl.Done{})
	if got := f.memoOf(page.URL); !reflect.DeepEqual(got, memo) {
		f.t.Fatalf("a Done without a memo changed it to %+v", got)
	}
	f.done(again, crawl.Done{Failed: true, ForgetMemo: true})
	if got := f.memoOf(page.URL); !reflect.DeepEqual(got, memo) {
		f.t.Fatalf("a failed Done changed the memo to %+v", got)
	}
	f.done(again, crawl.Done{ForgetMemo: true})
	if got := f.memoOf(page.URL); got != nil {
		f.t.Fatalf("memo after ForgetMemo = %+v, want nil", got)
	}
}

func touchedItemsCountUnchanged(f *fixture) {
	a, b := itemURL(1), itemURL(2)
	f.begin(start(startURL))
	f.yield(items(version("k", a, 1), version("j", b, 2)))
	f.nextTraversal()
	page := f.enqueue(listing("http://shop.test/list/304"))[0]
	memo := &crawl.PageMemo{ETag: `"x"`}
	got := f.done(page, crawl.Done{Memo: memo, Touched: []crawl.ItemRef{
		{Key: "k", URL: a},       // held for a: unchanged
		{Key: "j", URL: a},       // held for b: a duplicate
		{Key: "absent", URL: a}}, // not stored: skipped
	})
	f.expectCounts("touched", got, crawl.Committed{Unchanged: 1, DuplicateKeys: 1, FirstDuplicate: dup("j", b, a)})
	if m := f.memoOf(page.URL); m != nil {
		f.t.Fatalf("a page that touched a duplicate kept its memo %+v", m)
	}
	f.done(page, crawl.Done{Memo: memo, Touched: []crawl.ItemRef{{Key: "k", URL: a}}})
	if m := f.memoOf(page.URL); m == nil {
		f.t.Fatal("a page whose touched items all stood lost its memo")
	}
	f.done(page, crawl.Done{Memo: memo, Items: items(version("j", a, 2))})
	if m := f.memoOf(page.URL); m != nil {
		f.t.Fatalf("a page that yielded a duplicate kept its memo %+v", m)
	}
	got = f.yield(items(version("k", b, 3)))
	f.expectCounts("k from b in traversal 2", got, crawl.Committed{DuplicateKeys: 1, FirstDuplicate: dup("k", a, b)})
	// The touch saw k at a in traversal 2, so b, which yielded it there
	// too, does not take it over in traversal 3 (a did not miss 2).
	f.nextTraversal()
	got = f.yield(items(version("k", b, 3)))
	f.expectCounts("k from b in traversal 3", got, crawl.Committed{DuplicateKeys: 1, FirstDuplicate: dup("k", a, b)})
}

func skippedPagesAreSeen(f *fixture) {
	a := itemURL(1)
	f.begin(start(startURL))
	f.yield(items(version("k", a, 1)))
	f.nextTraversal()
	skip := crawl.Skip{URL: a, Items: 2}
	got := f.commit(&crawl.Batch{Skipped: []crawl.Skip{skip}})
	f.expectCounts("skipped", got, crawl.Committed{Skipped: 2})
	if seen := f.seen(a); !seen[0] {
		f.t.Fatal("a skipped page is not seen in the traversal")
	}
	got = f.commit(&crawl.Batch{Skipped: []crawl.Skip{skip}})
	f.expectCounts("skipped again", got, crawl.Committed{})
	for _, q := range f.read() {
		if q.URL == a {
			f.t.Fatalf("a skipped page is queued: %+v", q)
		}
	}
}

// fetchItemPage finishes the item page at url, yielding versions, with a
// memo that lists their keys, as the engine leaves one.
func (f *fixture) fetchItemPage(url string, versions ...crawl.ItemVersion) crawl.Committed {
	f.t.Helper()
	q := f.enqueue(item(url))[0]
	memo := &crawl.PageMemo{ETag: `"e"`}
	for _, v := range versions {
		memo.Items = append(memo.Items, crawl.ItemRef{Key: v.Key, URL: v.URL, Hash: v.Hash})
	}
	return f.done(q, crawl.Done{Items: versions, Memo: memo})
}

// skipItemPage commits a skip of the page at url, with the items its memo
// lists.
func (f *fixture) skipItemPage(url string) {
	f.t.Helper()
	m := f.memoOf(url)
	if m == nil {
		f.t.Fatalf("no memo of %s to skip it by", url)
	}
	f.commit(&crawl.Batch{Skipped: []crawl.Skip{{URL: url, Items: len(m.Items)}}})
}

// skippedPagesKeepTheirKeys: a page skipped in a traversal yielded the
// items its memo lists there as far as a takeover is concerned, even when
// a later traversal fetches it after the challenger.
func skippedPagesKeepTheirKeys(f *fixture) {
	a, b := itemURL(1), itemURL(2)
	f.begin(start(startURL))
	f.fetchItemPage(a, version("k", a, 1))
	// Traversal 2: a is skipped, b yields k too.
	f.nextTraversal()
	f.skipItemPage(a)
	got := f.yield(items(version("k", b, 2)))
	f.expectCounts("k from b in traversal 2", got, crawl.Committed{DuplicateKeys: 1, FirstDuplicate: dup("k", a, b)})
	// Traversal 3: a is queued, b yields k before a is fetched: a did not
	// miss traversal 2, so b does not take k over.
	f.nextTraversal()
	f.enqueue(item(a))
	got = f.yield(items(version("k", b, 3)))
	f.expectCounts("k from b in traversal 3", got, crawl.Committed{DuplicateKeys: 1, FirstDuplicate: dup("k", a, b)})
	// Traversal 4: a is neither fetched nor skipped, b yields k again; in
	// traversal 5 b takes k over (a missed traversal 4).
	f.nextTraversal()
	f.yield(items(version("k", b, 4)))
	f.nextTraversal()
	got = f.yield(items(version("k", b, 5)))
	f.expectCounts("k from b in traversal 5", got, crawl.Committed{Changed: 1})
}

// skipsStandForTheirMemosItemsOnly: a skip keeps the items the page's
// memo lists, not every key the page once held: a key the page stopped
// yielding is taken over by the page that yields it now, skip or no skip.
func skipsStandForTheirMemosItemsOnly(f *fixture) {
	a, b := itemURL(1), itemURL(2)
	f.begin(start(startURL))
	f.fetchItemPage(a, version("k", a, 1), version("j", a, 1))
	// Traversal 2: a yields only k now; b yields j (a held it: b is its
	// challenger).
	f.nextTraversal()
	f.fetchItemPage(a, version("k", a, 1))
	got := f.yield(items(version("j", b, 2)))
	f.expectCounts("j from b in traversal 2", got, crawl.Committed{DuplicateKeys: 1, FirstDuplicate: dup("j", a, b)})
	// Traversal 3: a is skipped (its memo lists k alone); b yields j again
	// and takes it over.
	f.nextTraversal()
	f.skipItemPage(a)
	got = f.yield(items(version("j", b, 3)))
	f.expectCounts("j from b in traversal 3", got, crawl.Committed{Changed: 1})
}
