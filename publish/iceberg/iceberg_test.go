package iceberg

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/internal/testkit/icebergtest"
	"github.com/databrew/databrew-stage/internal/testkit/pgtest"
	"github.com/databrew/databrew-stage/sink"
)

// testSchema returns the export schema of userColumns and extra.
func testSchema(extra ...sink.Column) sink.Schema {
	return sink.NewSchema(append(slices.Clone(userColumns), extra...))
}

// testOptions returns the options of table shop.books in a SQLite catalog
// and a file warehouse under dir.
func testOptions(dir string) Options {
	return Options{
		URI:       "sqlite://" + filepath.Join(dir, "catalog.db"),
		Warehouse: "file://" + filepath.Join(dir, "warehouse"),
		Namespace: "shop",
		Table:     "books",
		Config:    "books.toml",
		Getenv:    func(string) string { return "" },
	}
}

// forEachCatalog runs test on a new table in a SQLite catalog, and in a
// PostgreSQL catalog in a database of its own on the server the
// package's tests share (see pgtest: it skips where none is installed).
func forEachCatalog(t *testing.T, test func(t *testing.T, o Options)) {
	t.Run("sqlite", func(t *testing.T) { test(t, testOptions(t.TempDir())) })
	t.Run("postgres", func(t *testing.T) {
		srv := pgtest.Shared(t)
		o := testOptions(t.TempDir())
		o.URI, o.Getenv = srv.URI, srv.Getenv
		test(t, o)
	})
}

func open(t *testing.T, o Options, s sink.Schema) *Table {
	t.Helper()
	tbl, err := Open(context.Background(), o, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tbl.Close(); err != nil {
			t.Error(err)
		}
	})
	return tbl
}

