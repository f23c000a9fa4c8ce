//go:build iceberg

package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/publish/iceberg"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/verdict"
)

// openTable opens the config's Iceberg table, creating it (or the
// columns the config added) if missing.
func openTable(ctx context.Context, cfg config.Config, getenv func(string) string) (*icebergTable, error) {
	ic := cfg.Iceberg
	schema := sink.SchemaFor(cfg.Extract.Fields, cfg.Export.Tombstones)
	t, err := iceberg.Open(ctx, iceberg.Options{Catalog: ic.Catalog, URI: ic.URI, Warehouse: ic.Warehouse,
		Namespace: ic.Namespace, Table: ic.Table, Config: cfg.Name, Getenv: getenv}, schema)
	if err != nil {
		return nil, fmt.Errorf("%s (the [iceberg] table at line %d): %w", cfg.Output, ic.Line, err)
	}
	location, err := t.Location(ctx)
	if err != nil {
		_ = t.Close()
		return nil, fmt.Errorf("%s: %w", cfg.Output, err)
	}
	return &icebergTable{t: t, location: location}, nil
}

// openTableOutput opens the config's Iceberg table as the output of a
// logical run's shards and its commit: the table, and the folder or
// bucket prefix under the table's location that holds the runs' control
// files (iceberg.ControlFolder).
func openTableOutput(ctx context.Context, cfg config.Config, getenv func(string) string, storeTimeout time.Duration) (publish.Output, error) {
	table, err := openTable(ctx, cfg, getenv)
	if err != nil {
		return publish.Output{}, err
	}
	where, err := table.t.ControlOutput(table.location)
	var ctl publish.Output
	if err == nil {
		ctl, err = openOutput(ctx, where, storeTimeout, true)
	}
	if err != nil {
		_ = table.Close()
		return publish.Output{}, fmt.Errorf("%s: the control files of its sharded runs: %w", cfg.Output, err)
	}
	return publish.Output{Storage: ctl.Storage, Name: cfg.Output, ID: table.ID(), Table: table, Sweep: ctl.Sweep,
		Runs:  table.t.Runs,
		Close: func() error { return errors.Join(ctl.Close(), table.Close()) }}, nil
}

// openTableExporter opens the config's Iceberg table, creating it (or
// the columns the config added) before anything is crawled, and returns
// the exporter publishing into it and how many runs it holds (0 or 1).
func openTableExporter(ctx context.Context, cfg config.Config, opts Options, log *slog.Logger) (*exporter, int, error) {
	table, err := openTable(ctx, cfg, opts.getenv())
	if err != nil {
		return nil, 0, err
	}
	t := table.t
	schema := sink.SchemaFor(cfg.Extract.Fields, cfg.Export.Tombstones)
	runs, err := t.Runs(ctx)
	if err != nil {
		_ = t.Close()
		return nil, 0, fmt.Errorf("%s: %w", cfg.Output, err)
	}
	x := &exporter{cfg: cfg, table: table, partitionDate: opts.PartitionDate, tablePub: &publish.TablePublisher{
		Table: table, Log: log, AfterStep: opts.AfterPublishStep,
		Export: publish.Export{Config: cfg.Name, Schema: schema}}}
	return x, runs, nil
}

// icebergTable is an Iceberg table as the publish protocol's Table;
// location is the table's as the catalog had it when the run opened it.
type icebergTable struct {
	t        *iceberg.Table
	location string
}

func (a *icebergTable) ID() string    { return a.t.ID() }
func (a *icebergTable) Where() string { return a.t.Where() }
func (a *icebergTable) Close() error  { return a.t.Close() }

func (a *icebergTable) Describe() verdict.Table {
	return verdict.Table{Format: verdict.TableFormatIceberg, Name: a.t.Name(), Catalog: a.t.Catalog(), Location: a.location}
}

func (a *icebergTable) RemoveOrphans(ctx context.Context, minAge time.Duration) (int, error) {
	return a.t.RemoveOrphans(ctx, minAge)
}

func (a *icebergTable) RemoveRun(ctx context.Context, runID string) (int, error) {
	return a.t.RemoveRun(ctx, runID)
}

func (a *icebergTable) CommitStaged(ctx context.Context, runID string, staged []json.RawMessage) (int64, []string, error) {
	return a.t.CommitStaged(ctx, runID, staged)
}

func (a *icebergTable) CheckStaged(ctx context.Context, staged json.RawMessage) error {
	return a.t.CheckStaged(ctx, staged)
}

func (a *icebergTable) FindRun(ctx context.Context, runID string) (bool, error) {
	_, found, err := a.t.FindRun(ctx, runID)
	return found, err
}

func (a *icebergTable) Stage(ctx context.Context, runID string, rows func(yield func(sink.Row) error) error) (publish.TableCommit, error) {
	p, err := a.t.Stage(ctx, runID, rows)
	if err != nil {
		return nil, err
	}
	return icebergCommit{p}, nil
}

// icebergCommit is a staged append of an Iceberg table.
type icebergCommit struct{ p *iceberg.Pending }

func (c icebergCommit) Commit(ctx context.Context) (int64, []string, error) {
	id, err := c.p.Commit(ctx)
	if err != nil {
		return 0, nil, err
	}
	return id, c.p.Files(), nil
}

func (c icebergCommit) Staged() (json.RawMessage, []string, error) {
	b, err := c.p.Staged()
	return b, c.p.Files(), err
}
