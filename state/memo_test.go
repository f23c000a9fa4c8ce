package state

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
)

func TestMemoCodec(t *testing.T) {
	m := &crawl.PageMemo{Tag: "t", ETag: `W/"1"`, LastModified: "Tue, 01 Apr 2025 10:00:00 GMT",
		Links:    []crawl.Entry{{URL: "http://a.test/1", Kind: crawl.KindItem, Card: "c1"}, {URL: "http://a.test/p?page=2", Kind: crawl.KindListing, Paged: true}},
		Items:    []crawl.ItemRef{{Key: "k", URL: "http://a.test/1", Hash: "h"}, {Key: "", URL: ""}},
		Interval: 36 * time.Hour, Due: time.Date(2026, 12, 1, 2, 3, 4, 5, time.UTC), Card: "c"}
	b := encodeMemo("http://a.test/", m)
	got, err := decodeMemo(b)
	if err != nil || got.url != "http://a.test/" || !reflect.DeepEqual(&got.PageMemo, m) {
		t.Fatalf("decode = %+v, %v; want %+v", got, err, m)
	}
	for n := range len(b) {
		if _, err := decodeMemo(b[:n]); err == nil {
			t.Fatalf("a memo cut to %d of %d bytes decoded", n, len(b))
		}
	}
	if _, err := decodeMemo(append(b, 0)); err == nil {
		t.Fatal("a memo with a byte after its end decoded")
	}
	// A chain page's memo says what it held, zero included.
	for _, held := range []int{0, 1, 300} {
		m.Chain = &crawl.ChainMark{Held: held}
		b = encodeMemo("http://a.test/", m)
		if got, err := decodeMemo(b); err != nil || !reflect.DeepEqual(&got.PageMemo, m) {
			t.Fatalf("decode = %+v, %v; want %+v", got, err, m)
		}
		if _, err := decodeMemo(append(b, 0)); err == nil {
			t.Fatal("a chain memo with a byte after its end decoded")
		}
	}
}

// TestDecodeDueAgreesWithDecodeMemo: what decodeDue reads of a memo in
// place is what decodeMemo decodes of it; it refuses what decodeMemo
// refuses, and a memo of another URL is none of url's.
func TestDecodeDueAgreesWithDecodeMemo(t *testing.T) {
	const url = "http://a.test/item/1"
	base := crawl.PageMemo{Tag: "t", ETag: `W/"1"`, LastModified: "Tue, 01 Apr 2025 10:00:00 GMT",
		Links:    []crawl.Entry{{URL: "http://a.test/1", Kind: crawl.KindItem, Card: "c1"}, {URL: "http://a.test/p?page=2", Kind: crawl.KindListing, Paged: true}},
		Items:    []crawl.ItemRef{{Key: "k", URL: url, Hash: "h"}, {Key: "j", URL: url}},
		Interval: 36 * time.Hour, Due: time.Date(2026, 12, 1, 2, 3, 4, 5, time.UTC), Card: "c"}
	memos := []crawl.PageMemo{base, {}, {Tag: "other", Due: base.Due}, {Card: "card only"}}
	chained := base
	chained.Chain = &crawl.ChainMark{Held: 7}
	memos = append(memos, chained)
	for _, m := range memos {
		b := encodeMemo(url, &m)
		want := crawl.PageDue{Found: true, Tag: m.Tag, Card: m.Card, Due: m.Due, Items: len(m.Items)}
		for _, tag := range []string{"", "t", "other"} {
			got, ok, err := decodeDue(b, url, tag)
			if err != nil || !ok || !got.Due.Equal(want.Due) {
				t.Fatalf("decodeDue(%+v) = %+v, %v, %v; want %+v", m, got, ok, err, want)
			}
			if got.Due = want.Due; got != want {
				t.Fatalf("decodeDue(%+v) = %+v; want %+v", m, got, want)
			}
		}
		if _, ok, err := decodeDue(b, "http://a.test/item/2", ""); ok || err != nil {
			t.Fatalf("a memo of %s read as one of another URL: %v, %v", url, ok, err)
		}
		for _, cut := range append(bytesCuts(b), append(slices.Clone(b), 0), append(slices.Clone(b), 1, 0)) {
			_, memoErr := decodeMemo(cut)
			if _, _, err := decodeDue(cut, url, ""); (err == nil) != (memoErr == nil) {
				t.Fatalf("%d of %d bytes: decodeDue says %v, decodeMemo %v", len(cut), len(b), err, memoErr)
			}
		}
	}
}

