//go:build iceberg

package main

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/testkit/icebergtest"
	"github.com/databrew/databrew-stage/stage"
)

// TestCrashLoopIceberg is the crash loop against an Iceberg table on a
// SQLite catalog with a local warehouse: each trial changes the site,
// kills a run at a publish step (each step in turn over the trials),
// kills the next at a random moment, then runs the binary until a
// traversal completes. After each trial every item version must be in the
// table once and the table must end at each item's current state (see
// checkExports). All the while a reader polls the table through a
// catalog connection of its own: no snapshot it sees may hold part of a
// run. At the end the table holds one snapshot per run, no row twice,
// and no data file its snapshot does not reference.
func TestCrashLoopIceberg(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	dir := t.TempDir()
	lk := newIcebergLake(dir)
	r := watchTable(lk, 10*time.Millisecond)
	defer r.close()
	res := crashLoop(t, bin, dir, lk, crashOptions{extra: lk.config(), kills: stepKills, killWithin: time.Second})
	r.close()
	r.check(t, lk, max(1, *crashTrials/5))
	checkTable(t, lk, res.published, res.saw)
	t.Logf("%d trials in %s", *crashTrials, time.Since(start).Round(time.Second))
}

// stepKills kills a trial's first run at a publish step, each step in
// turn over the trials, and its second at a random moment; the others
// complete.
func stepKills(_ *rand.Rand, trial, attempt int) string {
	switch attempt {
	case 0:
		steps := stage.PublishSteps
		return "killed at " + string(steps[(trial-1)%len(steps)])
	case 1:
		return "killed at random"
	default:
		return "completed"
	}
}

// icebergLake is an Iceberg table of a SQLite catalog with a file://
// warehouse, read with iceberg-go (icebergtest), not the stage's code.
type icebergLake struct {
	catalogPath, warehouse string
	namespace, name        string
}

// newIcebergLake is the table shop.books of a SQLite catalog and a local
// warehouse in dir.
func newIcebergLake(dir string) *icebergLake {
	return &icebergLake{catalogPath: filepath.Join(dir, "catalog.db"), warehouse: "file://" + filepath.Join(dir, "warehouse"),
		namespace: "shop", name: "books"}
}

func (l *icebergLake) output() string { return "iceberg://" + l.namespace + "." + l.name }
func (l *icebergLake) env() []string  { return nil }

// config is the config's [iceberg] table.
func (l *icebergLake) config() string {
	return fmt.Sprintf("\n[iceberg]\nuri = %q\nwarehouse = %q\n", "sqlite://"+l.catalogPath, l.warehouse)
}

// debris: a completed run leaves nothing in a table that a reader sees
// besides its snapshot; the data files no snapshot references are
// counted at the end (checkTable).
func (l *icebergLake) debris(*testing.T) string { return "" }

// rows scans the table's current snapshot. A row's _run_id is the run
// that saw the version (a run a crash cut short leaves its versions to
// the next run's snapshot), and run ids begin with the run's start time
// (UTC, to the millisecond): the loop's runs, one after the other, sort
// by it in the order they saw the site. A shard's rows carry its logical
// run's id, which the shards' loop makes sort in the order of its runs.
func (l *icebergLake) rows(t *testing.T) ([]publishedRow, error) {
	tbl := icebergtest.Read(t, l.catalogPath, l.warehouse, l.namespace, l.name)
	rows := make([]publishedRow, 0, len(tbl.Rows))
	for _, r := range tbl.Rows {
		run, _ := r["_run_id"].(string)
		key, _ := r["_key"].(string)
		change, _ := r["_change"].(string)
		if run == "" || key == "" || change == "" {
			return nil, fmt.Errorf("a row without its run, key or change: %v", r)
		}
		rows = append(rows, publishedRow{order: run, run: run, key: key, change: change, value: rowValue(change, r["title"], r["price"])})
	}
	return rows, nil
}

// load loads the table through c.
func (l *icebergLake) load(ctx context.Context, c *icebergtest.Catalog) (*icebergtest.View, error) {
	return c.Load(ctx, l.namespace, l.name)
}

// open connects to the table's catalog.
func (l *icebergLake) open() (*icebergtest.Catalog, error) {
	return icebergtest.OpenSQLite(l.catalogPath, l.warehouse)
}

// tableReader polls a table through a catalog connection of its own, as
// a query engine would, from before the table exists until close: each
// poll (one every given interval) loads the table and counts the current snapshot's rows per run.
// Each snapshot of the table's history that it has not read yet it reads
// too (by its id, as a time-travel query would), so a snapshot that a
// poll could have seen between two polls is judged as well.
type tableReader struct {
	lk         *icebergLake
	every      time.Duration
	stop, done chan struct{}
	closeOnce  sync.Once

	mu      sync.Mutex
	polls   int                            // polls that read a current snapshot
	current map[int64]icebergtest.Snapshot // the current snapshots the polls saw
	history map[int64]icebergtest.Snapshot // every snapshot of the history, read by id
	early   int                            // polls before the table had a snapshot (the goroutine's alone until done)
	errs    []string
}

