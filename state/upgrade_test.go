package state

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// unpackFormat7 writes testdata/format7.db.gz, a state the format 7 layout
// wrote (see writeUpgradeScenario), to a new storage folder.
func unpackFormat7(t *testing.T) string {
	t.Helper()
	in, err := os.Open(filepath.Join("testdata", "format7.db.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, err := os.Create(statePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// format7Memos are the memos the format 7 state held, by upgradeURLs.
func format7Memos(t *testing.T) []*crawl.PageMemo {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "format7-memos.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want []*crawl.PageMemo
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	return want
}

// checkUpgraded checks that db holds the scenario's state in format 8:
// every memo as the format 7 state held it, under the page number its
// seen mark carries, no pages bucket, the traversal's queue.
func checkUpgraded(t *testing.T, db *DB) {
	t.Helper()
	got, err := db.Memos(upgradeURLs())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range format7Memos(t) {
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("memo of %s = %+v, want %+v", upgradeURLs()[i], got[i], want)
		}
	}
	err = db.bolt.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketPagesV7) != nil {
			t.Error("the pages bucket is still there")
		}
		if getUint(tx.Bucket(bucketMeta), keyFormat) != formatVersion {
			t.Errorf("format %d, not %d", getUint(tx.Bucket(bucketMeta), keyFormat), formatVersion)
		}
		pages := map[uint64]string{}
		for _, u := range upgradeURLs() {
			m, _ := readSeen(tx.Bucket(bucketSeen), seenKey(u))
			if m.page == 0 || pages[m.page] != "" {
				t.Errorf("%s has page number %d (taken by %q)", u, m.page, pages[m.page])
			}
			pages[m.page] = u
		}
		if n := tx.Bucket(bucketMemos).Stats().KeyN; n != len(upgradeURLs()) {
			t.Errorf("%d memos, want %d", n, len(upgradeURLs()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if q, err := db.Read(0, 100); err != nil || len(q) != 4 {
		t.Errorf("queue = %v, %v; want the traversal's 4 entries", q, err)
	}
}

// TestFormat7StateUpgradesOnce: a state written by format 7 (the layout
// up to commit ada16ae) opens, its memos move to page numbers once, and the
// traversal it was in goes on as if nothing happened: the item pages it
// skipped keep their items through the traversal's end, which they would
// lose with their memos.
func TestFormat7StateUpgradesOnce(t *testing.T) {
	dir := unpackFormat7(t)
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := db.Origin().UpgradedFrom; got != 7 {
		t.Errorf("Origin().UpgradedFrom = %d, want 7", got)
	}
	checkUpgraded(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open(t, dir)
	if got := db.Origin().UpgradedFrom; got != 0 {
		t.Errorf("the second Open upgraded again, from %d", got)
	}
	checkUpgraded(t, db)

	// The rest of the second traversal: item 3 changed, 4 and 5 did not,
	// 1 and 2 were skipped.
	st, err := db.Begin([]crawl.Entry{{URL: upgradeListing(1), Kind: crawl.KindListing, Start: true}})
	if err != nil || st.NewTraversal || st.Traversal != 2 {
		t.Fatalf("begin = %+v, %v; want traversal 2 going on", st, err)
	}
	q, err := db.Read(0, 100)
	if err != nil {
		t.Fatal(err)
	}
	done := []crawl.Done{upgradeItemDone(q[0].Seq, 3, "12.50"), upgradeListingDone(q[1].Seq, 2, nil),
		upgradeItemDone(q[2].Seq, 4, "10.00"), upgradeItemDone(q[3].Seq, 5, "10.00")}
	counts, err := db.Commit(&crawl.Batch{Done: done, NextSeq: q[3].Seq + 1})
	if err != nil {
		t.Fatal(err)
	}
	if counts.Changed != 1 || counts.Unchanged != 2 {
		t.Errorf("commit counts %+v, want 1 changed and 2 unchanged", counts)
	}
	f, err := db.Finish(0)
	if err != nil || f.Queued != 0 {
		t.Fatalf("finish = %+v, %v; want the traversal complete", f, err)
	}
	if _, err := db.MarkRemoved(st.Traversal, "run-2", time.Now()); err != nil {
		t.Fatal(err)
	}
	var keys []string
	err = db.ForEachPending(^uint64(0), func(v Version) error {
		if v.Change != ChangeNew {
			t.Errorf("pending %s is %s", v.Key, v.Change)
		}
		keys = append(keys, v.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 5 {
		t.Errorf("pending versions of %v; want all 5 items, the skipped pages' too", keys)
	}
}

// TestUpgradeCutShortGoesOnAtTheNextOpen: memos move in transactions of
// their own; a file left with some moved and some not (a crash between
// two) has the rest moved by the next Open.
func TestUpgradeCutShortGoesOnAtTheNextOpen(t *testing.T) {
	dir := unpackFormat7(t)
	raw, err := bolt.Open(statePath(dir), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = raw.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucket(bucketMemos); err != nil {
			return err
		}
		if err := putUint(tx.Bucket(bucketMeta), keyFormat, formatVersion); err != nil {
			return err
		}
		done, err := moveMemoBatch(tx, 3)
		if done {
			t.Error("three memos moved, and the upgrade says it is done")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	db := open(t, dir)
	checkUpgraded(t, db)
}

// TestScenarioMemosMatchTheFormat7File: the scenario, run on today's
// layout, leaves the memos the format 7 file holds, so the fixture stands
// for what the scenario means.
func TestScenarioMemosMatchTheFormat7File(t *testing.T) {
	db := open(t, t.TempDir())
	writeUpgradeScenario(t, db)
	checkUpgraded(t, db)
}
