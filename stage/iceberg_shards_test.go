//go:build iceberg

package stage

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/publish"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/icebergtest"
	"github.com/databrew/databrew-stage/publish/iceberg"
	"github.com/databrew/databrew-stage/sink/sinktest"
	"github.com/databrew/databrew-stage/verdict"
)

// tableDataFiles lists the Parquet files under the table's data folder
// in the fixture's warehouse, as file:// URLs.
func tableDataFiles(t *testing.T, f *fixture) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	root := filepath.Join(f.dir, "warehouse")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") && strings.Contains(filepath.ToSlash(p), "/data/") {
			out["file://"+p] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestIceberg_ShardsCommitOneSnapshotPerLogicalRun runs logical runs of 4
// shards into an Iceberg table: the shards' data files stay out of the
// table until the commit, which adds every shard's in one snapshot
// carrying the logical run's id; a second commit adds nothing; a retried
// shard's first attempt is not committed and its files go at the shard's
// next run; a run given up by the next run's shards is never committed,
// its files go, and its items reach the table once with the next run. At
// the end the table's data folder holds only files its snapshots
// reference.
func TestIceberg_ShardsCommitOneSnapshotPerLogicalRun(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	cfg := icebergConfig(f)
	for i := range 4 {
		rep := runShard(t, cfg, "r1", i, 4)
		expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
		if !rep.Export.Staged || rep.Export.Published || !strings.HasPrefix(rep.Export.Path, "iceberg://shop.books") {
			t.Fatalf("shard %d: export %+v, want staged into the table", i, rep.Export)
		}
		if rows, runs := readIceberg(t, f); len(rows) != 0 || len(runs) != 0 {
			t.Fatalf("after shard %d, before the commit: %d rows, snapshots %v visible", i, len(rows), runs)
		}
	}
	if ctl, _ := filepath.Glob(filepath.Join(f.dir, "warehouse", "*", "*", iceberg.ControlFolder, "*")); len(ctl) == 0 {
		t.Fatalf("no control files under the table's %s folder", iceberg.ControlFolder)
	}
	referenced := map[string]bool{} // the data files the commits published
	rep, err := commitRun(t, cfg, "r1", 4)
	if err != nil || !rep.Export.Published || rep.Export.Rows != 60 || len(rep.Shards) != 4 {
		t.Fatalf("commit r1: %v, %+v", err, rep.Export)
	}
	for _, file := range rep.Export.Files {
		referenced[file] = true
	}
	rows, runs := readIceberg(t, f)
	if len(runs) != 1 || runs[0] != "r1" {
		t.Fatalf("snapshots %v, want one of r1", runs)
	}
	snaps := icebergtest.Read(t, filepath.Join(f.dir, "catalog.db"), "file://"+filepath.Join(f.dir, "warehouse"), "shop", "books").Snapshots
	if tb := rep.Export.Table; tb == nil || tb.Name != "shop.books" || len(snaps) != 1 || tb.SnapshotID != snaps[0] {
		t.Fatalf("the commit's verdict names table %+v; the table's snapshots are %v", tb, snaps)
	}
	expectIcebergVersionsOnce(t, f, rows, 60)
	if _, err := commitRun(t, cfg, "r1", 4); !errors.Is(err, ErrCommitted) {
		t.Fatalf("a second commit of r1: %v, want ErrCommitted", err)
	}
	if _, runs := readIceberg(t, f); len(runs) != 1 {
		t.Fatalf("a second commit added snapshots: %v", runs)
	}

	// r2: two prices change; the first shard that stages them runs twice
	// (an orchestrator retry).
	f.site.SetPrice(3, 11.5)
	f.site.SetPrice(40, 2.25)
	retried := map[string]bool{}
	for i := range 4 {
		rep := runShard(t, cfg, "r2", i, 4)
		if rep.Export.Staged && len(retried) == 0 {
			for _, file := range rep.Export.Files {
				retried[file] = true
			}
			runShard(t, cfg, "r2", i, 4)
		}
	}
	if len(retried) == 0 {
		t.Fatal("the retried shard's first attempt staged no file")
	}
	rep, err = commitRun(t, cfg, "r2", 4)
	if err != nil || rep.Export.Rows != 2 {
		t.Fatalf("commit r2: %v, %+v", err, rep.Export)
	}
	for _, file := range rep.Export.Files {
		referenced[file] = true
	}
	rows, runs = readIceberg(t, f)
	if len(runs) != 2 || runs[1] != "r2" {
		t.Fatalf("snapshots %v, want r1 then r2", runs)
	}
	expectIcebergVersionsOnce(t, f, rows, 62)

	// r3 is given up by r4's shards: its changed item goes into r4.
	f.site.SetPrice(5, 99.5)
	for i := range 4 {
		runShard(t, cfg, "r3", i, 4)
	}
	f.site.SetPrice(50, 1.5)
	for i := range 4 {
		runShard(t, cfg, "r4", i, 4)
	}
	if rep, err := commitRun(t, cfg, "r3", 4); !errors.Is(err, ErrAbandoned) || rep.Export.Published {
		t.Fatalf("late commit of r3: %v, %+v", err, rep.Export)
	}
	rep, err = commitRun(t, cfg, "r4", 4)
	if err != nil || rep.Export.Rows != 2 {
		t.Fatalf("commit r4: %v, %+v", err, rep.Export)
	}
	for _, file := range rep.Export.Files {
		referenced[file] = true
	}
	rows, runs = readIceberg(t, f)
	if len(runs) != 3 || runs[2] != "r4" {
		t.Fatalf("snapshots %v, want r1, r2, r4", runs)
	}
	expectIcebergVersionsOnce(t, f, rows, 64)

	// r5, nothing new: no snapshot; every shard has settled what it
	// staged, so the data folder holds only the referenced files.
	for i := range 4 {
		runShard(t, cfg, "r5", i, 4)
	}
	if rep, err := commitRun(t, cfg, "r5", 4); err != nil || rep.Export.Published {
		t.Fatalf("commit r5: %v, %+v", err, rep.Export)
	}
	if _, runs := readIceberg(t, f); len(runs) != 3 {
		t.Fatalf("a logical run with nothing new added a snapshot: %v", runs)
	}
	for file := range retried {
		if referenced[file] {
			t.Errorf("the retried shard's first attempt's file %s was committed", file)
		}
	}
	for file := range tableDataFiles(t, f) {
		if !referenced[file] {
			t.Errorf("data file %s is referenced by no snapshot", file)
		}
	}
}