func publish(t *testing.T, tbl *Table, runID string, rows []sink.Row) int64 {
	t.Helper()
	ctx := context.Background()
	p, err := tbl.Stage(ctx, runID, yieldAll(rows))
	if err != nil {
		t.Fatal(err)
	}
	id, err := p.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// reader loads the table through its own database handle and catalog, as
// a reader that shares no code path with the writer would.
func reader(t *testing.T, o Options) *table.Table {
	t.Helper()
	if !strings.HasPrefix(o.URI, "sqlite:") {
		cat, closeCat, err := openCatalog(context.Background(), &o)
		if err != nil {
			t.Fatal(err)
		}
		defer closeCat()
		tbl, err := cat.LoadTable(context.Background(), table.Identifier{o.Namespace, o.Table})
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	u, err := url.Parse(o.URI)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+u.Path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	props := icebergtest.WarehouseProps(o.Warehouse)
	props["init_catalog_tables"] = "false"
	cat, err := sqlcat.NewCatalog("databrew", db, sqlcat.SQLite, props)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{o.Namespace, o.Table})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// readRows scans the table's current snapshot and returns its rows by
// _key, each a map from column name to value (nil for NULL, []any for a
// list, time.Time in UTC for a timestamp). A key seen twice fails the test.
func readRows(t *testing.T, o Options) map[string]map[string]any {
	t.Helper()
	at, err := reader(t, o).Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	out := map[string]map[string]any{}
	tr := array.NewTableReader(at, 1000)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			row := map[string]any{}
			for c, f := range rec.Schema().Fields() {
				row[f.Name] = arrowValue(rec.Column(c), i)
			}
			key := row[ColumnKey].(string)
			if _, dup := out[key]; dup {
				t.Errorf("key %s read twice", key)
			}
			out[key] = row
		}
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantRow is what reading r back must give.
func wantRow(s sink.Schema, r sink.Row) map[string]any {
	out := map[string]any{
		ColumnKey:    r.Key,
		ColumnChange: r.Change,
		ColumnURL:    r.URL,
		ColumnRunID:  r.RunID,
		ColumnSeenAt: time.UnixMicro(r.FetchedAt.UnixMicro()).UTC(),
	}
	for i, c := range s.User() {
		var v any
		switch x := r.Values[i].(type) {
		case []string:
			l := []any{}
			for _, e := range x {
				l = append(l, e)
			}
			v = l
		case time.Time:
			v = time.UnixMicro(x.UnixMicro()).UTC()
		default:
			v = x
		}
		out[c.Name] = v
	}
	return out
}

func checkRows(t *testing.T, got map[string]map[string]any, s sink.Schema, want ...[]sink.Row) {
	t.Helper()
	n := 0
	for _, rows := range want {
		for _, r := range rows {
			n++
			g, ok := got[r.Key]
			if !ok {
				t.Errorf("row %s missing", r.Key)
				continue
			}
			if w := wantRow(s, r); !reflect.DeepEqual(g, w) {
				t.Errorf("row %s:\n got  %v\n want %v", r.Key, g, w)
			}
		}
	}
	if len(got) != n {
		t.Errorf("read %d rows, want %d", len(got), n)
	}
}

func snapshots(t *testing.T, o Options) []table.Snapshot {
	t.Helper()
	return reader(t, o).Metadata().Snapshots()
}

func TestCreateStageCommit(t *testing.T) {
	forEachCatalog(t, func(t *testing.T, o Options) {
		ctx := context.Background()
		s := testSchema()
		tbl := open(t, o, s)

		if want := "iceberg:" + o.URI + "#" + o.Namespace + ".books"; tbl.ID() != want {
			t.Errorf("ID = %q, want %q", tbl.ID(), want)
		}
		if want := "iceberg://" + o.Namespace + ".books (" + o.URI + ")"; tbl.Where() != want {
			t.Errorf("Where = %q, want %q", tbl.Where(), want)
		}

		// The new table: the config's fields, then the stage's columns.
		meta := reader(t, o).Metadata()
		var names, types []string
		for _, f := range meta.CurrentSchema().Fields() {
			names = append(names, f.Name)
			types = append(types, fmt.Sprintf("%s %v", f.Type, f.Required))
		}
		wantNames := []string{"title", "price", "pages", "in_stock", "published", "tags", "_key", "_change", "_url", "_run_id", "_seen_at"}
		wantTypes := []string{"string false", "double false", "long false", "boolean false", "timestamptz false", "list<string> false",
			"string true", "string true", "string true", "string true", "timestamptz true"}
		if !slices.Equal(names, wantNames) || !slices.Equal(types, wantTypes) {
			t.Errorf("columns %v %v, want %v %v", names, types, wantNames, wantTypes)
		}
		spec := meta.PartitionSpec()
		if spec.NumFields() != 1 || spec.Field(0).Name != PartitionField || spec.Field(0).Transform.String() != "day" {
			t.Errorf("partition spec %v, want day(_seen_at) as %s", spec, PartitionField)
		}
		if len(meta.Snapshots()) != 0 {
			t.Fatalf("a new table has %d snapshots", len(meta.Snapshots()))
		}

		rows1 := makeRows("run-1", "a", 7)
		p, err := tbl.Stage(ctx, "run-1", yieldAll(rows1))
		if err != nil {
			t.Fatal(err)
		}
		// Staged files exist but no snapshot references them yet.
		files := p.Files()
		if len(files) < 2 {
			t.Errorf("rows over two days wrote %d files, want one per day: %v", len(files), files)
		}
		for _, f := range files {
			if !strings.Contains(f, "/data/"+PartitionField+"=") {
				t.Errorf("data file %s is not in a partition folder", f)
			}
			if _, err := os.Stat(strings.TrimPrefix(f, "file://")); err != nil {
				t.Error(err)
			}
		}
		if n := len(snapshots(t, o)); n != 0 {
			t.Fatalf("Stage made %d snapshots", n)
		}
		if _, found, err := tbl.FindRun(ctx, "run-1"); err != nil || found {
			t.Fatalf("FindRun before Commit = %v, %v", found, err)
		}

		id1, err := p.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		snaps := snapshots(t, o)
		if len(snaps) != 1 {
			t.Fatalf("%d snapshots after one commit", len(snaps))
		}
		sum := snaps[0].Summary
		if snaps[0].SnapshotID != id1 || sum.Operation != table.OpAppend || sum.Properties[PropRunID] != "run-1" || sum.Properties[PropConfig] != "books.toml" {
			t.Errorf("snapshot %d %s %v, want %d append with run-1 and the config", snaps[0].SnapshotID, sum.Operation, sum.Properties, id1)
		}
		if got, found, err := tbl.FindRun(ctx, "run-1"); err != nil || !found || got != id1 {
			t.Errorf("FindRun(run-1) = %d, %v, %v, want %d", got, found, err, id1)
		}
		if again, err := p.Commit(ctx); err != nil || again != id1 {
			t.Errorf("second Commit = %d, %v, want %d", again, err, id1)
		}
		checkRows(t, readRows(t, o), s, rows1)

		rows2 := makeRows("run-2", "b", 5)
		id2 := publish(t, tbl, "run-2", rows2)
		snaps = snapshots(t, o)
		if len(snaps) != 2 || snaps[1].SnapshotID != id2 || snaps[1].Summary.Properties[PropRunID] != "run-2" {
			t.Fatalf("after a second run: snapshots %v, want a second one %d for run-2", snaps, id2)
		}
		for _, run := range []string{"run-1", "run-2"} {
			if _, found, err := tbl.FindRun(ctx, run); err != nil || !found {
				t.Errorf("FindRun(%s) = %v, %v", run, found, err)
			}
		}
		if _, found, err := tbl.FindRun(ctx, "run-3"); err != nil || found {
			t.Errorf("FindRun(run-3) = %v, %v", found, err)
		}
		checkRows(t, readRows(t, o), s, rows1, rows2)

		// Reopening an existing table with the same fields changes nothing.
		before := reader(t, o).MetadataLocation()
		open(t, o, s)
		if after := reader(t, o).MetadataLocation(); after != before {
			t.Errorf("reopening with the same fields moved the metadata from %s to %s", before, after)
		}
	})
}

func TestStageWithoutRows(t *testing.T) {
	ctx := context.Background()
	o := testOptions(t.TempDir())
	tbl := open(t, o, testSchema())
	p, err := tbl.Stage(ctx, "run-empty", yieldAll(nil))
	if err != nil {
		t.Fatal(err)
	}
	if id, err := p.Commit(ctx); err != nil || id != 0 {
		t.Errorf("Commit of no rows = %d, %v, want 0", id, err)
	}
	if n := len(snapshots(t, o)); n != 0 {
		t.Errorf("a run without rows made %d snapshots", n)
	}
}

func TestManyBatches(t *testing.T) {
	o := testOptions(t.TempDir())
	s := testSchema()
	tbl := open(t, o, s)
	rows := makeRows("run-1", "k", 2*batchRows+123)
	publish(t, tbl, "run-1", rows)
	checkRows(t, readRows(t, o), s, rows)
}

func TestStageErrors(t *testing.T) {
	ctx := context.Background()
	o := testOptions(t.TempDir())
	tbl := open(t, o, testSchema())
	boom := fmt.Errorf("boom")
	_, err := tbl.Stage(ctx, "run-1", func(yield func(sink.Row) error) error {
		if err := yield(makeRows("run-1", "a", 1)[0]); err != nil {
			return err
		}
		return boom
	})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Stage with a failing rows = %v, want boom", err)
	}
	bad := makeRows("run-1", "a", 1)
	bad[0].Values[2] = "not a number"
	if _, err := tbl.Stage(ctx, "run-1", yieldAll(bad)); err == nil || !strings.Contains(err.Error(), "pages") {
		t.Errorf("Stage of a string in an int64 column = %v, want an error naming pages", err)
	}
	short := makeRows("run-1", "a", 1)
	short[0].Values = short[0].Values[:2]
	if _, err := tbl.Stage(ctx, "run-1", yieldAll(short)); err == nil {
		t.Error("Stage of a row with too few values succeeded")
	}
	if n := len(snapshots(t, o)); n != 0 {
		t.Errorf("failed stages made %d snapshots", n)
	}
}

func TestSchemaEvolution(t *testing.T) {
	forEachCatalog(t, func(t *testing.T, o Options) {
		s1 := testSchema()
		tbl1 := open(t, o, s1)
		rows1 := makeRows("run-1", "a", 4)
		publish(t, tbl1, "run-1", rows1)

		isbn := sink.Column{Name: "isbn", Type: extract.TypeString}
		authors := sink.Column{Name: "authors", Type: extract.TypeString, List: true}
		s2 := testSchema(isbn, authors)
		tbl2 := open(t, o, s2)

		meta := reader(t, o).Metadata()
		var names []string
		for _, f := range meta.CurrentSchema().Fields() {
			names = append(names, f.Name)
		}
		want := []string{"title", "price", "pages", "in_stock", "published", "tags", "isbn", "authors", "_key", "_change", "_url", "_run_id", "_seen_at"}
		if !slices.Equal(names, want) {
			t.Errorf("columns after evolution %v, want %v", names, want)
		}
		if n := len(meta.Snapshots()); n != 1 {
			t.Errorf("adding columns made a snapshot: %d snapshots", n)
		}

		rows2 := makeRows("run-2", "b", 4, "978-3", []string{"Ann", "Bo"})
		publish(t, tbl2, "run-2", rows2)
		got := readRows(t, o)
		// The old rows read NULL in the new columns.
		for i := range rows1 {
			rows1[i].Values = append(rows1[i].Values, nil, nil)
		}
		checkRows(t, got, s2, rows1, rows2)
	})
}

// TestConcurrentOpen opens the table from several writers at once: on a
// new catalog (all create the namespace and the table), then with a new
// field (all add the column).
func TestConcurrentOpen(t *testing.T) {
	forEachCatalog(t, func(t *testing.T, o Options) {
		const writers = 4
		openAll := func(s sink.Schema) {
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					tbl, err := Open(context.Background(), o, s)
					if err != nil {
						t.Error(err)
						return
					}
					tbl.Close()
				})
			}
			wg.Wait()
		}
		openAll(testSchema())
		isbn := sink.Column{Name: "isbn", Type: extract.TypeString}
		openAll(testSchema(isbn))
		var names []string
		for _, f := range reader(t, o).Schema().Fields() {
			names = append(names, f.Name)
		}
		want := []string{"title", "price", "pages", "in_stock", "published", "tags", "isbn", "_key", "_change", "_url", "_run_id", "_seen_at"}
		if !slices.Equal(names, want) {
			t.Errorf("columns %v, want %v", names, want)
		}
	})
}

