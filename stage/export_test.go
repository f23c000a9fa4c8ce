package stage

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/sink/sinktest"
	"github.com/databrew/databrew-stage/verdict"
)

// exported is one row of a published file, as an independent reader saw it.
type exported struct {
	key, change, runID, hash, url string
	title                         any
	price                         any
	values                        []any
}

// readRun reads every part file of a published run folder with arrow-go's
// readers (not the writer's library) and checks the folder is complete.
func readRun(t testing.TB, dir string) []exported {
	t.Helper()
	if !sink.IsComplete(dir) {
		t.Fatalf("%s has no _SUCCESS", dir)
	}
	var m sink.Manifest
	raw, err := os.ReadFile(filepath.Join(dir, sink.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var out []exported
	for _, f := range m.Files {
		read := sinktest.ReadParquet
		if m.Format == sink.FormatArrow {
			read = sinktest.ReadArrow
		}
		rb := read(t, filepath.Join(dir, f.Name))
		if int64(len(rb.Rows)) != f.Rows {
			t.Fatalf("%s: %d rows, manifest says %d", f.Name, len(rb.Rows), f.Rows)
		}
		if rb.Metadata["databrew.run_id"] != m.RunID || rb.Metadata["databrew.config"] != "books" {
			t.Fatalf("%s: metadata %v", f.Name, rb.Metadata)
		}
		idx := map[string]int{}
		for i, c := range rb.Columns {
			idx[c.Name] = i
		}
		for _, row := range rb.Rows {
			out = append(out, exported{
				key: row[idx["_key"]].(string), change: row[idx["_change"]].(string), runID: row[idx["_run_id"]].(string),
				hash: row[idx["_hash"]].(string), url: row[idx["_url"]].(string),
				title: row[idx["title"]], price: row[idx["price"]], values: row[:idx["_key"]],
			})
		}
	}
	if int64(len(out)) != m.Rows {
		t.Fatalf("%s: %d rows, manifest says %d", dir, len(out), m.Rows)
	}
	return out
}

func changes(rows []exported) map[string]int {
	out := map[string]int{}
	for _, r := range rows {
		out[r.change]++
	}
	return out
}

func TestDelta_OnlyNewAndChangedItemsAreExported(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	cfg := f.config(nil, "")
	rep := f.run(cfg, Options{})
	if !rep.Export.Published || rep.Export.Rows != 60 || len(rep.Export.Files) != 1 {
		t.Fatalf("first export: %+v", rep.Export)
	}
	first := readRun(t, rep.Export.Path)
	if got := changes(first); got["new"] != 60 {
		t.Fatalf("first export changes = %v", got)
	}
	byKey := map[string]catalogsite.Item{}
	for _, it := range f.site.Items() {
		byKey[it.UPC] = it
	}
	for _, r := range first {
		if it := byKey[r.key]; r.title != it.Title || r.price != it.Price || r.runID != rep.RunID || len(r.hash) != 32 {
			t.Fatalf("row %+v does not hold item %+v", r, it)
		}
	}

	// The site changes: 3 prices, 2 stock levels, 2 items removed, 4 added.
	for _, id := range []int{2, 5, 9} {
		it, _ := f.site.Item(id)
		f.site.SetPrice(id, it.Price+1)
	}
	f.site.SetStock(11, 99)
	f.site.SetStock(12, 98)
	f.site.Remove(20)
	f.site.Remove(21)
	added := f.site.Add(4)
	rep2 := f.run(cfg, Options{})
	second := readRun(t, rep2.Export.Path)
	if got := changes(second); got["changed"] != 5 || got["new"] != 4 || len(second) != 9 {
		t.Fatalf("second export = %v (%d rows), want 5 changed and 4 new", got, len(second))
	}
	if rep2.Items.New != 4 || rep2.Items.Changed != 5 || rep2.Items.Unchanged != 53 {
		t.Fatalf("second run items = %+v", rep2.Items)
	}
	newKeys := map[string]bool{}
	for _, id := range added {
		it, _ := f.site.Item(id)
		newKeys[it.UPC] = true
	}
	for _, r := range second {
		if r.change == "new" && !newKeys[r.key] {
			t.Fatalf("%s exported as new but it is not one of the added items", r.key)
		}
	}
	if !strings.Contains(rep2.Export.Path, "dt="+rep2.StartedAt.UTC().Format(time.DateOnly)+"/run="+rep2.RunID) {
		t.Fatalf("run folder %s", rep2.Export.Path)
	}

	// An unchanged site publishes nothing: no folder, no empty file.
	rep3 := f.run(cfg, Options{})
	if rep3.Export.Published || rep3.Export.Reason != reasonNothing || rep3.Export.Path != "" {
		t.Fatalf("third export = %+v", rep3.Export)
	}
	dirs, _ := filepath.Glob(filepath.Join(cfg.Output, "dt=*", "run=*"))
	if len(dirs) != 2 {
		t.Fatalf("run folders = %v, want exactly the two published ones", dirs)
	}
}

func TestWithhold_FailedAndPartialRunsPublishNothingAndLoseNothing(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 120})
	cfg := f.config(nil, "\n[export]\npublish_when = \"success\"\n")
	// Run 1 is cut short after storing items: a partial run, which
	// publish_when = "success" withholds.
	rep1 := f.run(cfg, Options{Middleware: stopAfter(40)})
	if rep1.Outcome != verdict.OutcomePartial || rep1.Export.Published || rep1.Export.Reason != reasonWithheld {
		t.Fatalf("run 1: %s, export %+v", rep1.Outcome, rep1.Export)
	}
	// Run 2 resumes while the site is down: it fails and publishes nothing.
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 503})
	rep2 := f.run(cfg, Options{})
	if rep2.Outcome != verdict.OutcomeFailed || rep2.Export.Published || rep2.Export.Reason != reasonFailed {
		t.Fatalf("run 2: %s (%s), export %+v", rep2.Outcome, rep2.Stop, rep2.Export)
	}
	var sidecar verdict.RunReport
	raw, err := os.ReadFile(filepath.Join(cfg.Output, sink.VerdictFile))
	if err != nil || json.Unmarshal(raw, &sidecar) != nil || sidecar.RunID != rep2.RunID || sidecar.Export.Reason != reasonFailed {
		t.Fatalf("_verdict.json must say why run 2 published nothing: %v %+v", err, sidecar)
	}
	if files, _ := filepath.Glob(filepath.Join(cfg.Output, "*", "*", "*.parquet")); len(files) != 0 {
		t.Fatalf("withheld and failed runs wrote %v", files)
	}
	// Run 3 succeeds and publishes everything the three runs stored, once.
	f.site.ClearFaults()
	rep3 := f.run(cfg, Options{})
	if rep3.Outcome != verdict.OutcomeSuccess || !rep3.Export.Published {
		t.Fatalf("run 3: %s, export %+v", rep3.Outcome, rep3.Export)
	}
	rows := readRun(t, rep3.Export.Path)
	keys := map[string]int{}
	for _, r := range rows {
		keys[r.key]++
	}
	if len(rows) != 120 || len(keys) != 120 || changes(rows)["new"] != 120 {
		t.Fatalf("run 3 exported %d rows for %d keys (%v), want each of the 120 items once", len(rows), len(keys), changes(rows))
	}
	runs := map[string]bool{}
	for _, r := range rows {
		runs[r.runID] = true
	}
	if !runs[rep1.RunID] || !runs[rep3.RunID] {
		t.Fatalf("rows must carry the run that fetched them: %v", runs)
	}
	// The run folder holds the same verdict as the export root.
	inRun, _ := os.ReadFile(filepath.Join(rep3.Export.Path, sink.VerdictFile))
	atRoot, _ := os.ReadFile(filepath.Join(cfg.Output, sink.VerdictFile))
	if string(inRun) != string(atRoot) || len(inRun) == 0 {
		t.Fatal("the run folder's _verdict.json must equal the export root's")
	}
}