// TestIceberg_AShardOrACommitCutAtAnyStepReachesTheTableOnce abandons a
// shard's attempt after each of its steps, and a commit after each of
// its steps, as a crash would; the shard, or the commit, runs again: the
// table holds every item once, in one snapshot of the logical run, and
// after the next logical run its data folder holds only files a snapshot
// references.
func TestIceberg_AShardOrACommitCutAtAnyStepReachesTheTableOnce(t *testing.T) {
	for _, step := range publish.AttemptSteps {
		t.Run("shard at "+string(step), func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 30})
			cfg := icebergConfig(f)
			rep, err := Run(t.Context(), cfg, Options{Shard: &Shard{Index: 0, Count: 2, RunID: "r1"}, AfterPublishStep: crashAt(step)})
			if !errors.Is(err, errCrash) {
				t.Fatalf("shard cut at %s: %v (%s)", step, err, rep.Summary())
			}
			for i := range 2 {
				runShard(t, cfg, "r1", i, 2)
			}
			if rep, err := commitRun(t, cfg, "r1", 2); err != nil || rep.Export.Rows != 30 {
				t.Fatalf("commit: %v, %+v", err, rep.Export)
			}
			expectShardRunsInTable(t, f, cfg, "r1")
		})
	}
	for _, step := range publish.CommitSteps {
		t.Run("commit at "+string(step), func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 30})
			cfg := icebergConfig(f)
			for i := range 2 {
				runShard(t, cfg, "r1", i, 2)
			}
			rep, err := Commit(t.Context(), cfg, "r1", 2, CommitOptions{AfterCommitStep: crashAt(step)})
			if !errors.Is(err, errCrash) {
				t.Fatalf("commit cut at %s: %v (%s)", step, err, rep.Summary())
			}
			rep, err = commitRun(t, cfg, "r1", 2)
			if step == publish.StepCompleted {
				if !errors.Is(err, ErrCommitted) {
					t.Fatalf("a commit after one cut once complete: %v, want ErrCommitted", err)
				}
			} else if err != nil || !rep.Export.Published || rep.Export.Rows != 30 {
				t.Fatalf("the commit again: %v, %+v", err, rep.Export)
			}
			expectShardRunsInTable(t, f, cfg, "r1")
		})
	}
}

// expectShardRunsInTable checks the table holds the fixture's 30 items
// once in one snapshot, of runID, then runs a logical run of 2 shards
// on the unchanged site, which adds nothing, and checks every data file
// left under the table's data folder is one a snapshot references.
func expectShardRunsInTable(t *testing.T, f *fixture, cfg config.Config, runID string) {
	t.Helper()
	rows, runs := readIceberg(t, f)
	if len(runs) != 1 || runs[0] != runID {
		t.Fatalf("snapshots of runs %v, want one of %s", runs, runID)
	}
	expectIcebergVersionsOnce(t, f, rows, 30)
	for i := range 2 {
		runShard(t, cfg, "next", i, 2)
	}
	if rep, err := commitRun(t, cfg, "next", 2); err != nil || rep.Export.Published {
		t.Fatalf("commit of the next run: %v, %+v", err, rep.Export)
	}
	files := tableDataFiles(t, f)
	var rowsInFiles int64
	for file := range files {
		rowsInFiles += int64(len(sinktest.ReadParquet(t, strings.TrimPrefix(file, "file://")).Rows))
	}
	if rowsInFiles != 30 {
		t.Errorf("the table's data folder holds %d files of %d rows; the table has 30: some no snapshot references", len(files), rowsInFiles)
	}
}