func TestSchemaRefusals(t *testing.T) {
	forEachCatalog(t, func(t *testing.T, o Options) {
		open(t, o, testSchema())
		before := reader(t, o).MetadataLocation()

		retyped := slices.Clone(userColumns)
		retyped[1].Type = extract.TypeString // price: float64 -> string
		listed := slices.Clone(userColumns)
		listed[0].List = true // title: string -> list<string>
		elements := slices.Clone(userColumns)
		elements[5].Type = extract.TypeInt64 // tags: list<string> -> list<int64>
		unlisted := slices.Clone(userColumns)
		unlisted[5].List = false // tags: list<string> -> string
		cases := []struct {
			name string
			user []sink.Column
			want []string
		}{
			{"retyped", retyped, []string{"the table books has column price as double, the config says string", "change the field back or publish into a new table"}},
			{"made a list", listed, []string{"column title as string, the config says list<string>"}},
			{"list retyped", elements, []string{"column tags as list<string>, the config says list<int64>"}},
			{"list made scalar", unlisted, []string{"column tags as list<string>, the config says string"}},
			{"removed", userColumns[1:], []string{"the table books has column title, the config has no field title", "add the field back or publish into a new table"}},
			{"stage column name", append(slices.Clone(userColumns), sink.Column{Name: "_seen_at", Type: extract.TypeTimestamp}), []string{"field _seen_at has the name of a column of the stage"}},
			{"system column name", append(slices.Clone(userColumns), sink.Column{Name: "_url", Type: extract.TypeString}), []string{`schema has two columns named "_url"`}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				tbl, err := Open(context.Background(), o, sink.NewSchema(c.user))
				if err == nil {
					tbl.Close()
					t.Fatal("Open succeeded")
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if !strings.Contains(err.Error(), "iceberg://"+o.Namespace+".books") {
					t.Errorf("error %q does not name the table", err)
				}
			})
		}
		if after := reader(t, o).MetadataLocation(); after != before {
			t.Error("a refused Open changed the table")
		}
	})
}

