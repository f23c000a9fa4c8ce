package state

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// upgradeFixtures are the states the scenario (see writeUpgradeScenario)
// left in older formats: format 7 (memos by URL hash, state at commit
// ada16ae), format 8 (seen marks in the URL hash's value, state at commit
// 7970828), format 9 (no recent part of the URL index, state at commit
// fc26118), format 10 (no runs: each fold into one tree, state at commit
// db40dfc, written with both recent parts folding at 2 entries, so that
// the trees, the runs' bases now, hold most of it) and format 11 (skips
// marked in the marks bucket, not in bitmaps; state at commit cac7be7),
// each the file testdata/format<N>.db.gz.
var upgradeFixtures = []int{7, 8, 9, 10, 11}

// unpackFixture writes testdata/format<format>.db.gz, a state the
// scenario left in that format, to a new storage folder.
func unpackFixture(t *testing.T, format int) string {
	t.Helper()
	in, err := os.Open(filepath.Join("testdata", fmt.Sprintf("format%d.db.gz", format)))
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

// format7Memos are the memos the scenario's states hold, by upgradeURLs
// (the format 8 state holds the same).
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

// checkUpgraded checks that db holds the scenario's state in the current
// format: every memo as the older state held it, under the page number
// the URL index gives, no pages bucket and no format 8 seen set, the
// traversal's marks (items 1 and 2 skipped, the others queued), the
// traversal's queue.
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
		if tx.Bucket(bucketSeenV8) != nil {
			t.Error("the format 8 seen set is still there")
		}
		if getUint(tx.Bucket(bucketMeta), keyFormat) != formatVersion {
			t.Errorf("format %d, not %d", getUint(tx.Bucket(bucketMeta), keyFormat), formatVersion)
		}
		pages := map[uint64]string{}
		seen := db.seenOf(tx)
		for _, u := range upgradeURLs() {
			m, _ := seen.get(seenKey(u))
			if m.page == 0 || pages[m.page] != "" {
				t.Errorf("%s has page number %d (taken by %q)", u, m.page, pages[m.page])
			}
			pages[m.page] = u
			want := seenMark{traversal: 2, page: m.page}
			if u == upgradeItem(1) || u == upgradeItem(2) {
				want.skipped = 2
			}
			if m != want {
				t.Errorf("seen mark of %s = %+v, want %+v", u, m, want)
			}
		}
		indexed := db.count(tx.Bucket(bucketURLs)) + db.count(tx.Bucket(bucketURLsRecent))
		if max(indexed, db.count(tx.Bucket(bucketMarks))) != len(upgradeURLs()) {
			t.Errorf("the seen set holds %d URLs and %d marks, want %d", indexed,
				db.count(tx.Bucket(bucketMarks)), len(upgradeURLs()))
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

// TestOlderStateUpgradesOnce: a state written by format 7 or 8 opens,
// its seen marks and memos move to page numbers once, and the traversal it
// was in goes on as if nothing happened: the item pages it skipped keep
// their items through the traversal's end, which they would lose with
// their memos or their skip marks.
func TestOlderStateUpgradesOnce(t *testing.T) {
	for _, format := range upgradeFixtures {
		t.Run(fmt.Sprintf("format%d", format), func(t *testing.T) { testUpgradesOnce(t, format) })
	}
}

func testUpgradesOnce(t *testing.T, format int) {
	dir := unpackFixture(t, format)
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := db.Origin().UpgradedFrom; got != format {
		t.Errorf("Origin().UpgradedFrom = %d, want %d", got, format)
	}
	if format == 10 {
		// The trees before the runs are their bases now, still read.
		err := db.bolt.View(func(tx *bolt.Tx) error {
			if urls, items := db.count(tx.Bucket(bucketURLs)), db.count(tx.Bucket(bucketItems)); urls < 4 || items < 4 {
				t.Errorf("the fixture's bases hold %d URLs and %d items, want 4 or more of each", urls, items)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
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

// TestUpgradeCutShortGoesOnAtTheNextOpen: seen marks, then memos, move in
// transactions of their own; a file left with some moved and some not (a
// crash between two) has the rest moved by the next Open.
func TestUpgradeCutShortGoesOnAtTheNextOpen(t *testing.T) {
	cases := []struct {
		format       int
		marks, memos int // moved before the crash; -1: all
	}{
		{format: 7, marks: 3},
		{format: 7, marks: -1, memos: 3},
		{format: 8, marks: 3},
		{format: 8, marks: 6},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("format%d-marks%d-memos%d", c.format, c.marks, c.memos), func(t *testing.T) {
			dir := unpackFixture(t, c.format)
			raw, err := bolt.Open(statePath(dir), 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = raw.Update(func(tx *bolt.Tx) error {
				for _, b := range [][]byte{bucketURLs, bucketURLsRecent, bucketMarks, bucketMemos} {
					if _, err := tx.CreateBucketIfNotExists(b); err != nil {
						return err
					}
				}
				if err := putUint(tx.Bucket(bucketMeta), keyFormat, formatVersion); err != nil {
					return err
				}
				// The moves as Open makes them; Open loads the recent part
				// of the URL index they write.
				db := &DB{recent: newRecentURLs(DefaultRecentURLs)}
				db.urlRuns = newRunSet(&db.recent.mu, bucketURLRuns, bucketURLs)
				if c.marks < 0 {
					for done := false; !done; {
						if done, err = db.moveSeenBatch(tx, 2); err != nil {
							return err
						}
					}
				} else if done, err := db.moveSeenBatch(tx, c.marks); err != nil || done {
					return fmt.Errorf("%d marks moved: done %v, %v", c.marks, done, err)
				}
				if c.memos > 0 {
					if done, err := db.moveMemoBatch(tx, c.memos); err != nil || done {
						return fmt.Errorf("%d memos moved: done %v, %v", c.memos, done, err)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := raw.Close(); err != nil {
				t.Fatal(err)
			}
			db := open(t, dir)
			checkUpgraded(t, db)
		})
	}
}

// TestScenarioMemosMatchTheFormat7File: the scenario, run on today's
// layout, leaves the memos the format 7 file holds, so the fixture stands
// for what the scenario means.
func TestScenarioMemosMatchTheFormat7File(t *testing.T) {
	db := open(t, t.TempDir())
	writeUpgradeScenario(t, db)
	checkUpgraded(t, db)
}
