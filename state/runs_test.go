package state

import (
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// runsUnit is what the runs tests fold at, for URLs and items alike.
const runsUnit = 10

// growRuns opens a state in dir whose recent parts fold at runsUnit, and
// commits n new URLs and n new items, in batches of runsUnit: many folds,
// and merges of their runs. It counts in *mergeParts the transactions
// after a merge's first.
func growRuns(t *testing.T, dir string, n int, budget int64, mergeParts *int) *DB {
	t.Helper()
	db, err := Open(dir, Options{WriteBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	db.recent.foldAt, db.recentItems.foldAt = runsUnit, runsUnit
	db.between = func(step string) {
		if step == stepMergePart {
			*mergeParts++
		}
	}
	st, err := db.Begin([]crawl.Entry{{URL: "http://h/list", Kind: crawl.KindListing, Start: true}})
	if err != nil {
		t.Fatal(err)
	}
	queueRecent(t, db, st.NextSeq, n, runsUnit)
	for from := 0; from < n; from += runsUnit {
		var vs []crawl.ItemVersion
		for i := from; i < min(from+runsUnit, n); i++ {
			vs = append(vs, version(runsItem(i), hash(i)))
		}
		store(t, db, vs...)
	}
	db.between = nil
	return db
}

// runsItem is item n of the runs tests.
func runsItem(n int) string { return fmt.Sprintf("item-%04d", n) }

// runKeys counts the keys each run of s holds, and checks that no key is
// in two runs.
func runKeys(t *testing.T, db *DB, s *runSet) (perRun []int) {
	t.Helper()
	seen := map[string]bool{}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		v := s.view(tx)
		for i := range v.runs {
			n := 0
			_ = v.bucket(i).ForEach(func(k, _ []byte) error {
				if seen[string(k)] {
					t.Errorf("%s: key %q is in two runs", s.container, k)
				}
				seen[string(k)] = true
				n++
				return nil
			})
			perRun = append(perRun, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return perRun
}

// checkRuns checks that the state holds n URLs and n items, each once,
// found where they are, in few runs (the URLs' with the listing page).
func checkRuns(t *testing.T, db *DB, n int) {
	t.Helper()
	pagesOf(t, db, n)
	if recs := storedRecords(t, db); len(recs) != n {
		t.Errorf("%d item records, want %d", len(recs), n)
	}
	for _, s := range []*runSet{db.urlRuns, db.itemRuns} {
		perRun := runKeys(t, db, s)
		total, largest := 0, 0
		for _, c := range perRun {
			total, largest = total+c, max(largest, c)
		}
		// At most mergeFanIn-1 runs of each size, and runs of 16 units
		// after two levels of merges.
		if len(perRun) > 3*(mergeFanIn-1)+1 || largest < 16*runsUnit {
			t.Errorf("%s: runs of %v keys; want a few, one of %d or more", s.container, perRun, 16*runsUnit)
		}
		if total > n+1 {
			t.Errorf("%s: %d keys in runs, more than the %d committed", s.container, total, n+1)
		}
	}
}

// TestRunsMergeAsTheyGrow: folds write runs, merges keep them few, and
// every URL and item is found once, before and after reopening.
func TestRunsMergeAsTheyGrow(t *testing.T) {
	dir := t.TempDir()
	const n = 700
	parts := 0
	db := growRuns(t, dir, n, 4*nodeBytes, &parts)
	checkRuns(t, db, n)
	// Appended in key order, the largest merges fill one node of bbolt's
	// each, which it splits only as it commits: the write budget counts
	// their bytes.
	if parts == 0 {
		t.Error("every merge ran in one transaction, beyond the write budget")
	}
	runs := len(db.itemRuns.runs)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, dir)
	defer db.Close()
	checkRuns(t, db, n)
	if len(db.itemRuns.runs) != runs {
		t.Errorf("%d runs of items after reopening, want %d", len(db.itemRuns.runs), runs)
	}
	// A record rewritten where it is, in a run.
	if c := store(t, db, version(runsItem(5), hash(99))); c.Changed != 1 {
		t.Errorf("commit counts %+v, want 1 changed", c)
	}
	if rec := storedRecords(t, db)[runsItem(5)]; rec.hash != recordHash(t, hash(99)) {
		t.Errorf("record of %s holds hash %x after the change", runsItem(5), rec.hash)
	}
}

// recordHash is the record hash of an item version's hash.
func recordHash(t *testing.T, h string) [16]byte {
	t.Helper()
	out, err := hashBytes(h)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAMergeCutShortIsUndoneAtOpen: a merge's new run, written in part
// when the process died, is deleted at the next Open; the runs it was
// merging still hold every key.
func TestAMergeCutShortIsUndoneAtOpen(t *testing.T) {
	dir := t.TempDir()
	const n = 300
	db := growRuns(t, dir, n, 4*nodeBytes, new(int))
	s := db.itemRuns
	id := s.nextID()
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		// The merge's first transactions: its run made and marked, with
		// some of the newest run's keys.
		out, err := tx.Bucket(s.container).CreateBucket(runName(id))
		if err != nil {
			return err
		}
		c := s.view(tx).bucket(len(s.runs) - 1).Cursor()
		k, v := c.First()
		for i := 0; i < 3 && k != nil; i++ {
			if err := out.Put(k, v); err != nil {
				return err
			}
			k, v = c.Next()
		}
		return putUint(tx.Bucket(bucketMeta), s.merging, id)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, dir)
	defer db.Close()
	err = db.bolt.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketItemRuns).Bucket(runName(id)) != nil || getUint(tx.Bucket(bucketMeta), db.itemRuns.merging) != 0 {
			t.Error("the run of the merge cut short is still there")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	runKeys(t, db, db.itemRuns)
	if recs := storedRecords(t, db); len(recs) != n {
		t.Errorf("%d item records, want %d", len(recs), n)
	}
}

// TestAMergeGivesWayToAWrite: a record rewritten where it is, in a run a
// merge is reading, between two of the merge's transactions, would be
// missing from the merged run; the merge gives up instead, and the next
// one, after the next fold, merges the record as rewritten.
func TestAMergeGivesWayToAWrite(t *testing.T) {
	dir := t.TempDir()
	// Three runs of one unit each: the next fold makes a fourth and
	// merges them, a key per transaction.
	db := growRuns(t, dir, 3*runsUnit, nodeBytes, new(int))
	defer db.Close()
	rewritten := false
	db.between = func(step string) {
		if step != stepMergePart || rewritten {
			return
		}
		rewritten = true
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			r := db.itemRecordsOf(tx)
			rec, _ := decodeItemRecord(r.Get([]byte(runsItem(0))))
			rec.hash = recordHash(t, hash(77))
			return r.Put([]byte(runsItem(0)), rec.encode())
		})
		if err != nil {
			t.Error(err)
		}
	}
	var vs []crawl.ItemVersion
	for i := 3 * runsUnit; i < 4*runsUnit; i++ {
		vs = append(vs, version(runsItem(i), hash(i)))
	}
	store(t, db, vs...)
	if !rewritten {
		t.Fatal("the merge ran in one transaction: no write in between")
	}
	if got := len(db.itemRuns.runs); got != mergeFanIn {
		t.Errorf("%d runs after the merge gave way, want %d", got, mergeFanIn)
	}
	db.between = nil
	vs = vs[:0]
	for i := 4 * runsUnit; i < 8*runsUnit; i++ {
		vs = append(vs, version(runsItem(i), hash(i)))
	}
	store(t, db, vs...)
	if got := len(db.itemRuns.runs); got >= mergeFanIn {
		t.Errorf("%d runs after the next folds, want fewer than %d", got, mergeFanIn)
	}
	if rec := storedRecords(t, db)[runsItem(0)]; rec.hash != recordHash(t, hash(77)) {
		t.Errorf("record of %s holds hash %x, not the one rewritten during the merge", runsItem(0), rec.hash)
	}
	runKeys(t, db, db.itemRuns)
}