func TestTombstones_RemovedItemsAfterACleanTraversalOnly(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 40})
	cfg := f.config(nil, "\n[export]\ntombstones = true\n")
	f.run(cfg, Options{})
	f.site.Remove(3)
	f.site.Remove(4)
	// A traversal cut short never removes anything.
	rep := f.run(cfg, Options{Middleware: stopAfter(10)})
	if rep.Stop != verdict.StopBlocked || rep.Items.Removed != 0 {
		t.Fatalf("incomplete run: %s, removed %d", rep.Stop, rep.Items.Removed)
	}
	rep = f.run(cfg, Options{}) // finishes that traversal cleanly
	if rep.Stop != verdict.StopQueueEmpty || rep.Items.Removed != 2 || !rep.Export.Published {
		t.Fatalf("clean traversal: %s, removed %d, export %+v", rep.Stop, rep.Items.Removed, rep.Export)
	}
	if !rep.Productive || rep.EmptyRunStreak != 0 {
		t.Fatalf("a run that removes items is productive: %v, streak %d", rep.Productive, rep.EmptyRunStreak)
	}
	rows := readRun(t, rep.Export.Path)
	if got := changes(rows); got["removed"] != 2 || len(rows) != 2 {
		t.Fatalf("tombstone export = %v", got)
	}
	for _, r := range rows {
		if r.title != nil || r.price != nil || r.hash != "" || r.url == "" {
			t.Fatalf("a removed row carries its key and URL and NULL fields: %+v", r)
		}
	}
	// Exported once: the next clean traversal publishes nothing.
	if rep = f.run(cfg, Options{}); rep.Export.Published || rep.Items.Removed != 0 {
		t.Fatalf("next run: removed %d, export %+v", rep.Items.Removed, rep.Export)
	}
	// An item that comes back is a change.
	f.site.Restore(3)
	rep = f.run(cfg, Options{})
	if rows := readRun(t, rep.Export.Path); len(rows) != 1 || rows[0].change != "changed" {
		t.Fatalf("restored item export = %+v", rows)
	}
}

