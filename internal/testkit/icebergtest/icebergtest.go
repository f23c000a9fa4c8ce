// Package icebergtest reads an Iceberg table of a SQL catalog (SQLite or
// PostgreSQL) as a reader other than the stage would: with iceberg-go's
// own catalog and scan, for the tests of iceberg:// outputs. The
// warehouse may be a local folder or an S3 prefix: the reader turns the
// stage's warehouse URL into iceberg-go's S3 properties itself (see
// WarehouseProps).
package icebergtest

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // the catalog's database
)

// CatalogName is the name the stage's SQL catalog keeps its tables under.
const CatalogName = "databrew"

// Table is what a reader sees of a table: the run id each snapshot
// carries, oldest first, and the rows of the current snapshot, each a map
// from column name to value (a string, float64, int64, bool, or nil).
// Snapshots holds each snapshot's id, in the order of Runs; Location is
// the table's location as its metadata says.
type Table struct {
	Runs      []string
	Rows      []map[string]any
	Snapshots []int64
	Location  string
}

// Read reads the table namespace.name of the SQLite catalog at
// catalogPath, whose warehouse is warehouse as the stage's config gives
// it: a file:// URL, or an s3:// URL (see WarehouseProps; the S3
// credentials come from the environment, as s3test's SetEnv sets them).
func Read(t testing.TB, catalogPath, warehouse, namespace, name string) Table {
	t.Helper()
	db, err := sql.Open("sqlite", catalogPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return read(t, db, sqlcat.SQLite, warehouse, namespace, name)
}

// ReadPostgres is Read for the PostgreSQL catalog at uri
// (postgres://user@host:port/db), whose user's password is password.
func ReadPostgres(t testing.TB, uri, password, warehouse, namespace, name string) Table {
	t.Helper()
	cfg, err := pgx.ParseConfig(uri)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Password = password
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	return read(t, db, sqlcat.Postgres, warehouse, namespace, name)
}

// read reads the table through the SQL catalog on db.
func read(t testing.TB, db *sql.DB, dialect sqlcat.SupportedDialect, warehouse, namespace, name string) Table {
	t.Helper()
	cat, err := sqlcat.NewCatalog(CatalogName, db, dialect, WarehouseProps(warehouse))
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{namespace, name})
	if err != nil {
		t.Fatal(err)
	}
	out := Table{Location: tbl.Location()}
	for _, s := range tbl.Metadata().Snapshots() {
		out.Runs = append(out.Runs, s.Summary.Properties["databrew.run-id"])
		out.Snapshots = append(out.Snapshots, s.SnapshotID)
	}
	if tbl.CurrentSnapshot() == nil {
		return out
	}
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	rdr := array.NewTableReader(at, 1024)
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			row := map[string]any{}
			for c, f := range rec.Schema().Fields() {
				row[f.Name] = rec.Column(c).GetOneForMarshal(i)
			}
			out.Rows = append(out.Rows, row)
		}
	}
	return out
}

// WarehouseProps returns the catalog properties a reader opens the
// stage's warehouse with: "warehouse", the URL without its query; for an
// s3:// URL as the stage takes it
// (s3://bucket/prefix?endpoint=...&use_path_style=true&region=...), also
// s3.endpoint, s3.region and s3.force-virtual-addressing (false for a
// path-style URL), which iceberg-go's S3 IO reads. It is written apart
// from the stage's own parsing, as another reader would configure
// itself.
func WarehouseProps(warehouse string) iceberg.Properties {
	u, err := url.Parse(warehouse)
	if err != nil || u.Scheme != "s3" {
		return iceberg.Properties{"warehouse": warehouse}
	}
	q := u.Query()
	props := iceberg.Properties{"warehouse": "s3://" + u.Host + strings.TrimSuffix(u.Path, "/")}
	if ep := q.Get("endpoint"); ep != "" {
		props[icebergio.S3EndpointURL] = ep
	}
	if r := q.Get("region"); r != "" {
		props[icebergio.S3Region] = r
	}
	props[icebergio.S3ForceVirtualAddressing] = "true"
	if q.Get("use_path_style") == "true" {
		props[icebergio.S3ForceVirtualAddressing] = "false"
	}
	return props
}