// watchTable starts a reader of lk's table, polling it every interval.
func watchTable(lk *icebergLake, every time.Duration) *tableReader {
	r := &tableReader{lk: lk, every: every, stop: make(chan struct{}), done: make(chan struct{}),
		current: map[int64]icebergtest.Snapshot{}, history: map[int64]icebergtest.Snapshot{}}
	go r.run()
	return r
}

// close stops the reader (a poll under way is finished, not cut) and
// waits for it.
func (r *tableReader) close() {
	r.closeOnce.Do(func() { close(r.stop) })
	<-r.done
}

func (r *tableReader) run() {
	defer close(r.done)
	ctx := context.Background()
	var cat *icebergtest.Catalog
	defer func() {
		if cat != nil {
			_ = cat.Close()
		}
	}()
	seenTable := false
	for {
		select {
		case <-r.stop:
			return
		case <-time.After(r.every):
		}
		if cat == nil {
			// The reader connects once the first run created the catalog.
			if _, err := os.Stat(r.lk.catalogPath); err != nil {
				continue
			}
			var err error
			if cat, err = r.lk.open(); err != nil {
				r.fail("connect to the catalog: %v", err)
				return
			}
		}
		v, err := r.lk.load(ctx, cat)
		if err != nil && !seenTable {
			// The catalog's tables or the table are not there yet. The
			// reader connects again: a connection made while the writer
			// created the catalog's tables may have judged their layout
			// from a half-made catalog.
			r.early++
			_ = cat.Close()
			cat = nil
			continue
		}
		if err != nil {
			r.fail("load the table: %v", err)
			return
		}
		seenTable = true
		if v.CurrentID() == 0 {
			r.early++ // no snapshot yet: nothing to judge
			continue
		}
		snap, err := v.Read(ctx, v.CurrentID())
		if err != nil {
			r.fail("read the current snapshot: %v", err)
			return
		}
		r.mu.Lock()
		r.polls++
		if prev, ok := r.current[snap.ID]; ok && !maps.Equal(prev.RunRows, snap.RunRows) {
			r.errs = append(r.errs, fmt.Sprintf("snapshot %d read with rows per run %v, then %v", snap.ID, prev.RunRows, snap.RunRows))
		}
		r.current[snap.ID] = snap
		var unread []int64
		for _, s := range v.Snapshots() {
			if _, ok := r.history[s.ID]; !ok {
				unread = append(unread, s.ID)
			}
		}
		r.mu.Unlock()
		for _, id := range unread {
			old, err := v.Read(ctx, id)
			if err != nil {
				r.fail("read snapshot %d: %v", id, err)
				return
			}
			r.mu.Lock()
			r.history[id] = old
			r.mu.Unlock()
		}
	}
}

// fail records a failure.
func (r *tableReader) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// check proves that the reader never saw part of a run: in every
// snapshot it read, each run (_run_id) has as many rows as in the
// table's current snapshot now, and so does each logical run (the run id
// a snapshot's summary carries, whose rows carry the ids of the runs or
// shards that saw them: see logicalRuns). It fails when the polls saw
// fewer than minSnapshots distinct snapshots: the reader did not watch
// the loop. It returns the table's history, oldest first.
func (r *tableReader) check(t *testing.T, lk *icebergLake, minSnapshots int) []icebergtest.SnapshotInfo {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) > 0 {
		t.Fatalf("the reader: %s", strings.Join(r.errs[:min(len(r.errs), 5)], "; "))
	}
	t.Logf("the reader polled the table %d times (and %d times before it had a snapshot) and saw %d distinct current snapshots; it read %d snapshots of the history by id",
		r.polls, r.early, len(r.current), len(r.history))
	snaps, read := readHistory(t, lk)
	final := read[snaps[len(snaps)-1].ID]
	logical := logicalRuns(snaps, read)
	finalLogical := byLogicalRun(final.RunRows, logical)
	for _, seen := range []struct {
		how   string
		snaps map[int64]icebergtest.Snapshot
	}{{"polled", r.current}, {"read by id", r.history}} {
		for _, s := range seen.snaps {
			for run, n := range s.RunRows {
				if n != final.RunRows[run] {
					t.Errorf("the reader %s snapshot %d with %d rows of run %s; the table holds %d of it", seen.how, s.ID, n, run, final.RunRows[run])
				}
			}
			for run, n := range byLogicalRun(s.RunRows, logical) {
				if n != finalLogical[run] {
					t.Errorf("the reader %s snapshot %d with %d rows of logical run %q; the table holds %d of it", seen.how, s.ID, n, run, finalLogical[run])
				}
			}
		}
	}
	if len(r.current) < minSnapshots {
		t.Errorf("the reader's polls saw %d distinct snapshots, fewer than %d: it did not watch the loop", len(r.current), minSnapshots)
	}
	return snaps
}

