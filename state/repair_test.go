package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
)

func TestCheckSaysWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir)
	h, err := Check(dir, Options{})
	if err != nil || len(h.Problems) != 0 || h.Records[string(bucketItems)] != damagedItems || h.Records[string(bucketVersions)] != damagedItems {
		t.Fatalf("sound file: %+v, %v", h, err)
	}
	garble(t, statePath(dir), leavesOf(t, statePath(dir), string(bucketVersions))[0])
	h, err = Check(dir, Options{})
	if err != nil || !strings.Contains(strings.Join(h.Problems, "\n"), "versions: page") ||
		!strings.Contains(strings.Join(h.Problems, "\n"), "point at a pending version the log does not hold") {
		t.Fatalf("garbled file: %q, %v", h.Problems, err)
	}
	truncateHalf(t, statePath(dir))
	h, err = Check(dir, Options{})
	if err != nil || !strings.Contains(h.Problems[0], "truncated") {
		t.Fatalf("truncated file: %q, %v", h.Problems, err)
	}
	h, err = Check(t.TempDir(), Options{MustExist: true})
	if err != nil || !h.Missing || len(h.Problems) != 1 {
		t.Fatalf("missing file: %+v, %v", h, err)
	}
}

// After a repair every item is either still pending, or exported again
// the next time it is fetched: stored again with the same values, every
// item has exactly one pending version. A publish in progress is kept.
func TestRepairKeepsEveryPendingItem(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir)
	db := open(t, dir)
	if err := db.BeginPublish(Publication{RunID: "r1", MaxSeq: 5}); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	// One leaf of versions and one of item records, apart: items whose
	// version was lost, whose record was lost, and both.
	path := statePath(dir)
	versions, items := leavesOf(t, path, string(bucketVersions)), leavesOf(t, path, firstItemRun)
	garble(t, path, versions[1], items[len(items)-2])
	damaged, _ := os.ReadFile(path)

	s, err := Repair(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if kept, _ := os.ReadFile(s.MovedTo); !bytes.Equal(kept, damaged) {
		t.Error("the damaged file was not kept aside")
	}
	if s.Unreadable[string(bucketVersions)] != 1 || s.Unreadable[string(bucketItems)] != 1 || s.Reexport == 0 || s.Rebuilt == 0 || s.LostPending == 0 {
		t.Errorf("salvage = %+v", s)
	}
	if h, err := Check(dir, Options{}); err != nil || len(h.Problems) != 0 {
		t.Fatalf("the repaired file: %q, %v", h.Problems, err)
	}
	db = open(t, dir)
	if pubs, err := db.Publishing(); err != nil || len(pubs) != 1 || pubs[0].RunID != "r1" {
		t.Errorf("publishes in progress = %+v, %v", pubs, err)
	}
	before, _ := db.PendingSummary()
	var again []crawl.ItemVersion
	for i := range damagedItems {
		again = append(again, version(fmt.Sprintf("k%03d", i), hash(i)))
	}
	store(t, db, again...)
	keys := db.pendingKeys(t)
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("item %s has two pending versions", k)
		}
		seen[k] = true
	}
	if len(seen) != damagedItems {
		t.Errorf("%d items pending after every item was fetched again, want %d", len(seen), damagedItems)
	}
	if p, _ := db.PendingSummary(); p.Count != len(keys) || before.Count >= len(keys) {
		t.Errorf("pending count %d before and %d after, the log holds %d", before.Count, p.Count, len(keys))
	}
}

func TestRepairLeavesASoundFileAndWaitsForNoRun(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir)
	s, err := Repair(dir, Options{})
	if err != nil || s.MovedTo != "" || len(s.Problems) != 0 {
		t.Fatalf("sound file: %+v, %v", s, err)
	}
	leaves := leavesOf(t, statePath(dir), firstItemRun)
	db := open(t, dir)
	garble(t, statePath(dir), leaves[0])
	if _, err := Repair(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Errorf("repair beside a run: %v, want ErrLocked", err)
	}
	_ = db.Close()
	if err := os.WriteFile(statePath(dir), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Repair(dir, Options{}); !errors.Is(err, ErrNoState) {
		t.Errorf("repair of an empty file: %v, want ErrNoState", err)
	}
}

// A version a publish in flight took, kept beside its item's newer one
// (a shard's attempt waiting for its run's commit), is no stray: repair
// keeps it for that publish.
func TestRepairKeepsAVersionStagedBesideANewerOne(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir)
	db := open(t, dir)
	p, _ := db.PendingSummary()
	if err := db.BeginPublish(Publication{RunID: "a", Logical: "r1", MaxSeq: p.MaxSeq}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Finish(0); err != nil {
		t.Fatal(err)
	}
	db.Begin(nil)
	for i := range 5 {
		store(t, db, version(fmt.Sprintf("k%03d", i), hash(1000+i)))
	}
	_ = db.Close()
	path := statePath(dir)
	versions := leavesOf(t, path, string(bucketVersions))
	garble(t, path, versions[len(versions)/2])

	if _, err := Repair(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	db = open(t, dir)
	count := map[string]int{}
	for _, k := range db.pendingKeys(t) {
		count[k]++
	}
	for i := range 5 {
		if k := fmt.Sprintf("k%03d", i); count[k] != 2 {
			t.Errorf("item %s has %d pending versions after the repair, want its staged one and its newer one", k, count[k])
		}
	}
}