func TestConflictingCommits(t *testing.T) {
	forEachCatalog(t, conflictingCommits)
}

// conflictingCommits: two writers stage on the same table state; the
// second to commit meets a conflict and commits its files again on the
// first's snapshot.
func conflictingCommits(t *testing.T, o Options) {
	ctx := context.Background()
	s := testSchema()
	a, b := open(t, o, s), open(t, o, s)
	rowsA, rowsB := makeRows("run-a", "a", 6), makeRows("run-b", "b", 6)
	pa, err := a.Stage(ctx, "run-a", yieldAll(rowsA))
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b.Stage(ctx, "run-b", yieldAll(rowsB))
	if err != nil {
		t.Fatal(err)
	}
	ida, err := pa.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// b staged on the table before a's commit: its first commit conflicts.
	idb, err := pb.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pa.conflicts != 0 || pb.conflicts == 0 {
		t.Errorf("conflicts: a %d, b %d; want 0 and at least 1", pa.conflicts, pb.conflicts)
	}
	snaps := snapshots(t, o)
	if len(snaps) != 2 || snaps[0].SnapshotID != ida || snaps[1].SnapshotID != idb || *snaps[1].ParentSnapshotID != ida {
		t.Errorf("snapshots %v, want %d then %d on it", snaps, ida, idb)
	}
	checkRows(t, readRows(t, o), s, rowsA, rowsB)
}

