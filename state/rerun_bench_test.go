package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/crawl"
)

// BenchmarkRerunReads reads what an unchanged rerun under a revisit
// policy reads of each listing page of a state that holds 500 listing
// pages of 20 item pages each, as the bundled catalog's are: the
// listing's memo, then what the memos of its item pages say of when they
// are due.
func BenchmarkRerunReads(b *testing.B) {
	const listings, perListing = 500, 20
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	listURL := func(i int) string { return fmt.Sprintf("http://h/catalogue/page-%d.html", i+1) }
	itemURL := func(i int) string { return fmt.Sprintf("http://h/catalogue/item-%d/index.html", i) }
	first := crawl.Entry{URL: listURL(0), Kind: crawl.KindListing, Start: true}
	st, err := db.Begin([]crawl.Entry{first})
	if err != nil {
		b.Fatal(err)
	}
	seq := st.NextSeq
	due := time.Now().Add(time.Hour).UTC()
	done := crawl.Done{Seq: 1, Entry: first}
	for l := range listings {
		m := &crawl.PageMemo{Tag: "t", ETag: fmt.Sprintf(`"%d"`, l)}
		batch := &crawl.Batch{}
		for i := l * perListing; i < (l+1)*perListing; i++ {
			e := crawl.Entry{URL: itemURL(i), Kind: crawl.KindItem, Card: fmt.Sprintf("%016x", i)}
			m.Links = append(m.Links, e) // a listing yields links, its item pages the items
			batch.Enqueue = append(batch.Enqueue, crawl.Queued{Seq: seq, Entry: e})
			seq++
		}
		next := crawl.Entry{URL: listURL(l + 1), Kind: crawl.KindListing}
		m.Links = append(m.Links, next)
		batch.Enqueue = append(batch.Enqueue, crawl.Queued{Seq: seq, Entry: next})
		nextSeq := seq
		seq++
		done.Memo = m
		batch.Done = []crawl.Done{done}
		for _, q := range batch.Enqueue[:perListing] {
			item := &crawl.PageMemo{Tag: "t", ETag: `"i"`, Due: due, Interval: time.Hour, Card: q.Card,
				Items: []crawl.ItemRef{{Key: "k" + q.URL, URL: q.URL, Hash: "h"}}}
			batch.Done = append(batch.Done, crawl.Done{Seq: q.Seq, Entry: q.Entry, Memo: item})
		}
		batch.NextSeq = seq
		if _, err := db.Commit(batch); err != nil {
			b.Fatal(err)
		}
		done = crawl.Done{Seq: nextSeq, Entry: next}
	}
	items := make([]string, perListing)
	b.ResetTimer()
	for n := range b.N {
		l := n % listings
		m, err := db.Memo(listURL(l))
		if err != nil || m == nil || len(m.Links) != perListing+1 {
			b.Fatalf("memo of listing %d = %v, %v", l, m, err)
		}
		for i, e := range m.Links[:perListing] {
			items[i] = e.URL
		}
		ds, err := db.Dues(items)
		if err != nil || !ds[perListing-1].Found {
			b.Fatalf("dues of listing %d = %v, %v", l, ds, err)
		}
	}
}
