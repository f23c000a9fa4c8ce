package state

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// The crash test runs this test binary as a writer process that commits
// batches as fast as it can, kills it with SIGKILL at a random moment, and
// checks that every batch is in the state entirely or not at all.

const (
	crashDirEnv    = "DATABREW_STATE_CRASH_DIR"
	crashURLsEnv   = "DATABREW_STATE_CRASH_URLS"
	crashBudgetEnv = "DATABREW_STATE_CRASH_BUDGET"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		urls, _ := strconv.Atoi(os.Getenv(crashURLsEnv))
		budget, _ := strconv.ParseInt(os.Getenv(crashBudgetEnv), 10, 64)
		crashWriter(dir, urls, budget)
		return
	}
	code := m.Run()
	if big.dir != "" {
		_ = os.RemoveAll(big.dir)
	}
	os.Exit(code)
}

const crashBatchURLs = 10

func crashURL(batch, j int) string { return fmt.Sprintf("http://h/b%d-%d", batch, j) }

// crashWriter commits batch after batch: batch i queues n URLs, finishes
// the n of batch i-1 and stores one item per finished URL. It prints the
// number of every batch Commit returned for.
func crashWriter(dir string, n int, budget int64) {
	db, err := Open(dir, Options{WriteBudget: budget})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	st, err := db.Begin(nil)
	if err != nil {
		os.Exit(3)
	}
	seq := st.NextSeq
	var prev []crawl.Queued
	for i := 1; ; i++ {
		b := &crawl.Batch{}
		for j := 0; j < n; j++ {
			b.Enqueue = append(b.Enqueue, crawl.Queued{Seq: seq, Entry: crawl.Entry{URL: crashURL(i, j), Kind: crawl.KindItem}})
			seq++
		}
		for _, q := range prev {
			b.Done = append(b.Done, crawl.Done{Seq: q.Seq, Entry: q.Entry, Items: []crawl.ItemVersion{version(q.URL, hash(i))}})
		}
		b.NextSeq = seq
		if _, err := db.Commit(b); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		prev = b.Enqueue
		fmt.Println(i)
	}
}

// killWriter starts a crash writer in dir, kills it with SIGKILL at a
// random moment after its first commit and returns the last batch it
// acknowledged.
func killWriter(t *testing.T, dir string, urls int, budget int64, maxWait time.Duration) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir,
		crashURLsEnv+"="+strconv.Itoa(urls), crashBudgetEnv+"="+strconv.FormatInt(budget, 10))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() { // wait for the first commit
		t.Fatalf("writer printed nothing")
	}
	acked := 1
	time.Sleep(rand.N(maxWait))
	_ = cmd.Process.Kill()
	for lines.Scan() {
		acked, _ = strconv.Atoi(lines.Text())
	}
	_ = cmd.Wait()
	return acked
}

func TestCrashLeavesWholeBatches(t *testing.T) {
	trials := 12
	if testing.Short() {
		trials = 3
	}
	for trial := 0; trial < trials; trial++ {
		dir := t.TempDir()
		acked := killWriter(t, dir, crashBatchURLs, 0, 40*time.Millisecond)
		t.Logf("trial %d: acked %d", trial, acked)
		checkWholeBatches(t, dir, acked)
	}
}

// A budget this small makes Commit take a transaction for every few
// entries of a batch.
const tinyBudget = 64 << 10

func TestCrashInACommitOfManyTransactionsKeepsAPrefix(t *testing.T) {
	trials := 8
	if testing.Short() {
		trials = 3
	}
	const urls = 40
	for trial := 0; trial < trials; trial++ {
		dir := t.TempDir()
		acked := killWriter(t, dir, urls, tinyBudget, 400*time.Millisecond)
		enqueued, finished := checkPrefix(t, dir, urls, acked)
		t.Logf("trial %d: acked batch %d; %d URLs queued, %d finished", trial, acked, enqueued, finished)
	}
}

