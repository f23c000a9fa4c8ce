//go:build iceberg

package stage

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/publish/iceberg"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/verdict"
)

// openTableExporter opens the config's Iceberg table, creating it (or
// the columns the config added) before anything is crawled, and returns
// the exporter publishing into it and how many runs it holds (0 or 1).
func openTableExporter(ctx context.Context, cfg config.Config, opts Options, log *slog.Logger) (*exporter, int, error) {
	ic := cfg.Iceberg
	schema := sink.SchemaFor(cfg.Extract.Fields, cfg.Export.Tombstones)
	t, err := iceberg.Open(ctx, iceberg.Options{Catalog: ic.Catalog, URI: ic.URI, Warehouse: ic.Warehouse,
		Namespace: ic.Namespace, Table: ic.Table, Config: cfg.Name, Getenv: opts.getenv()}, schema)
	if err != nil {
		return nil, 0, fmt.Errorf("%s (the [iceberg] table at line %d): %w", cfg.Output, ic.Line, err)
	}
	runs, err := t.Runs(ctx)
	if err != nil {
		_ = t.Close()
		return nil, 0, fmt.Errorf("%s: %w", cfg.Output, err)
	}
	location, err := t.Location(ctx)
	if err != nil {
		_ = t.Close()
		return nil, 0, fmt.Errorf("%s: %w", cfg.Output, err)
	}
	table := &icebergTable{t: t, location: location}
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
