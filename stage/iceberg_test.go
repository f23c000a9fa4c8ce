//go:build iceberg

package stage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/icebergtest"
	"github.com/databrew/databrew-stage/internal/testkit/pgtest"
	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/verdict"
)

// icebergConfig is the fixture's config publishing into the Iceberg table
// shop.books of a SQLite catalog and a local warehouse in the fixture's
// folder.
func icebergConfig(f *fixture) config.Config {
	f.t.Helper()
	f.output = "iceberg://shop.books"
	cfg := f.config(nil, fmt.Sprintf("\n[iceberg]\nuri = \"sqlite://%s\"\nwarehouse = \"file://%s\"\n",
		filepath.Join(f.dir, "catalog.db"), filepath.Join(f.dir, "warehouse")))
	return cfg
}

// icebergRow is a row of the table as iceberg-go's own scan reads it.
type icebergRow struct {
	key, change, runID string
	price              float64
}

// readIceberg reads the table with iceberg-go's catalog and scan (not the
// stage's writer), and returns its rows and the run id of each snapshot,
// oldest first.
func readIceberg(t *testing.T, f *fixture) ([]icebergRow, []string) {
	t.Helper()
	return icebergRows(icebergtest.Read(t, filepath.Join(f.dir, "catalog.db"), "file://"+filepath.Join(f.dir, "warehouse"), "shop", "books"))
}

// icebergRows is a table's rows and snapshots' run ids as the tests
// compare them.
func icebergRows(tbl icebergtest.Table) ([]icebergRow, []string) {
	rows := make([]icebergRow, len(tbl.Rows))
	for i, r := range tbl.Rows {
		rows[i] = icebergRow{key: r["_key"].(string), change: r["_change"].(string), runID: r["_run_id"].(string), price: r["price"].(float64)}
	}
	return rows, tbl.Runs
}

// TestIceberg_EachRunIsOneSnapshot: a first run creates the table and one
// snapshot holding every item; a rerun with nothing new adds none; a
// changed price adds one snapshot with that row alone; the table, read by
// iceberg-go's scan, holds each item version once.
func TestIceberg_EachRunIsOneSnapshot(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	eachRunIsOneSnapshot(t, f, icebergConfig(f), Options{}, "sqlite://"+filepath.Join(f.dir, "catalog.db"), func() icebergtest.Table {
		return icebergtest.Read(t, filepath.Join(f.dir, "catalog.db"), "file://"+filepath.Join(f.dir, "warehouse"), "shop", "books")
	})
}

// TestIceberg_EachRunIsOneSnapshotOnPostgreSQL is the same on a
// PostgreSQL catalog (a server of the test's own, see pgtest), its
// password given as PGPASSWORD.
func TestIceberg_EachRunIsOneSnapshotOnPostgreSQL(t *testing.T) {
	srv := pgtest.Start(t)
	f := newFixture(t, catalogsite.Options{Items: 30})
	f.output = "iceberg://shop.books"
	warehouse := "file://" + filepath.Join(f.dir, "warehouse")
	cfg := f.config(nil, fmt.Sprintf("\n[iceberg]\nuri = %q\nwarehouse = %q\n", srv.URI, warehouse))
	eachRunIsOneSnapshot(t, f, cfg, Options{Getenv: srv.Getenv}, srv.URI, func() icebergtest.Table {
		return icebergtest.ReadPostgres(t, srv.URI, pgtest.Password, warehouse, "shop", "books")
	})
}

// TestIceberg_EachRunIsOneSnapshotOnS3 is the same on a SQLite catalog
// whose warehouse is a prefix of an S3 bucket (versitygw, see s3test),
// its credentials in the environment; the reader gives iceberg-go the
// bucket's endpoint itself.
func TestIceberg_EachRunIsOneSnapshotOnS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	f := newFixture(t, catalogsite.Options{Items: 30})
	f.output = "iceberg://shop.books"
	catalog, warehouse := filepath.Join(f.dir, "catalog.db"), srv.URL("warehouse")
	cfg := f.config(nil, fmt.Sprintf("\n[iceberg]\nuri = %q\nwarehouse = %q\n", "sqlite://"+catalog, warehouse))
	eachRunIsOneSnapshot(t, f, cfg, Options{}, "sqlite://"+catalog, func() icebergtest.Table {
		return icebergtest.Read(t, catalog, warehouse, "shop", "books")
	})
	data, err := os.ReadDir(filepath.Join(srv.Dir(), s3test.Bucket, "warehouse", "shop.db", "books", "data"))
	if err != nil || len(data) == 0 {
		t.Fatalf("no data in the bucket under warehouse/shop.db/books/data: %v", err)
	}
}