// TestCommitFindsItsRun commits the same run twice, staged by two writers
// (two configs) of one run id: the second Commit meets the first's
// snapshot and adds nothing.
func TestCommitFindsItsRun(t *testing.T) {
	forEachCatalog(t, func(t *testing.T, o Options) {
		ctx := context.Background()
		s := testSchema()
		tbl := open(t, o, s)
		other := o
		other.Config = "another"
		tbl2 := open(t, other, s)
		rows := makeRows("run-1", "a", 5)
		p1, err := tbl.Stage(ctx, "run-1", yieldAll(rows))
		if err != nil {
			t.Fatal(err)
		}
		p2, err := tbl2.Stage(ctx, "run-1", yieldAll(rows))
		if err != nil {
			t.Fatal(err)
		}
		id1, err := p1.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		id2, err := p2.Commit(ctx)
		if err != nil || id2 != id1 {
			t.Errorf("second Commit of run-1 = %d, %v, want the first's snapshot %d", id2, err, id1)
		}
		if n := len(snapshots(t, o)); n != 1 {
			t.Errorf("%d snapshots, want 1", n)
		}
		checkRows(t, readRows(t, o), s, rows)
		// The second staging's files are orphans.
		n, err := tbl.RemoveOrphans(ctx, 0)
		if err != nil || n != len(p2.Files()) {
			t.Errorf("RemoveOrphans = %d, %v, want the %d files of the second staging", n, err, len(p2.Files()))
		}
		checkRows(t, readRows(t, o), s, rows)
	})
}

func TestConcurrentWriters(t *testing.T) {
	forEachCatalog(t, func(t *testing.T, o Options) {
		ctx := context.Background()
		s := testSchema()
		open(t, o, s) // create the table once, as the first run does
		const writers = 4
		var (
			staged    sync.WaitGroup // every writer staged on the same table state
			wg        sync.WaitGroup
			mu        sync.Mutex
			conflicts int
			all       [][]sink.Row
		)
		staged.Add(writers)
		for w := range writers {
			tbl := open(t, o, s)
			run := fmt.Sprintf("run-%d", w)
			rows := makeRows(run, run, 50)
			all = append(all, rows)
			wg.Go(func() {
				p, err := tbl.Stage(ctx, run, yieldAll(rows))
				staged.Done()
				if err != nil {
					t.Error(err)
					return
				}
				staged.Wait()
				if _, err := p.Commit(ctx); err != nil {
					t.Error(err)
				}
				mu.Lock()
				conflicts += p.conflicts
				mu.Unlock()
			})
		}
		wg.Wait()
		snaps := snapshots(t, o)
		var runs []string
		for _, sn := range snaps {
			runs = append(runs, sn.Summary.Properties[PropRunID])
		}
		sort.Strings(runs)
		if !slices.Equal(runs, []string{"run-0", "run-1", "run-2", "run-3"}) {
			t.Errorf("snapshots of runs %v, want one per writer", runs)
		}
		checkRows(t, readRows(t, o), s, all...)
		// All staged on one state: every writer but the first to commit
		// met at least one conflict.
		if conflicts < writers-1 {
			t.Errorf("%d writers met %d conflicts, want at least %d", writers, conflicts, writers-1)
		}
	})
}

