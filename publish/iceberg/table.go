package iceberg

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/databrew/databrew-stage/sink"
)

// The snapshot summary properties the stage sets.
const (
	// PropRunID holds the run id of the run a snapshot published.
	PropRunID = "databrew.run-id"
	// PropConfig holds the name of the config that published it.
	PropConfig = "databrew.config"
)

// maxAttempts bounds the commits Open's schema evolution and
// Pending.Commit try when concurrent writers keep moving the table.
const maxAttempts = 10

// Table is an open Iceberg table the stage publishes into. Its methods may
// be called from several goroutines.
type Table struct {
	o        Options
	ident    table.Identifier
	cat      catalog.Catalog
	closeCat func() error
	user     []sink.Column
}

// Open connects to the catalog, creates the namespace and the table if
// missing, and returns the table. A new table's columns are the user
// columns of s (sink.Schema.User, optional; list columns as lists of
// required elements; timestamps as timestamptz), then _key, _change, _url,
// _run_id (required strings) and _seen_at (a required timestamptz),
// partitioned by day(_seen_at) in partition field _seen_at_day.
//
// On an existing table, a user column the table lacks is added (before
// _key, in one schema commit, before any data); a column the table has
// that s lacks, or one whose type differs, is an error naming the column
// and what to do.
func Open(ctx context.Context, o Options, s sink.Schema) (*Table, error) {
	ident, err := o.identifier()
	if err != nil {
		return nil, err
	}
	t := &Table{o: o, ident: ident, user: s.User()}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", t.Where(), err)
	}
	t.cat, t.closeCat, err = openCatalog(ctx, &o)
	if err != nil {
		return nil, fmt.Errorf("open iceberg catalog %s: %w", redactedURI(o.URI), err)
	}
	if err := t.ensure(ctx); err != nil {
		_ = t.closeCat()
		return nil, fmt.Errorf("iceberg table %s: %w", t.Where(), err)
	}
	return t, nil
}

// ensure creates the namespace and the table if missing and evolves the
// table's schema to t.user.
func (t *Table) ensure(ctx context.Context) error {
	ns := catalog.NamespaceFromIdent(t.ident)
	exists, err := t.cat.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return fmt.Errorf("look up namespace %s: %w", t.o.Namespace, err)
	}
	if !exists {
		err := t.cat.CreateNamespace(ctx, ns, nil)
		if err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return fmt.Errorf("create namespace %s: %w", t.o.Namespace, err)
		}
	}
	tbl, err := t.cat.LoadTable(ctx, t.ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		tbl, err = t.create(ctx)
	}
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		missing, err := schemaDiff(t.o.Table, tbl.Schema(), t.user)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			return nil
		}
		err = addColumns(ctx, tbl, missing)
		if err == nil {
			return nil
		}
		fresh, lerr := t.cat.LoadTable(ctx, t.ident)
		if lerr != nil {
			return errors.Join(err, lerr)
		}
		if fresh.MetadataLocation() == tbl.MetadataLocation() || attempt == maxAttempts {
			return err
		}
		// Another writer moved the table: compare again with its state.
		tbl = fresh
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// create creates the table for t.user, or loads it when a concurrent Open
// created it first.
func (t *Table) create(ctx context.Context) (*table.Table, error) {
	sc, seenAt, err := newSchema(t.user)
	if err != nil {
		return nil, err
	}
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{
		SourceIDs: []int{seenAt},
		FieldID:   1000,
		Name:      PartitionField,
		Transform: iceberg.DayTransform{},
	})
	tbl, err := t.cat.CreateTable(ctx, t.ident, sc, catalog.WithPartitionSpec(&spec))
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		return t.cat.LoadTable(ctx, t.ident)
	}
	if err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	return tbl, nil
}