// eachRunIsOneSnapshot: a first run creates the table and one snapshot
// holding every item; a rerun with nothing new adds none; a changed price
// adds one snapshot with that row alone; read reads the table. Each
// verdict names the table, in the catalog catalog, and the snapshot its
// run committed, as the reader sees them.
func eachRunIsOneSnapshot(t *testing.T, f *fixture, cfg config.Config, opts Options, catalog string, read func() icebergtest.Table) {
	t.Helper()
	first := f.run(cfg, opts)
	if !first.Export.Published || first.Export.Rows != 30 {
		t.Fatalf("first run: %+v", first.Export)
	}
	tbl := read()
	rows, runs := icebergRows(tbl)
	if len(rows) != 30 || len(runs) != 1 || runs[0] != first.RunID {
		t.Fatalf("after the first run: %d rows, snapshots of runs %v", len(rows), runs)
	}
	expectVerdictTable(t, "the first run", first, catalog, tbl, tbl.Snapshots[0])
	again := f.run(cfg, opts)
	if again.Export.Published {
		t.Fatalf("a rerun with nothing new published %+v", again.Export)
	}
	tbl = read()
	if len(tbl.Runs) != 1 {
		t.Fatalf("a rerun with nothing new added snapshots: %v", tbl.Runs)
	}
	expectVerdictTable(t, "a rerun with nothing new", again, catalog, tbl, 0)
	f.site.SetPrice(7, 12.5)
	third := f.run(cfg, opts)
	tbl = read()
	rows, runs = icebergRows(tbl)
	if !third.Export.Published || third.Export.Rows != 1 || len(runs) != 2 || runs[1] != third.RunID {
		t.Fatalf("after a change: export %+v, snapshots of runs %v", third.Export, runs)
	}
	expectVerdictTable(t, "the run after a change", third, catalog, tbl, tbl.Snapshots[1])
	expectIcebergVersionsOnce(t, f, rows, 31)
}

// expectVerdictTable checks that the export section of rep names the
// table shop.books of catalog at the location the reader found, and the
// snapshot snapshotID (0: none).
func expectVerdictTable(t *testing.T, what string, rep verdict.RunReport, catalog string, tbl icebergtest.Table, snapshotID int64) {
	t.Helper()
	want := verdict.Table{Format: verdict.TableFormatIceberg, Name: "shop.books", Catalog: catalog, Location: tbl.Location, SnapshotID: snapshotID}
	if got := rep.Export.Table; got == nil || *got != want {
		t.Fatalf("%s: export.table = %+v, want %+v", what, got, want)
	}
	if tbl.Location == "" {
		t.Fatalf("%s: the reader found no location", what)
	}
}

// expectIcebergVersionsOnce checks every item is in the table as new once
// and that the table holds n rows, no row twice.
func expectIcebergVersionsOnce(t *testing.T, f *fixture, rows []icebergRow, n int) {
	t.Helper()
	seen, news := map[icebergRow]bool{}, map[string]int{}
	for _, r := range rows {
		if seen[r] {
			t.Fatalf("row %+v is in the table twice", r)
		}
		seen[r] = true
		if r.change == "new" {
			news[r.key]++
		}
	}
	for _, it := range f.site.Items() {
		if news[it.UPC] != 1 {
			t.Fatalf("item %s is in the table as new %d times", it.UPC, news[it.UPC])
		}
	}
	if len(rows) != n {
		t.Fatalf("%d rows in the table, want %d", len(rows), n)
	}
}

// TestIceberg_APublishCutAtAnyStepReachesTheTableOnce abandons a publish
// after each step, as a crash would, then runs again: every item is in
// the table once, in one snapshot of one run.
func TestIceberg_APublishCutAtAnyStepReachesTheTableOnce(t *testing.T) {
	for _, step := range PublishSteps {
		t.Run(string(step), func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 20})
			cfg := icebergConfig(f)
			rep, err := Run(t.Context(), cfg, Options{AfterPublishStep: crashAt(step)})
			if !errors.Is(err, errCrash) {
				t.Fatalf("run 1: %v (%s)", err, rep.Summary())
			}
			rep2 := f.run(cfg, Options{})
			rows, runs := readIceberg(t, f)
			expectIcebergVersionsOnce(t, f, rows, 20)
			committed := step != StepIntent && step != StepStaged
			switch {
			case len(runs) != 1:
				t.Fatalf("snapshots of runs %v, want one", runs)
			case committed && (rep2.Export.Published || runs[0] != rep.RunID):
				t.Fatalf("after %s the table had run 1: run 2 export %+v, snapshots %v", step, rep2.Export, runs)
			case !committed && (!rep2.Export.Published || runs[0] != rep2.RunID):
				t.Fatalf("after %s run 2 must publish what run 1 could not: %+v, snapshots %v", step, rep2.Export, runs)
			}
		})
	}
}
