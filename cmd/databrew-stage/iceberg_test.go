//go:build iceberg

package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/icebergtest"
	"github.com/databrew/databrew-stage/internal/testkit/pgtest"
	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/verdict"
)

// icebergTarget is where a test's table shop.books lives: the uri and
// warehouse of its config's [iceberg] table, and how to read the table
// back with iceberg-go's catalog and scan (see icebergtest), not the
// stage's code.
type icebergTarget struct {
	uri, warehouse string
	read           func(t *testing.T) icebergtest.Table
}

// icebergBin is the binary publishing a catalog site into an Iceberg
// table.
type icebergBin struct {
	t       *testing.T
	bin     string
	cfgPath string
	site    *catalogsite.Site
	target  icebergTarget
}

// newIcebergBin writes a config publishing a site of 30 items into
// iceberg://shop.books of target and returns the binary built with -tags
// iceberg (this test binary, as databrew-stage) to run it. The runs get
// this process's environment (the catalog's password, the S3
// credentials).
func newIcebergBin(t *testing.T, target icebergTarget) *icebergBin {
	t.Helper()
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	site := catalogsite.New(catalogsite.Options{Items: 30, PerPage: 10})
	web := httptest.NewServer(site)
	t.Cleanup(web.Close)
	cfgPath := filepath.Join(t.TempDir(), "books.toml")
	cfg := fmt.Sprintf("name = \"books\"\nstart_urls = [%q]\nstorage = \"state\"\noutput = \"iceberg://shop.books\"\n%s\n[iceberg]\nuri = %q\nwarehouse = %q\n",
		catalogsite.StartURL(web.URL), catalogsite.ExtractConfig, target.uri, target.warehouse)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return &icebergBin{t: t, bin: bin, cfgPath: cfgPath, site: site, target: target}
}

// run runs the binary once and returns its verdict.
func (b *icebergBin) run() verdict.RunReport {
	b.t.Helper()
	cmd := exec.Command(b.bin, "run", "--json", b.cfgPath)
	cmd.Env = append(os.Environ(), "GORACE="+subprocessGORACE())
	out, err := cmd.Output()
	var rep verdict.RunReport
	if jerr := json.Unmarshal(out, &rep); err != nil || jerr != nil {
		b.t.Fatalf("run: %v %v\n%s", err, jerr, out)
	}
	return rep
}

// scan reads the table: each row as key|change|price, and the run id of
// each snapshot, oldest first.
func (b *icebergBin) scan() (rows []string, runs []string) {
	b.t.Helper()
	tbl := b.target.read(b.t)
	for _, r := range tbl.Rows {
		rows = append(rows, fmt.Sprintf("%s|%s|%v", r["_key"], r["_change"], r["price"]))
	}
	return rows, tbl.Runs
}

// threeRuns: the first run creates the table and one snapshot carrying its
// run id; a rerun of the unchanged site adds none; after a price changes,
// the next run adds one snapshot with that row alone; every version is in
// the table once.
func (b *icebergBin) threeRuns() {
	t := b.t
	t.Helper()
	first := b.run()
	if !first.Export.Published || first.Export.Rows != 30 || !strings.HasPrefix(first.Export.Path, "iceberg://shop.books") {
		t.Fatalf("first run: %+v", first.Export)
	}
	rows, runs := b.scan()
	if len(rows) != 30 || len(runs) != 1 || runs[0] != first.RunID {
		t.Fatalf("after the first run: %d rows, snapshots of runs %v", len(rows), runs)
	}
	if again := b.run(); again.Export.Published {
		t.Fatalf("a rerun with nothing new published %+v", again.Export)
	}
	if _, runs := b.scan(); len(runs) != 1 {
		t.Fatalf("a rerun with nothing new added snapshots: %v", runs)
	}
	b.site.SetPrice(3, 9.25)
	third := b.run()
	rows, runs = b.scan()
	if !third.Export.Published || third.Export.Rows != 1 || len(runs) != 2 || runs[0] != first.RunID || runs[1] != third.RunID || len(rows) != 31 {
		t.Fatalf("after a change: export %+v; snapshots of runs %v; %d rows", third.Export, runs, len(rows))
	}
	b.expectVersionsOnce(rows)
}

