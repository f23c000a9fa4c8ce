package state

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

func open(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func entry(u string, kind crawl.Kind) crawl.Entry { return crawl.Entry{URL: u, Kind: kind} }

func version(key, hash string) crawl.ItemVersion {
	return crawl.ItemVersion{Key: key, URL: "http://h/" + key, Hash: hash, Values: []any{key, int64(1)}, FetchedAt: time.Unix(0, 0)}
}

func hash(n int) string { return fmt.Sprintf("%032x", n) }

func TestBeginStartsATraversalOnAnEmptyQueue(t *testing.T) {
	db := open(t, t.TempDir())
	starts := []crawl.Entry{{URL: "http://h/1", Kind: crawl.KindListing, Start: true}, {URL: "http://h/1", Kind: crawl.KindListing, Start: true}}
	st, err := db.Begin(starts)
	if err != nil {
		t.Fatal(err)
	}
	if !st.NewTraversal || st.Traversal != 1 || st.Queued != 1 {
		t.Fatalf("start = %+v, want a new traversal 1 with the start URL queued once", st)
	}
	qs, err := db.Read(0, 10)
	if err != nil || len(qs) != 1 || !qs[0].Start || qs[0].Kind != crawl.KindListing || qs[0].Seq != 1 {
		t.Fatalf("queue = %+v, %v", qs, err)
	}
	// A second Begin with the start URL still queued resumes.
	st, err = db.Begin(starts)
	if err != nil || st.NewTraversal || st.Traversal != 1 {
		t.Fatalf("resume = %+v, %v", st, err)
	}
}

func TestCommitMovesTheQueueAndDetectsChanges(t *testing.T) {
	db := open(t, t.TempDir())
	st, _ := db.Begin([]crawl.Entry{{URL: "http://h/list", Kind: crawl.KindListing, Start: true}})
	next := st.NextSeq
	b := &crawl.Batch{
		Enqueue: []crawl.Queued{{Seq: next, Entry: entry("http://h/a", crawl.KindItem)}, {Seq: next + 1, Entry: entry("http://h/b", crawl.KindItem)}},
		Done:    []crawl.Done{{Seq: 1, Entry: entry("http://h/list", crawl.KindListing)}},
		NextSeq: next + 2,
	}
	if _, err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	qs, _ := db.Read(0, 10)
	if len(qs) != 2 || qs[0].URL != "http://h/a" || qs[1].URL != "http://h/b" {
		t.Fatalf("queue after commit = %+v", qs)
	}
	if qs2, _ := db.Read(qs[0].Seq, 10); len(qs2) != 1 || qs2[0].URL != "http://h/b" {
		t.Fatalf("read after cursor = %+v", qs2)
	}
	seen, _ := db.Seen([]string{"http://h/a", "http://h/list", "http://h/zzz"})
	if !seen[0] || !seen[1] || seen[2] {
		t.Fatalf("seen = %v", seen)
	}
	// Items: a and b are new; a again with the same hash is unchanged; b
	// again with another hash in the same traversal is a duplicate: the
	// first values win (see TestDuplicateKeys).
	c, err := db.Commit(&crawl.Batch{Done: []crawl.Done{
		{Seq: qs[0].Seq, Entry: qs[0].Entry, Items: []crawl.ItemVersion{version("a", hash(1))}},
		{Seq: qs[1].Seq, Entry: qs[1].Entry, Items: []crawl.ItemVersion{version("b", hash(2)), version("a", hash(1)), version("b", hash(3))}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if c.New != 2 || c.Unchanged != 1 || c.Changed != 0 || c.DuplicateKeys != 1 {
		t.Fatalf("counts = %+v, want 2 new, 1 unchanged, 1 duplicate", c)
	}
	if qs, _ := db.Read(0, 10); len(qs) != 0 {
		t.Fatalf("queue not empty: %+v", qs)
	}
	pending := db.pendingKeys(t)
	if len(pending) != 2 || pending[0] != "a" || pending[1] != "b" {
		t.Fatalf("pending = %v", pending)
	}
	// An already-seen URL is not queued twice.
	if _, err := db.Commit(&crawl.Batch{Enqueue: []crawl.Queued{{Seq: 99, Entry: entry("http://h/a", crawl.KindItem)}}}); err != nil {
		t.Fatal(err)
	}
	if qs, _ := db.Read(0, 10); len(qs) != 0 {
		t.Fatalf("seen URL queued again: %+v", qs)
	}
}

func TestFailedURLsWaitForTheRetryPassAndTheNextRun(t *testing.T) {
	dir := t.TempDir()
	db := open(t, dir)
	st, _ := db.Begin([]crawl.Entry{{URL: "http://h/list", Kind: crawl.KindListing, Start: true}})
	if _, err := db.Commit(&crawl.Batch{Done: []crawl.Done{{Seq: 1, Entry: crawl.Entry{URL: "http://h/list", Kind: crawl.KindListing, Start: true}, Failed: true}}}); err != nil {
		t.Fatal(err)
	}
	moved, next, err := db.RequeueFailed(st.NextSeq)
	if err != nil || moved != 1 || next != st.NextSeq+1 {
		t.Fatalf("requeue = %d, %d, %v", moved, next, err)
	}
	qs, _ := db.Read(0, 10)
	if len(qs) != 1 || qs[0].Seq != st.NextSeq || !qs[0].Start {
		t.Fatalf("retry pass queue = %+v", qs)
	}
	// It fails again in the retry pass and the run ends.
	if _, err := db.Commit(&crawl.Batch{Done: []crawl.Done{{Seq: qs[0].Seq, Entry: qs[0].Entry, Failed: true}}}); err != nil {
		t.Fatal(err)
	}
	fin, err := db.Finish(0)
	if err != nil || fin.Failed != 1 || fin.Queued != 1 {
		t.Fatalf("finish = %+v, %v", fin, err)
	}
	// The next run finds the queue empty: a new traversal, carrying the
	// failed URL.
	st2, err := db.Begin([]crawl.Entry{{URL: "http://h/list", Kind: crawl.KindListing, Start: true}})
	if err != nil || !st2.NewTraversal || st2.Traversal != 2 || st2.Queued != 1 {
		t.Fatalf("next run = %+v, %v", st2, err)
	}
	if fin, _ = db.Finish(0); fin.Failed != 0 {
		t.Fatalf("finish of the new traversal = %+v", fin)
	}
}

func TestEmptyRunStreakSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		db.RecordRun(false)
	}
	db.Close()
	db = open(t, dir)
	if streak, err := db.RecordRun(false); err != nil || streak != 4 {
		t.Fatalf("streak = %d, %v; want 4", streak, err)
	}
	if streak, _ := db.RecordRun(true); streak != 0 {
		t.Fatalf("a productive run's streak = %d, want 0", streak)
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	open(t, dir)
	start := time.Now()
	_, err := Open(dir, Options{LockTimeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open = %v, want ErrLocked", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("lock wait took %s", el)
	}
	if want := dir; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not name %s", err, want)
	}
}

func TestVersionRecordsRoundTrip(t *testing.T) {
	in := Version{Key: "k1", URL: "http://h/k1", Hash: hash(7), Change: ChangeChanged, RunID: "20261130T002305Z-3f9a",
		FetchedAt: time.Unix(1764461000, 123456789).UTC(), Values: []byte(`["t",1.5,null,["a","b"]]`)}
	out, err := decodeVersion(42, encodeVersion(&in))
	if err != nil {
		t.Fatal(err)
	}
	in.Seq = 42
	if out.Key != in.Key || out.URL != in.URL || out.Hash != in.Hash || out.Change != in.Change || out.RunID != in.RunID ||
		!out.FetchedAt.Equal(in.FetchedAt) || string(out.Values) != string(in.Values) || out.Seq != 42 {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
	if _, err := decodeVersion(1, encodeVersion(&in)[:12]); err == nil {
		t.Fatal("a truncated record must not decode")
	}
}

func TestRetryMovesOutageFailuresBackToTheQueue(t *testing.T) {
	db := open(t, t.TempDir())
	st, _ := db.Begin([]crawl.Entry{{URL: "http://h/list", Kind: crawl.KindListing, Start: true}})
	e := crawl.Entry{URL: "http://h/list", Kind: crawl.KindListing, Start: true}
	q := crawl.Queued{Seq: st.NextSeq, Entry: e}
	if _, err := db.Commit(&crawl.Batch{Done: []crawl.Done{{Seq: 1, Entry: e, Failed: true}}, Retry: []crawl.Queued{q}, NextSeq: q.Seq + 1}); err != nil {
		t.Fatal(err)
	}
	qs, _ := db.Read(0, 10)
	if len(qs) != 1 || qs[0].Seq != q.Seq || !qs[0].Start {
		t.Fatalf("queue = %+v, want the URL back under its new number", qs)
	}
	if fin, _ := db.Finish(0); fin.Failed != 0 || fin.Queued != 1 {
		t.Fatalf("finish = %+v: an outage failure is queued, not failed", fin)
	}
}

func TestANewTraversalHasSeenNothing(t *testing.T) {
	db := open(t, t.TempDir())
	start := crawl.Entry{URL: "http://h/list", Kind: crawl.KindListing, Start: true}
	st, _ := db.Begin([]crawl.Entry{start})
	b := &crawl.Batch{
		Enqueue: []crawl.Queued{{Seq: st.NextSeq, Entry: entry("http://h/a", crawl.KindItem)}},
		Done:    []crawl.Done{{Seq: 1, Entry: start}},
		NextSeq: st.NextSeq + 1,
	}
	if _, err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Commit(&crawl.Batch{Done: []crawl.Done{{Seq: st.NextSeq, Entry: entry("http://h/a", crawl.KindItem)}}}); err != nil {
		t.Fatal(err)
	}
	if seen, _ := db.Seen([]string{"http://h/a"}); !seen[0] {
		t.Fatal("traversal 1 forgot a URL it queued")
	}
	st, err := db.Begin([]crawl.Entry{start})
	if err != nil || !st.NewTraversal || st.Traversal != 2 || st.Queued != 1 {
		t.Fatalf("second begin = %+v, %v; want traversal 2 with the start queued", st, err)
	}
	if seen, _ := db.Seen([]string{"http://h/a", "http://h/list"}); seen[0] || !seen[1] {
		t.Fatalf("traversal 2 seen = %v, want only its start", seen)
	}
}

func TestFormat2StateIsConverted(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := db.Begin([]crawl.Entry{{URL: "http://h/list", Kind: crawl.KindListing, Start: true}})
	if _, err := db.Commit(&crawl.Batch{Enqueue: []crawl.Queued{{Seq: st.NextSeq, Entry: entry("http://h/a", crawl.KindItem)}}, NextSeq: st.NextSeq + 1}); err != nil {
		t.Fatal(err)
	}
	// Write the seen set and the format number as version 2 did.
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketURLs, bucketURLsRecent, bucketMarks} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		seen, err := tx.CreateBucket(bucketSeenV8)
		if err != nil {
			return err
		}
		for _, u := range []string{"http://h/list", "http://h/a"} {
			if err := seen.Put(seenKey(u), []byte{1}); err != nil {
				return err
			}
		}
		return putUint(tx.Bucket(bucketMeta), keyFormat, 2)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, dir)
	st, err = db.Begin(nil)
	if err != nil || st.NewTraversal {
		t.Fatalf("begin after conversion = %+v, %v; want the traversal resumed", st, err)
	}
	if seen, _ := db.Seen([]string{"http://h/list", "http://h/a", "http://h/b"}); !seen[0] || !seen[1] || seen[2] {
		t.Fatalf("seen after conversion = %v, want the two queued URLs", seen)
	}
}

// TestOpenOfACurrentFileOnlyReads: opening a file of the current format
// with nothing to upgrade or undo begins no write transaction (each costs
// two syncs); the first open of a new file does.
func TestOpenOfACurrentFileOnlyReads(t *testing.T) {
	dir := t.TempDir()
	txID := func(db *DB) int {
		t.Helper()
		id := 0
		if err := db.bolt.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
			t.Fatal(err)
		}
		return id
	}
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if txID(db) == 0 {
		t.Fatal("a new file was opened without a write transaction: its buckets are not made")
	}
	if _, err := db.Commit(&crawl.Batch{Enqueue: []crawl.Queued{{Seq: 1, Entry: entry("http://h/1", crawl.KindItem)}}, NextSeq: 2}); err != nil {
		t.Fatal(err)
	}
	before := txID(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	closed := 0
	_ = raw.View(func(tx *bolt.Tx) error { closed = tx.ID(); return nil })
	_ = raw.Close()
	if closed < before {
		t.Fatalf("transaction %d after Close, %d before it", closed, before)
	}
	db = open(t, dir)
	if got := txID(db); got != closed {
		t.Fatalf("the open of a current file ran %d write transactions", got-closed)
	}
	if seen, err := db.Seen([]string{"http://h/1"}); err != nil || !seen[0] {
		t.Fatalf("after a reopen, Seen = %v, %v; want the URL queued before", seen, err)
	}
}