func TestRemoveOrphans(t *testing.T) {
	forEachCatalog(t, func(t *testing.T, o Options) {
		ctx := context.Background()
		s := testSchema()
		tbl := open(t, o, s)
		rows1 := makeRows("run-1", "a", 6)
		publish(t, tbl, "run-1", rows1)

		p, err := tbl.Stage(ctx, "run-2", yieldAll(makeRows("run-2", "b", 6)))
		if err != nil {
			t.Fatal(err)
		}
		orphans := p.Files()
		if n, err := tbl.RemoveOrphans(ctx, time.Hour); err != nil || n != 0 {
			t.Errorf("RemoveOrphans(1h) = %d, %v, want no file younger than an hour removed", n, err)
		}
		for _, f := range orphans {
			if _, err := os.Stat(strings.TrimPrefix(f, "file://")); err != nil {
				t.Error(err)
			}
		}
		n, err := tbl.RemoveOrphans(ctx, 0)
		if err != nil || n != len(orphans) {
			t.Errorf("RemoveOrphans(0) = %d, %v, want %d", n, err, len(orphans))
		}
		for _, f := range orphans {
			if _, err := os.Stat(strings.TrimPrefix(f, "file://")); !os.IsNotExist(err) {
				t.Errorf("orphan %s still there: %v", f, err)
			}
		}
		// No snapshot referenced them: the table reads whole.
		ref := referencedFiles(t, o)
		for _, f := range orphans {
			if ref[f] {
				t.Errorf("removed file %s is referenced", f)
			}
		}
		if len(ref) == 0 {
			t.Error("no referenced data files")
		}
		for f := range ref {
			if _, err := os.Stat(strings.TrimPrefix(f, "file://")); err != nil {
				t.Errorf("referenced file: %v", err)
			}
		}
		checkRows(t, readRows(t, o), s, rows1)
	})
}

// referencedFiles returns the data files the table's snapshots reference.
func referencedFiles(t *testing.T, o Options) map[string]bool {
	t.Helper()
	tbl := reader(t, o)
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, sn := range tbl.Metadata().Snapshots() {
		mans, err := sn.Manifests(fs)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mans {
			for e, err := range m.Entries(fs, true) {
				if err != nil {
					t.Fatal(err)
				}
				out[e.DataFile().FilePath()] = true
			}
		}
	}
	return out
}