// expectVersionsOnce checks that no row is in the table twice and that
// every item is in it as new once.
func (b *icebergBin) expectVersionsOnce(rows []string) {
	b.t.Helper()
	seen, news := map[string]bool{}, map[string]int{}
	for _, r := range rows {
		if seen[r] {
			b.t.Fatalf("row %s is in the table twice", r)
		}
		seen[r] = true
		if key, rest, _ := strings.Cut(r, "|"); strings.HasPrefix(rest, "new|") {
			news[key]++
		}
	}
	for _, it := range b.site.Items() {
		if news[it.UPC] != 1 {
			b.t.Fatalf("item %s is in the table as new %d times", it.UPC, news[it.UPC])
		}
	}
}

// TestPublishIntoIceberg runs the binary with output =
// "iceberg://shop.books" on a SQLite catalog and a local warehouse: the
// three runs of threeRuns, then a run killed with SIGKILL at each step of
// the publish is followed by a run that leaves every version in the
// table once.
func TestPublishIntoIceberg(t *testing.T) {
	dir := t.TempDir()
	catalog, warehouse := filepath.Join(dir, "catalog.db"), "file://"+filepath.Join(dir, "warehouse")
	b := newIcebergBin(t, icebergTarget{uri: "sqlite://" + catalog, warehouse: warehouse,
		read: func(t *testing.T) icebergtest.Table { return icebergtest.Read(t, catalog, warehouse, "shop", "books") }})
	b.threeRuns()
	for i, step := range publish.Steps {
		b.site.SetPrice(4+i, 20+float64(i))
		killAt(t, b.bin, b.cfgPath, string(step))
		b.run()
		rows, runs := b.scan()
		if len(rows) != 32+i || len(runs) != 3+i {
			t.Fatalf("after a kill at %s and a run: %d rows, snapshots of runs %v", step, len(rows), runs)
		}
		b.expectVersionsOnce(rows)
	}
}

// TestPublishIntoIcebergOnPostgreSQL is threeRuns on a PostgreSQL catalog
// (a server of the test's own, see pgtest; the password in PGPASSWORD)
// and a local warehouse.
func TestPublishIntoIcebergOnPostgreSQL(t *testing.T) {
	srv := pgtest.Start(t)
	t.Setenv("PGPASSWORD", pgtest.Password)
	warehouse := "file://" + filepath.Join(t.TempDir(), "warehouse")
	b := newIcebergBin(t, icebergTarget{uri: srv.URI, warehouse: warehouse,
		read: func(t *testing.T) icebergtest.Table {
			return icebergtest.ReadPostgres(t, srv.URI, pgtest.Password, warehouse, "shop", "books")
		}})
	b.threeRuns()
}

// TestPublishIntoIcebergOnS3 is threeRuns on a SQLite catalog whose
// warehouse is a prefix of an S3 bucket (versitygw, see s3test; the
// credentials in the environment): the table's files are in the bucket,
// under the warehouse's location without the URL's parameters.
func TestPublishIntoIcebergOnS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	catalog, warehouse := filepath.Join(t.TempDir(), "catalog.db"), srv.URL("warehouse")
	b := newIcebergBin(t, icebergTarget{uri: "sqlite://" + catalog, warehouse: warehouse,
		read: func(t *testing.T) icebergtest.Table { return icebergtest.Read(t, catalog, warehouse, "shop", "books") }})
	b.threeRuns()
	for _, sub := range []string{"metadata", "data"} {
		if entries, err := os.ReadDir(filepath.Join(srv.Dir(), s3test.Bucket, "warehouse", "shop.db", "books", sub)); err != nil || len(entries) == 0 {
			t.Errorf("no %s in the bucket under warehouse/shop.db/books: %v", sub, err)
		}
	}
}