// checkPrefix reopens the state written by a crash writer with n URLs a
// batch and checks that it holds a prefix of the writer's work: the
// finished URLs (with their items) are the first F; the URLs ever queued
// are whole batches plus part of the next one (a transaction marks a
// batch's new URLs in key order, so a crash may keep any part of them), and
// those not finished are still queued in order; every finished URL's batch
// successor was queued whole before it finished; and everything Commit
// acknowledged is there. It returns how many URLs were queued and F.
func checkPrefix(t *testing.T, dir string, n, acked int) (enqueued, finished int) {
	t.Helper()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer db.Close()
	index := func(u string) int {
		var b, j int
		if _, err := fmt.Sscanf(u, "http://h/b%d-%d", &b, &j); err != nil {
			t.Fatalf("URL %q: %v", u, err)
		}
		return (b-1)*n + j
	}
	qs, err := db.Read(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var items []int
	var seen int
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		seen = countSeen(t, db, tx)
		return db.itemRecordsOf(tx).ForEach(func(k, _ []byte) error {
			items = append(items, index(string(k)))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(items)
	for i, idx := range items {
		if idx != i {
			t.Fatalf("finished URLs are not a prefix: the %dth is URL %d", i, idx)
		}
	}
	finished = len(items)
	all := slices.Clone(items)
	for i, q := range qs {
		idx := index(q.URL)
		if idx < finished || i > 0 && idx <= index(qs[i-1].URL) {
			t.Fatalf("queue entry %d is URL %d: queued URLs must follow the %d finished ones, in order", i, idx, finished)
		}
		all = append(all, idx)
	}
	enqueued = len(all)
	whole := 0 // URLs of whole batches queued
	for whole < enqueued && all[whole] == whole {
		whole++
	}
	whole -= whole % n
	if last := all[enqueued-1]; last >= whole+n {
		t.Fatalf("URL %d is queued but only the first %d URLs form whole batches: a batch was queued before the one ahead of it", last, whole)
	}
	if seen != enqueued {
		t.Fatalf("%d URLs seen, want the %d queued or finished", seen, enqueued)
	}
	if finished > 0 {
		// Batch b+1 queued all its URLs before it finished batch b's.
		if batch := (finished-1)/n + 1; whole < (batch+1)*n {
			t.Fatalf("URLs of batch %d finished but only %d URLs of whole batches queued: batch %d's links were lost", batch, whole, batch+1)
		}
	}
	if whole < acked*n || finished < (acked-1)*n {
		t.Fatalf("batch %d was acknowledged but only %d URLs are queued and %d finished", acked, whole, finished)
	}
	checkConsistent(t, db)
	return enqueued, finished
}

// checkWholeBatches reopens the state and checks that the last committed
// batch k is whole: batches 1..k-1 finished, batch k queued, nothing of
// batch k+1, and one item per finished URL.
func checkWholeBatches(t *testing.T, dir string, acked int) {
	t.Helper()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer db.Close()
	qs, err := db.Read(0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != crashBatchURLs {
		t.Fatalf("queue holds %d URLs, want exactly one batch of %d", len(qs), crashBatchURLs)
	}
	var last int
	if _, err := fmt.Sscanf(qs[0].URL, "http://h/b%d-", &last); err != nil {
		t.Fatal(err)
	}
	if last < acked {
		t.Fatalf("batch %d was acknowledged but the state ends at batch %d", acked, last)
	}
	for j, q := range qs {
		if q.URL != crashURL(last, j) {
			t.Fatalf("queue entry %d = %s, want %s", j, q.URL, crashURL(last, j))
		}
	}
	var items, seen int
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		seen = countSeen(t, db, tx)
		return db.itemRecordsOf(tx).ForEach(func(_, _ []byte) error {
			items++
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (last - 1) * crashBatchURLs; items != want {
		t.Fatalf("%d items after batch %d, want %d", items, last, want)
	}
	if want := last * crashBatchURLs; seen != want {
		t.Fatalf("%d seen URLs after batch %d, want %d", seen, last, want)
	}
	checkConsistent(t, db)
}

// checkConsistent runs bbolt's consistency check over the file.
func checkConsistent(t *testing.T, db *DB) {
	t.Helper()
	err := db.bolt.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("bbolt consistency check: %v", err)
	}
}

// countSeen counts the URLs the seen set holds, checking that each has a
// page number and a traversal: they are written in one transaction.
func countSeen(t *testing.T, db *DB, tx *bolt.Tx) int {
	t.Helper()
	seen, urls := db.seenOf(tx), map[urlHash]bool{}
	visit := func(k []byte) {
		if m, ok := seen.get(k); !ok || m.page == 0 || m.traversal == 0 {
			t.Errorf("URL %x has the mark %+v", k, m)
		}
		h, _ := hashOf(k)
		urls[h] = true
	}
	_ = seen.urls.forEach(func(k, _ []byte) error {
		visit(k)
		return nil
	})
	// A URL in the index's recent part, or in both while a fold was cut
	// short, counts once.
	_ = seen.recent.bucket.ForEach(func(k, v []byte) error {
		h, _, ok := decodeRecent(k, v)
		if !ok {
			t.Errorf("recent URL index entry %x = %x does not decode", k, v)
		}
		visit(h[:])
		return nil
	})
	return len(urls)
}