func TestOptionErrors(t *testing.T) {
	dir := t.TempDir()
	base := testOptions(dir)
	cases := []struct {
		name string
		edit func(o *Options)
		want string
	}{
		{"no namespace", func(o *Options) { o.Namespace = "" }, "both a namespace and a table name"},
		{"relative sqlite", func(o *Options) { o.URI = "sqlite://catalog.db" }, "absolute path"},
		{"unknown scheme", func(o *Options) { o.URI = "mysql://h/db" }, `scheme "mysql" is not sqlite or postgres`},
		{"password in uri", func(o *Options) { o.URI = "postgres://u:secret@127.0.0.1:1/db" }, "set PGPASSWORD"},
		{"no warehouse", func(o *Options) { o.Warehouse = "" }, "no warehouse"},
		{"gs warehouse", func(o *Options) { o.Warehouse = "gs://bucket/wh" }, "a warehouse is file:///abs/path or s3://bucket/prefix, not gs://"},
		{"unknown catalog", func(o *Options) { o.Catalog = "glue" }, `catalog "glue" is not sql or rest`},
		{"rest unreachable", func(o *Options) { o.Catalog, o.URI = "rest", "http://127.0.0.1:1/catalog" }, "open iceberg catalog http://127.0.0.1:1/catalog"},
		{"postgres unreachable", func(o *Options) { o.URI = "postgres://u@127.0.0.1:1/db" }, "open iceberg catalog postgres://u@127.0.0.1:1/db"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := base
			c.edit(&o)
			tbl, err := Open(context.Background(), o, testSchema())
			if err == nil {
				tbl.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q lacks %q", err, c.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

func TestRedactedURI(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:pw@h:5432/db": "postgres://u@h:5432/db",
		"postgres://u@h:5432/db":    "postgres://u@h:5432/db",
		"sqlite:///a/b/catalog.db":  "sqlite:///a/b/catalog.db",
		"https://cat.test/v1?x=1":   "https://cat.test/v1?x=1",
	} {
		if got := redactedURI(in); got != want {
			t.Errorf("redactedURI(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRemoveOrphansOfATableWithoutData: a table no run wrote into has no
// data folder, and nothing to remove.
func TestRemoveOrphansOfATableWithoutData(t *testing.T) {
	tbl := open(t, testOptions(t.TempDir()), testSchema())
	if n, err := tbl.RemoveOrphans(context.Background(), 0); err != nil || n != 0 {
		t.Fatalf("RemoveOrphans = %d, %v; want 0, nil", n, err)
	}
}

// TestRemoveRun: the files a run staged and never committed go at once,
// whatever their age; another run's staged files and a committed run's
// stay.
func TestRemoveRun(t *testing.T) {
	forEachCatalog(t, func(t *testing.T, o Options) {
		ctx := context.Background()
		s := testSchema()
		tbl := open(t, o, s)
		rows1 := makeRows("run-1", "a", 6)
		publish(t, tbl, "run-1", rows1)
		mine, err := tbl.Stage(ctx, "run-2", yieldAll(makeRows("run-2", "b", 6)))
		if err != nil {
			t.Fatal(err)
		}
		other, err := tbl.Stage(ctx, "run-3", yieldAll(makeRows("run-3", "c", 6)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range mine.Files() {
			if !strings.Contains(f, tbl.RunUUID("run-2").String()) {
				t.Errorf("data file %s of run-2 does not carry its run's UUID", f)
			}
		}
		if n, err := tbl.RemoveRun(ctx, "run-2"); err != nil || n != len(mine.Files()) {
			t.Fatalf("RemoveRun(run-2) = %d, %v, want its %d files", n, err, len(mine.Files()))
		}
		exists := func(f string) bool {
			_, err := os.Stat(strings.TrimPrefix(f, "file://"))
			return err == nil
		}
		for _, f := range mine.Files() {
			if exists(f) {
				t.Errorf("file %s of the removed run is still there", f)
			}
		}
		for _, f := range other.Files() {
			if !exists(f) {
				t.Errorf("file %s of another staged run was removed", f)
			}
		}
		if n, err := tbl.RemoveRun(ctx, "run-1"); err != nil || n != 0 {
			t.Errorf("RemoveRun(run-1), a committed run, = %d, %v; want 0, nil", n, err)
		}
		if _, err := other.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		checkRows(t, readRows(t, o), s, rows1, makeRows("run-3", "c", 6))
	})
}

// TestRemoveRunWhileOtherRunsGo: RemoveRun walks the data folder while
// other writers remove their own runs' files from it (shards settling
// their attempts side by side); a file that goes in the middle of the
// walk must not make RemoveRun report success with the run's files still
// there, which would leave them orphaned for good once the caller
// forgets the run.
func TestRemoveRunWhileOtherRunsGo(t *testing.T) {
	ctx := context.Background()
	tbl := open(t, testOptions(t.TempDir()), testSchema())
	for round := range 5 {
		runID := fmt.Sprintf("run-%d", round)
		mine, err := tbl.Stage(ctx, runID, yieldAll(makeRows(runID, "b", 6)))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(strings.TrimPrefix(mine.Files()[0], "file://"))
		// Other runs' files, named to come after this run's in the walk,
		// removed last first while RemoveRun walks.
		others := make([]string, 3000)
		for i := range others {
			others[i] = filepath.Join(dir, fmt.Sprintf("zz-other-%05d.parquet", i))
			if err := os.WriteFile(others[i], nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := len(others) - 1; i >= 0; i-- {
				_ = os.Remove(others[i])
			}
		}()
		n, err := tbl.RemoveRun(ctx, runID)
		<-done
		if err != nil {
			t.Fatalf("round %d: RemoveRun: %v", round, err)
		}
		for _, f := range mine.Files() {
			if _, serr := os.Stat(strings.TrimPrefix(f, "file://")); serr == nil {
				t.Fatalf("round %d: RemoveRun(%s) = %d, nil, but its file %s is still there", round, runID, n, f)
			}
		}
		if n != len(mine.Files()) {
			t.Fatalf("round %d: RemoveRun(%s) = %d, want its %d files", round, runID, n, len(mine.Files()))
		}
	}
}