// bytesCuts returns b cut short at every length.
func bytesCuts(b []byte) [][]byte {
	cuts := make([][]byte, len(b))
	for n := range cuts {
		cuts[n] = b[:n]
	}
	return cuts
}

// A repair keeps no page memo: an item whose pending version was lost
// must be fetched whole, not answered 304.
func TestRepairKeepsNoMemo(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir)
	db := open(t, dir)
	page := "http://shop.test/list/1"
	if _, err := db.Commit(&crawl.Batch{Done: []crawl.Done{{Seq: 99, Entry: entry(page, crawl.KindListing),
		Memo: &crawl.PageMemo{ETag: `"x"`}}}}); err != nil {
		t.Fatal(err)
	}
	if m, err := db.Memo(page); err != nil || m == nil {
		t.Fatalf("memo before the repair = %v, %v", m, err)
	}
	_ = db.Close()
	path := statePath(dir)
	garble(t, path, leavesOf(t, path, string(bucketVersions))[1])
	if _, err := Repair(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	db = open(t, dir)
	if m, err := db.Memo(page); err != nil || m != nil {
		t.Fatalf("memo after the repair = %+v, %v; want none", m, err)
	}
}

func TestMemoListsItemReadsTheEncodingInPlace(t *testing.T) {
	m := &crawl.PageMemo{Tag: "t", ETag: `"e"`, Links: []crawl.Entry{{URL: "http://h/l", Kind: crawl.KindListing, Card: "c"}},
		Items: []crawl.ItemRef{{Key: "k1", URL: "http://h/1", Hash: "h1"}, {Key: "k2", URL: "http://h/1", Hash: "h2"}}, Card: "x"}
	v := encodeMemo("http://h/1", m)
	for _, tc := range []struct {
		url, key string
		want     bool
	}{{"http://h/1", "k1", true}, {"http://h/1", "k2", true}, {"http://h/1", "k3", false}, {"http://h/2", "k1", false}} {
		if got := memoListsItem(v, tc.url, tc.key); got != tc.want {
			t.Errorf("memoListsItem(%s, %s) = %v, want %v", tc.url, tc.key, got, tc.want)
		}
	}
	if memoListsItem(v[:len(v)/2], "http://h/1", "k2") || memoListsItem(nil, "http://h/1", "k1") {
		t.Error("a cut or missing memo lists an item")
	}
}

// TestMemosInAnyOrder: whatever the order of the URLs, with pages without
// a memo between them, memos not asked for between them, far apart and
// unknown ones, each gets its own memo.
func TestMemosInAnyOrder(t *testing.T) {
	db := open(t, t.TempDir())
	st, err := db.Begin([]crawl.Entry{entry("http://h/list", crawl.KindListing)})
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	batch := &crawl.Batch{}
	for i := range 60 {
		u := fmt.Sprintf("http://h/item/%d", i)
		urls = append(urls, u)
		batch.Enqueue = append(batch.Enqueue, crawl.Queued{Seq: st.NextSeq + uint64(i), Entry: entry(u, crawl.KindItem)})
	}
	batch.NextSeq = st.NextSeq + 60
	if _, err := db.Commit(batch); err != nil {
		t.Fatal(err)
	}
	done := &crawl.Batch{NextSeq: batch.NextSeq}
	for i, q := range batch.Enqueue {
		if i%7 == 3 || i > 20 && i < 50 {
			continue // no memo: gaps of one and of many pages
		}
		done.Done = append(done.Done, crawl.Done{Seq: q.Seq, Entry: q.Entry, Memo: &crawl.PageMemo{ETag: fmt.Sprintf(`"%d"`, i)}})
	}
	if _, err := db.Commit(done); err != nil {
		t.Fatal(err)
	}
	// Items 5 to 15 are not asked for: a run of memos between two asked.
	ask := append(slices.Concat(urls[:5], urls[16:]), "http://h/unknown", "http://h/list")
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(ask), func(i, j int) { ask[i], ask[j] = ask[j], ask[i] })
	got, err := db.Memos(ask)
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range ask {
		var n int
		_, scanErr := fmt.Sscanf(u, "http://h/item/%d", &n)
		switch want := fmt.Sprintf(`"%d"`, n); {
		case scanErr != nil || n%7 == 3 || n > 20 && n < 50:
			if got[i] != nil {
				t.Errorf("memo of %s = %+v, want none", u, got[i])
			}
		case got[i] == nil || got[i].ETag != want:
			t.Errorf("memo of %s = %+v, want ETag %s", u, got[i], want)
		}
	}
}