// addColumns commits one schema change adding cols as optional columns
// before _key.
func addColumns(ctx context.Context, tbl *table.Table, cols []sink.Column) error {
	tx := tbl.NewTransaction()
	us := tx.UpdateSchema(true, false)
	for _, c := range cols {
		typ, err := columnType(c)
		if err != nil {
			return err
		}
		us.AddColumn([]string{c.Name}, typ, "", false, nil)
		us.MoveBefore([]string{c.Name}, []string{ColumnKey})
	}
	if err := us.Commit(); err != nil {
		return fmt.Errorf("add columns %s: %w", columnNames(cols), err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit new columns %s: %w", columnNames(cols), err)
	}
	return nil
}

// backoff waits a little, longer with each attempt, with jitter so that
// writers that conflicted do not meet again.
func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(attempt) * 20 * time.Millisecond
	d += rand.N(d)
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-tm.C:
		return nil
	}
}

// load reads the table's current state from the catalog.
func (t *Table) load(ctx context.Context) (*table.Table, error) {
	tbl, err := t.cat.LoadTable(ctx, t.ident)
	if err != nil {
		return nil, fmt.Errorf("load iceberg table %s: %w", t.Where(), err)
	}
	return tbl, nil
}

// ID identifies the table in state records: "iceberg:" + the catalog URI
// without a password + "#" + NAMESPACE.TABLE.
func (t *Table) ID() string {
	return "iceberg:" + t.Catalog() + "#" + t.Name()
}

// Where describes the table for people: "iceberg://NAMESPACE.TABLE
// (catalog URI)".
func (t *Table) Where() string {
	return "iceberg://" + t.Name() + " (" + t.Catalog() + ")"
}

// FindRun reports the snapshot whose summary has databrew.run-id ==
// runID, looking through the whole snapshot history the table keeps, as
// the catalog has it now.
func (t *Table) FindRun(ctx context.Context, runID string) (snapshotID int64, found bool, err error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return 0, false, err
	}
	id, found := findRun(tbl.Metadata(), runID)
	return id, found, nil
}

// Runs is 1 when a snapshot of the table carries a run id (a run was
// published into it), else 0, as an output in object storage counts.
func (t *Table) Runs(ctx context.Context) (int, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return 0, err
	}
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[PropRunID] != "" {
			return 1, nil
		}
	}
	return 0, nil
}

// findRun looks for the snapshot of runID in meta.
func findRun(meta table.Metadata, runID string) (int64, bool) {
	for _, s := range meta.Snapshots() {
		if s.Summary != nil && s.Summary.Properties[PropRunID] == runID {
			return s.SnapshotID, true
		}
	}
	return 0, false
}

// Pending is an append that Stage wrote and Commit has not committed yet:
// its data files are in the table's data folder, referenced by no
// snapshot, so no reader sees them.
type Pending struct {
	t     *Table
	runID string
	base  *table.Table // the table state the files were written for
	files []iceberg.DataFile

	mu        sync.Mutex
	committed bool
	snapshot  int64
	conflicts int // commits refused because another writer moved the table
}

// Stage writes the rows rows yields as Parquet data files of a pending
// append, for the run runID: in record batches of at most 16,384 rows, so
// memory stays flat, one file per day of _seen_at (more when one grows
// past the table's target file size). rows is called once; it stops when
// yield returns an error, and returns that error. Row.FetchedAt fills
// _seen_at; Row.Hash is not stored. The files' names carry
// t.RunUUID(runID), so RemoveRun finds them: a run id is staged once by
// a config (staging it again would write over the same names).
//
// A failed Stage may leave data files behind; RemoveRun (or, an hour
// later, RemoveOrphans) deletes them.
func (t *Table) Stage(ctx context.Context, runID string, rows func(yield func(sink.Row) error) error) (*Pending, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return nil, err
	}
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("arrow schema of iceberg table %s: %w", t.Where(), err)
	}
	cv, err := newConverter(asc, t.user)
	if err != nil {
		return nil, fmt.Errorf("iceberg table %s: %w", t.Where(), err)
	}
	p := &Pending{t: t, runID: runID, base: tbl}
	for df, err := range table.WriteRecords(ctx, tbl, asc, cv.batches(rows), table.WithWriteUUID(t.RunUUID(runID))) {
		if err != nil {
			return nil, fmt.Errorf("write data files of run %s into iceberg table %s: %w", runID, t.Where(), err)
		}
		p.files = append(p.files, df)
	}
	return p, nil
}