func TestArrowExport(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	cfg := f.config(nil, "\n[export]\nformat = \"arrow\"\nmax_file_rows = 12\n")
	rep := f.run(cfg, Options{})
	if !rep.Export.Published || !slices.Equal(rep.Export.Files, []string{"part-00000.arrows", "part-00001.arrows", "part-00002.arrows"}) {
		t.Fatalf("export = %+v", rep.Export)
	}
	rows := readRun(t, rep.Export.Path)
	keys := make([]string, 0, len(rows))
	for _, r := range rows {
		keys = append(keys, r.key)
	}
	sort.Strings(keys)
	if len(slices.Compact(keys)) != 30 {
		t.Fatalf("arrow export holds %d distinct items", len(keys))
	}
}

// TestReadersSeeAllOfARunOrNothing has a reader walk <output>/**/*.parquet
// as fast as it can while runs publish several part files each: every time
// it sees a run folder, it sees all of that run's files.
func TestReadersSeeAllOfARunOrNothing(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 200})
	cfg := f.config(nil, "\n[export]\nmax_file_rows = 7\nrow_group_rows = 3\n")
	seen := map[string][]int{} // run folder -> part counts observed
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for last := false; !last; {
			// After the runs, one more walk that starts once they are over.
			select {
			case <-stop:
				last = true
			default:
			}
			counts := map[string]int{}
			_ = filepath.WalkDir(cfg.Output, func(path string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() && path != cfg.Output && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir // hidden, as pyarrow, Spark and Hive skip it
				}
				if err == nil && !d.IsDir() && strings.HasSuffix(path, ".parquet") {
					counts[filepath.Dir(path)]++
				}
				return nil
			})
			for dir, n := range counts {
				seen[dir] = append(seen[dir], n)
			}
		}
	}()
	for i := 0; i < 4; i++ {
		for id := 1 + i*10; id <= 30+i*10; id++ {
			if it, ok := f.site.Item(id); ok {
				f.site.SetPrice(id, it.Price+1)
			}
		}
		f.run(cfg, Options{})
	}
	close(stop)
	<-done
	if len(seen) != 4 {
		t.Fatalf("the reader saw %d run folders, want 4", len(seen))
	}
	for dir, observed := range seen {
		want := len(readManifest(t, dir).Files)
		for _, n := range observed {
			if n != want {
				t.Fatalf("a reader saw %d of %s's %d files", n, filepath.Base(dir), want)
			}
		}
	}
}

func readManifest(t testing.TB, dir string) sink.Manifest {
	t.Helper()
	var m sink.Manifest
	raw, err := os.ReadFile(filepath.Join(dir, sink.ManifestFile))
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTombstones_NotAfterATraversalWithAGapInAnEarlierRun(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 40})
	cfg := f.config(map[string]string{"retries": "0"}, "\n[export]\ntombstones = true\n")
	f.run(cfg, Options{})
	f.site.Remove(3)
	f.site.Remove(4)
	// Two item pages fail, and the run stops before its retry pass: they
	// are the traversal's gaps.
	from := int64(f.site.Requests()) + 4
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 500, From: from, To: from + 2,
		Match: func(_ int64, r *http.Request) bool { _, ok := itemID(r); return ok }})
	rep := f.run(cfg, Options{Middleware: stopAfter(15)})
	if rep.CoverageGaps == 0 || rep.Traversal.Gaps != rep.CoverageGaps {
		t.Fatalf("cut run: %d gaps, traversal %+v", rep.CoverageGaps, rep.Traversal)
	}
	f.site.ClearFaults()
	// The next run finishes the traversal without a gap of its own, but the
	// traversal had some: nothing is judged removed.
	rep = f.run(cfg, Options{})
	if rep.Stop != verdict.StopQueueEmpty || rep.CoverageGaps != 0 || rep.Traversal.Gaps == 0 || rep.Items.Removed != 0 {
		t.Fatalf("finishing run: %s, %d gaps, traversal %+v, removed %d", rep.Stop, rep.CoverageGaps, rep.Traversal, rep.Items.Removed)
	}
	// The next traversal is clean and removes them.
	rep = f.run(cfg, Options{})
	if !rep.Traversal.Started || rep.Traversal.Gaps != 0 || rep.Items.Removed != 2 {
		t.Fatalf("clean traversal: traversal %+v, removed %d", rep.Traversal, rep.Items.Removed)
	}
}
