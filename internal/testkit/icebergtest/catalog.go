package icebergtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
)

// Catalog is a connection to a SQL catalog a reader keeps open to load a
// table again and again, as a query engine polling it would. Its methods
// return errors rather than failing a test, so a goroutine may call
// them.
type Catalog struct {
	db  *sql.DB
	cat *sqlcat.Catalog
}

// OpenSQLite connects to the SQLite catalog at catalogPath, whose
// warehouse is the file:// URL warehouse.
func OpenSQLite(catalogPath, warehouse string) (*Catalog, error) {
	// A reader waits for a writer's lock rather than failing, and creates
	// no catalog table.
	db, err := sql.Open("sqlite", "file:"+catalogPath+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	cat, err := sqlcat.NewCatalog(CatalogName, db, sqlcat.SQLite, iceberg.Properties{"warehouse": warehouse, "init_catalog_tables": "false"})
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &Catalog{db: db, cat: cat}, nil
}

// Close closes the connection.
func (c *Catalog) Close() error { return c.db.Close() }

// ErrNoTable is returned by Load when the catalog has no such table
// (yet).
var ErrNoTable = errors.New("no such table")

// Load reads the table namespace.name as the catalog has it now.
func (c *Catalog) Load(ctx context.Context, namespace, name string) (*View, error) {
	tbl, err := c.cat.LoadTable(ctx, table.Identifier{namespace, name})
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, fmt.Errorf("%s.%s: %w", namespace, name, ErrNoTable)
	}
	if err != nil {
		return nil, err
	}
	return &View{tbl: tbl}, nil
}

// Snapshot is what a reader sees of one snapshot of a table.
type Snapshot struct {
	// ID is the snapshot's id; 0 for a table without a snapshot.
	ID int64
	// RunRows counts the snapshot's rows by their _run_id.
	RunRows map[string]int
}

// Current loads the table namespace.name and reads its current snapshot:
// its id and its rows per _run_id.
func (c *Catalog) Current(ctx context.Context, namespace, name string) (Snapshot, error) {
	v, err := c.Load(ctx, namespace, name)
	if err != nil {
		return Snapshot{}, err
	}
	return v.Read(ctx, v.CurrentID())
}

// View is a table as it was loaded at one moment.
type View struct{ tbl *table.Table }

// SnapshotInfo is one snapshot of a table's history.
type SnapshotInfo struct {
	ID int64
	// RunID is the databrew.run-id its summary holds ("" when none).
	RunID string
	// Operation is the summary's operation (append, overwrite, ...).
	Operation string
}

// Snapshots lists the snapshots the table's metadata keeps, oldest
// first.
func (v *View) Snapshots() []SnapshotInfo {
	var out []SnapshotInfo
	for _, s := range v.tbl.Metadata().Snapshots() {
		info := SnapshotInfo{ID: s.SnapshotID}
		if s.Summary != nil {
			info.RunID = s.Summary.Properties["databrew.run-id"]
			info.Operation = string(s.Summary.Operation)
		}
		out = append(out, info)
	}
	return out
}

// CurrentID is the id of the current snapshot, 0 when there is none.
func (v *View) CurrentID() int64 {
	if s := v.tbl.CurrentSnapshot(); s != nil {
		return s.SnapshotID
	}
	return 0
}

// Read scans the snapshot snapshotID (0: none, an empty table) for its
// _run_id column and counts its rows per run id.
func (v *View) Read(ctx context.Context, snapshotID int64) (Snapshot, error) {
	out := Snapshot{ID: snapshotID, RunRows: map[string]int{}}
	if snapshotID == 0 {
		return out, nil
	}
	at, err := v.tbl.Scan(table.WithSnapshotID(snapshotID), table.WithSelectedFields("_run_id")).ToArrowTable(ctx)
	if err != nil {
		return out, fmt.Errorf("scan snapshot %d: %w", snapshotID, err)
	}
	defer at.Release()
	rdr := array.NewTableReader(at, 4096)
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		col := rec.Column(rec.Schema().FieldIndices("_run_id")[0])
		for i := 0; i < int(rec.NumRows()); i++ {
			out.RunRows[col.ValueStr(i)]++
		}
	}
	return out, rdr.Err()
}

// DataFiles lists the data files the current snapshot's manifests
// reference (their paths as the manifests have them), sorted.
func (v *View) DataFiles(ctx context.Context) ([]string, error) {
	cur := v.tbl.CurrentSnapshot()
	if cur == nil {
		return nil, nil
	}
	fio, err := v.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := cur.Manifests(fio)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range manifests {
		for e, err := range m.Entries(fio, true) {
			if err != nil {
				return nil, fmt.Errorf("manifest %s: %w", m.FilePath(), err)
			}
			out = append(out, e.DataFile().FilePath())
		}
	}
	slices.Sort(out)
	return out, nil
}

// Orphans lists the Parquet files under the table's data folder (in a
// file:// warehouse) that the current snapshot's manifests do not
// reference: files no reader of the table sees.
func (v *View) Orphans(ctx context.Context) ([]string, error) {
	loc := v.tbl.Properties()[table.WriteDataPathKey]
	if loc == "" {
		loc = strings.TrimSuffix(v.tbl.Location(), "/") + "/data"
	}
	dir, err := localPath(loc)
	if err != nil {
		return nil, err
	}
	files, err := v.DataFiles(ctx)
	if err != nil {
		return nil, err
	}
	referenced := map[string]bool{}
	for _, f := range files {
		p, err := localPath(f)
		if err != nil {
			return nil, err
		}
		referenced[p] = true
	}
	var orphans []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") && !referenced[p] {
			orphans = append(orphans, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no data folder: nothing was written
	}
	return orphans, err
}

// localPath is the local path of a file:// URL (or of a plain path).
func localPath(loc string) (string, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "file", "":
		return filepath.Clean(filepath.FromSlash(u.Path)), nil
	}
	return "", fmt.Errorf("%s: only a file:// warehouse is read here", loc)
}
