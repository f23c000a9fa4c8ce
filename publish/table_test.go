package publish_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// fakeTable is a Table whose commit makes snapshot id.
type fakeTable struct{ id int64 }

func (fakeTable) ID() string    { return "fake:catalog#shop.books" }
func (fakeTable) Where() string { return "iceberg://shop.books (fake)" }
func (fakeTable) FindRun(context.Context, string) (bool, error) {
	return false, nil
}
func (fakeTable) RemoveOrphans(context.Context, time.Duration) (int, error) { return 0, nil }
func (fakeTable) RemoveRun(context.Context, string) (int, error)            { return 0, nil }
func (fakeTable) CheckStaged(context.Context, json.RawMessage) error        { return nil }
func (t fakeTable) CommitStaged(context.Context, string, []json.RawMessage) (int64, []string, error) {
	return t.id, nil, nil
}
func (fakeTable) Describe() verdict.Table {
	return verdict.Table{Format: verdict.TableFormatIceberg, Name: "shop.books", Catalog: "sqlite:///c.db", Location: "file:///w/shop.db/books"}
}
func (t fakeTable) Stage(_ context.Context, _ string, rows func(yield func(sink.Row) error) error) (publish.TableCommit, error) {
	if err := rows(func(sink.Row) error { return nil }); err != nil {
		return nil, err
	}
	return fakeCommit(t), nil
}

type fakeCommit struct{ id int64 }

func (c fakeCommit) Commit(context.Context) (int64, []string, error) {
	return c.id, []string{"file:///w/shop.db/books/data/a.parquet"}, nil
}

func (c fakeCommit) Staged() (json.RawMessage, []string, error) {
	return json.RawMessage(`[]`), []string{"file:///w/shop.db/books/data/a.parquet"}, nil
}

// fakeLedger is a Ledger with nothing pending.
type fakeLedger struct{}

func (fakeLedger) ForEachPending(uint64, func(state.Version) error) error { return nil }
func (fakeLedger) BeginPublish(state.Publication) error                   { return nil }
func (fakeLedger) Publishing() ([]state.Publication, error)               { return nil, nil }
func (fakeLedger) AbortPublish(string) error                              { return nil }
func (fakeLedger) CommitPublish(string) (int, error)                      { return 0, nil }

// TestTablePublishNamesTheSnapshot: the export section of a run published
// into a table names the table and the snapshot its commit made;
// Describe names the table without one.
func TestTablePublishNamesTheSnapshot(t *testing.T) {
	const id = int64(7340955470153711426)
	p := &publish.TablePublisher{Table: fakeTable{id: id}, Ledger: fakeLedger{}}
	r := verdict.RunReport{RunID: "R1"}
	if err := p.Publish(context.Background(), &r, 1); err != nil {
		t.Fatal(err)
	}
	want := verdict.Table{Format: "iceberg", Name: "shop.books", Catalog: "sqlite:///c.db", Location: "file:///w/shop.db/books", SnapshotID: id}
	if !r.Export.Published || r.Export.Table == nil || *r.Export.Table != want {
		t.Fatalf("export = %+v, table %+v; want published into %+v", r.Export, r.Export.Table, want)
	}
	if len(r.Export.Files) != 1 || r.Export.Path != "iceberg://shop.books (fake)" {
		t.Errorf("export path %q, files %q", r.Export.Path, r.Export.Files)
	}
	d := p.Describe()
	want.SnapshotID = 0
	if d == nil || *d != want {
		t.Errorf("Describe = %+v, want %+v", d, want)
	}
}
