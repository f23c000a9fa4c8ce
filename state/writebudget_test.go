package state

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// bigItems is how many items bigState holds.
const bigItems = 20000

// big is the state bigState copies, written once per test binary.
var big struct {
	once sync.Once
	dir  string
	urls []string
	err  error
}

// bigState returns a folder holding a copy of a state with bigItems queued
// and finished URLs, each with an item of about 1 kB (about 25 MiB of
// file), and the URLs.
func bigState(t *testing.T) (string, []string) {
	t.Helper()
	big.once.Do(func() { big.dir, big.urls, big.err = writeBigState() })
	if big.err != nil {
		t.Fatal(big.err)
	}
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(big.dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	// Page by page, as bbolt writes: one large write would leave the copy
	// in large folios, which the kernel maps up to 2 MiB at a time.
	f, err := os.OpenFile(filepath.Join(dir, FileName), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for off := 0; off < len(b); off += 4096 {
		if _, err := f.Write(b[off:min(off+4096, len(b))]); err != nil {
			t.Fatal(err)
		}
	}
	return dir, big.urls
}

func writeBigState() (string, []string, error) {
	dir, err := os.MkdirTemp("", "bigstate")
	if err != nil {
		return "", nil, err
	}
	db, err := Open(dir, Options{})
	if err != nil {
		return dir, nil, err
	}
	defer db.Close()
	st, err := db.Begin(nil)
	if err != nil {
		return dir, nil, err
	}
	seq := st.NextSeq
	var urls []string
	for batch := 0; batch < bigItems/2000; batch++ {
		b := &crawl.Batch{}
		for i := 0; i < 2000; i++ {
			n := batch*2000 + i
			v := version(fmt.Sprintf("item-%x", n*7919), hash(n))
			v.Values = []any{strings.Repeat("x", 800)}
			q := crawl.Queued{Seq: seq, Entry: entry(v.URL, crawl.KindItem)}
			seq++
			b.Enqueue = append(b.Enqueue, q)
			b.Done = append(b.Done, crawl.Done{Seq: q.Seq, Entry: q.Entry, Items: []crawl.ItemVersion{v}})
			urls = append(urls, v.URL)
		}
		b.NextSeq = seq
		if _, err := db.Commit(b); err != nil {
			return dir, nil, err
		}
	}
	return dir, urls, nil
}

// syncedFreelist reads the state file's newer meta page and reports
// whether it points at a list of free pages (bbolt's PgidNoFreelist means
// the list must be rebuilt by reading every page).
func syncedFreelist(t *testing.T, dir string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	// A meta page: a 16-byte page header, then magic, version, page size
	// and flags (4 bytes each), the root bucket (16), the free-list page,
	// the high-water mark and the transaction id (8 each).
	freelist := func(page []byte) (uint64, uint64) {
		return binary.LittleEndian.Uint64(page[48:]), binary.LittleEndian.Uint64(page[64:])
	}
	pageSize := int(binary.LittleEndian.Uint32(b[16+8:]))
	f0, tx0 := freelist(b)
	f1, tx1 := freelist(b[pageSize:])
	if tx1 > tx0 {
		f0 = f1
	}
	return f0 != ^uint64(0)
}

func TestCloseRecordsTheFreePagesForTheNextOpen(t *testing.T) {
	dir, _ := bigState(t)
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Begin(nil); err != nil {
		t.Fatal(err)
	}
	store(t, db, version("one-more", hash(1)))
	if syncedFreelist(t, dir) {
		t.Fatal("commits wrote the free-page list: every commit would pay for it")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if !syncedFreelist(t, dir) {
		t.Fatal("Close did not record the free pages: the next Open reads the whole file")
	}
	// The next commit drops the list again, and the data is intact.
	db = open(t, dir)
	if _, err := db.Begin(nil); err != nil {
		t.Fatal(err)
	}
	store(t, db, version("two-more", hash(2)))
	if syncedFreelist(t, dir) {
		t.Fatal("a commit after reopening kept the free-page list")
	}
	if p, err := db.PendingSummary(); err != nil || p.Count != bigItems+2 {
		t.Fatalf("pending after reopen = %+v, %v; want %d", p, err, bigItems+2)
	}
}

func TestCommitTakesMoreTransactionsOnlyPastTheBudget(t *testing.T) {
	batch := func(db *DB, from, n int) *crawl.Batch {
		b := &crawl.Batch{}
		for i := from; i < from+n; i++ {
			// Changes to items all over the state.
			v := version(fmt.Sprintf("item-%x", i*7919*9), hash(i+1))
			v.Values = []any{strings.Repeat("x", 800)}
			b.Done = append(b.Done, crawl.Done{Entry: entry(v.URL, crawl.KindItem), Items: []crawl.ItemVersion{v}})
			b.Enqueue = append(b.Enqueue, crawl.Queued{Seq: uint64(i + 1), Entry: entry(v.URL+"/next", crawl.KindItem)})
		}
		return b
	}
	txid := func(db *DB) int {
		var id int
		_ = db.bolt.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
		return id
	}
	for _, tc := range []struct {
		budget  int64
		several bool
	}{{1 << 30, false}, {4 << 20, true}} {
		dir, _ := bigState(t)
		db := open(t, dir)
		if _, err := db.Begin(nil); err != nil {
			t.Fatal(err)
		}
		db.budget = tc.budget
		before := txid(db)
		counts, err := db.Commit(batch(db, 0, 2000))
		if err != nil {
			t.Fatal(err)
		}
		txs := txid(db) - before
		t.Logf("budget %d kB: 2,000 items in %d transactions", tc.budget>>10, txs)
		if counts.Changed != 2000 {
			t.Fatalf("committed %+v, want 2000 changed", counts)
		}
		if tc.several != (txs > 1) {
			t.Fatalf("budget %d: %d transactions", tc.budget, txs)
		}
		if qs, err := db.Read(0, 5000); err != nil || len(qs) != 2000 {
			t.Fatalf("queue holds %d entries, %v; want 2000", len(qs), err)
		}
	}
}

// A publish retires its versions however many there are: all of them by
// dropping the log, some of them in as many transactions as the budget
// needs, never touching a later version.
func TestCommitPublishRetiresManyVersionsInBoundedTransactions(t *testing.T) {
	txid := func(db *DB) int {
		var id int
		_ = db.bolt.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
		return id
	}
	for _, tc := range []struct {
		name    string
		later   int // versions stored after the publish began
		several bool
	}{{"all pending versions", 0, false}, {"all but later ones", 3, true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := bigState(t)
			db := open(t, dir)
			db.budget = 1 << 20
			p, err := db.PendingSummary()
			if err != nil || p.Count != bigItems {
				t.Fatalf("pending = %+v, %v; want %d", p, err, bigItems)
			}
			if err := db.BeginPublish(Publication{RunID: "r1", MaxSeq: p.MaxSeq}); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Begin(nil); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < tc.later; i++ {
				store(t, db, version(fmt.Sprintf("later-%d", i), hash(i+1)))
			}
			before := txid(db)
			n, err := db.CommitPublish("r1")
			if err != nil || n != bigItems {
				t.Fatalf("retired %d, %v; want %d", n, err, bigItems)
			}
			// The publish's first and last transactions, and the retirement's.
			txs := txid(db) - before - 2
			t.Logf("retired %d versions in %d transactions", n, txs)
			if tc.several != (txs > 1) {
				t.Fatalf("retired in %d transactions, want several: %v", txs, tc.several)
			}
			after, err := db.PendingSummary()
			if err != nil || after.Count != tc.later {
				t.Fatalf("pending after = %+v, %v; want %d", after, err, tc.later)
			}
			if got := pendingChanges(t, db); len(got) != tc.later {
				t.Fatalf("pending versions after = %v, want the %d later ones", got, tc.later)
			}
		})
	}
}