// Files returns the paths (URLs) of the data files p wrote.
func (p *Pending) Files() []string {
	out := make([]string, len(p.files))
	for i, df := range p.files {
		out[i] = df.FilePath()
	}
	return out
}

// Commit adds p's data files to the table in one append snapshot whose
// summary holds databrew.run-id (and databrew.config when Options.Config
// is set), and returns the snapshot's id. When another writer committed
// first (the catalog refuses a commit not based on the table's current
// state), Commit reloads the table: if the run's snapshot is there (an
// earlier Commit of the same run landed), it returns it; otherwise it
// commits the same files again on the new state, a few times at most. A
// Pending without rows commits nothing and returns 0. Commit after a
// successful Commit returns the same snapshot.
func (p *Pending) Commit(ctx context.Context) (snapshotID int64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.committed {
		return p.snapshot, nil
	}
	if len(p.files) == 0 {
		p.committed = true
		return 0, nil
	}
	t := p.t
	props := iceberg.Properties{PropRunID: p.runID}
	if t.o.Config != "" {
		props[PropConfig] = t.o.Config
	}
	tbl := p.base
	for attempt := 1; ; attempt++ {
		var next *table.Table
		tx := tbl.NewTransaction()
		// No duplicate check (it reads every manifest of the table): the
		// files have names of their own, and only this Pending commits
		// them, in a snapshot that FindRun finds.
		err := tx.AddDataFiles(ctx, p.files, props, table.WithoutAutoNameMapping(), table.WithoutDuplicateCheck())
		if err == nil {
			next, err = tx.Commit(ctx)
		}
		if err == nil {
			id, ok := findRun(next.Metadata(), p.runID)
			if !ok {
				return 0, fmt.Errorf("iceberg table %s: the commit of run %s left no snapshot with %s in its summary", t.Where(), p.runID, PropRunID)
			}
			p.committed, p.snapshot = true, id
			return id, nil
		}
		err = fmt.Errorf("commit run %s into iceberg table %s: %w", p.runID, t.Where(), err)
		fresh, lerr := t.load(ctx)
		if lerr != nil {
			return 0, errors.Join(err, lerr)
		}
		if id, ok := findRun(fresh.Metadata(), p.runID); ok {
			p.committed, p.snapshot = true, id
			return id, nil
		}
		if fresh.Metadata().TableUUID() != p.base.Metadata().TableUUID() {
			return 0, fmt.Errorf("%w (the table was dropped and created again since the run was staged: stage it again)", err)
		}
		conflict := errors.Is(err, table.ErrCommitFailed) || fresh.MetadataLocation() != tbl.MetadataLocation()
		if !conflict || attempt == maxAttempts {
			return 0, err
		}
		p.conflicts++
		tbl = fresh
		if err := backoff(ctx, attempt); err != nil {
			return 0, err
		}
	}
}

// dataLocation returns the folder of the table's data files.
func dataLocation(tbl *table.Table) string {
	if loc := tbl.Properties()[table.WriteDataPathKey]; loc != "" {
		return strings.TrimSuffix(loc, "/")
	}
	return strings.TrimSuffix(tbl.Location(), "/") + "/data"
}

// RemoveOrphans deletes the data files under the table's data folder that
// no snapshot references (those of an append that never committed) and
// that are older than minAge, and returns how many it deleted. minAge
// must exceed the time any live writer takes from Stage to Commit, or it
// deletes a pending append's files before they are committed.
func (t *Table) RemoveOrphans(ctx context.Context, minAge time.Duration) (int, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return 0, err
	}
	res, err := deleteUnreferenced(ctx, tbl, table.WithFilesOlderThan(minAge))
	if err != nil {
		return 0, fmt.Errorf("remove orphan data files of iceberg table %s: %w", t.Where(), err)
	}
	return len(res.DeletedFiles), nil
}

// Close releases the catalog connection.
func (t *Table) Close() error {
	return t.closeCat()
}

// columnNames joins the names of cols for messages.
func columnNames(cols []sink.Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