// loadTable loads lk's table through a catalog connection of its own,
// which done closes.
func loadTable(t *testing.T, lk *icebergLake) (v *icebergtest.View, done func()) {
	t.Helper()
	cat, err := lk.open()
	if err != nil {
		t.Fatal(err)
	}
	v, err = lk.load(context.Background(), cat)
	if err != nil {
		cat.Close()
		t.Fatal(err)
	}
	return v, func() { cat.Close() }
}

// readHistory loads lk's table and reads every snapshot of its history,
// oldest first: its rows per run.
func readHistory(t *testing.T, lk *icebergLake) ([]icebergtest.SnapshotInfo, map[int64]icebergtest.Snapshot) {
	t.Helper()
	v, done := loadTable(t, lk)
	defer done()
	snaps := v.Snapshots()
	if len(snaps) == 0 || snaps[len(snaps)-1].ID != v.CurrentID() {
		t.Fatalf("the table's history %v does not end at its current snapshot %d", snaps, v.CurrentID())
	}
	read := map[int64]icebergtest.Snapshot{}
	for _, s := range snaps {
		var err error
		if read[s.ID], err = v.Read(context.Background(), s.ID); err != nil {
			t.Fatal(err)
		}
	}
	return snaps, read
}

// logicalRuns maps each run id the rows of the table carry (_run_id: the
// run, or the shard's run, that saw the version) to the run id that the
// summary of the first snapshot holding its rows carries: the logical
// run that committed them. snaps is the history, oldest first, read its
// snapshots.
func logicalRuns(snaps []icebergtest.SnapshotInfo, read map[int64]icebergtest.Snapshot) map[string]string {
	out := map[string]string{}
	for _, s := range snaps {
		for run := range read[s.ID].RunRows {
			if _, ok := out[run]; !ok {
				out[run] = s.RunID
			}
		}
	}
	return out
}

// byLogicalRun sums rows per run id into rows per logical run; a run
// id logical does not know counts as its own logical run.
func byLogicalRun(rows map[string]int, logical map[string]string) map[string]int {
	out := map[string]int{}
	for run, n := range rows {
		l, ok := logical[run]
		if !ok {
			l = "(not in the table) " + run
		}
		out[l] += n
	}
	return out
}

// checkTable checks the table after a loop: every snapshot carries the
// run id of a run, none twice, and every run a completed verdict says
// published has its snapshot; every item version a completed traversal
// saw (item -> "title|price") is in the table, and more than once only
// when the item was removed in between; no row is there twice; and every
// Parquet file under the table's data folder is referenced by the
// current snapshot (an orphan is a file a crash left that no snapshot
// references).
func checkTable(t *testing.T, lk *icebergLake, published []string, saw map[string]map[string]bool) {
	t.Helper()
	v, done := loadTable(t, lk)
	defer done()
	snaps := v.Snapshots()
	runs := map[string]bool{}
	for _, s := range snaps {
		if s.RunID == "" || runs[s.RunID] {
			t.Errorf("snapshot %d (%s) carries run id %q, empty or carried by another snapshot", s.ID, s.Operation, s.RunID)
		}
		runs[s.RunID] = true
	}
	for _, id := range published {
		if !runs[id] {
			t.Errorf("run %s published, says its verdict; no snapshot carries it", id)
		}
	}
	rows, err := lk.rows(t)
	if err != nil {
		t.Fatal(err)
	}
	count, removals := map[string]int{}, map[string]int{}
	for _, r := range rows {
		count[r.key+" "+r.value+" in run "+r.run]++
		if r.change == "removed" {
			removals[r.key]++
		} else {
			count[r.key+" "+r.value]++
		}
	}
	for k, n := range count {
		if strings.Contains(k, " in run ") && n > 1 {
			t.Errorf("row %s is in the table %d times", k, n)
		}
	}
	versions := 0
	for key, vals := range saw {
		for val := range vals {
			versions++
			if n := count[key+" "+val]; n == 0 || n > 1+removals[key] {
				t.Errorf("item %s version %q, which a completed run saw, is in the table %d times (%d removals)", key, val, n, removals[key])
			}
		}
	}
	ctx := context.Background()
	files, err := v.DataFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	orphans, err := v.Orphans(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the table: %d snapshots, %d rows, %d item versions the completed traversals saw, %d data files, %d orphans",
		len(snaps), len(rows), versions, len(files), len(orphans))
	if len(orphans) > 0 {
		slices.Sort(orphans)
		t.Errorf("%d data files under the table's data folder are referenced by no snapshot (orphans), besides its %d referenced ones; first %s",
			len(orphans), len(files), orphans[0])
	}
}
