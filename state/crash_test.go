package state

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// The crash test runs this test binary as a writer process that commits
// batches as fast as it can, kills it with SIGKILL at a random moment, and
// checks that every batch is in the state entirely or not at all.

const crashDirEnv = "DATABREW_STATE_CRASH_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashWriter(dir)
		return
	}
	os.Exit(m.Run())
}

const crashBatchURLs = 10

func crashURL(batch, j int) string { return fmt.Sprintf("http://h/b%d-%d", batch, j) }

// crashWriter commits batch after batch: batch i queues ten URLs, finishes
// the ten of batch i-1 and stores one item per finished URL.
func crashWriter(dir string) {
	db, err := Open(dir, Options{})
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
		for j := 0; j < crashBatchURLs; j++ {
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

func TestCrashLeavesWholeBatches(t *testing.T) {
	trials := 12
	if testing.Short() {
		trials = 3
	}
	for trial := 0; trial < trials; trial++ {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		lines := bufio.NewScanner(out)
		if !lines.Scan() { // wait for the first commit
			t.Fatalf("writer printed nothing")
		}
		acked := 1
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		_ = cmd.Process.Kill()
		for lines.Scan() {
			acked, _ = strconv.Atoi(lines.Text())
		}
		_ = cmd.Wait()
		t.Logf("trial %d: acked %d in %s", trial, acked, time.Since(t0))
		checkWholeBatches(t, dir, acked)
	}
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
	err = db.bolt.View(func(tx *bolt.Tx) error {
		items = count(tx.Bucket(bucketItems))
		seen = count(tx.Bucket(bucketSeen))
		return nil
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
	err = db.bolt.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("bbolt consistency check: %v", err)
	}
}
