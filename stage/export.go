package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// Reasons an export section gives when nothing was published.
const (
	reasonFailed   = "the run failed: nothing is published, its items stay pending for the next published run"
	reasonWithheld = `publish_when = "success" withholds a partial run: its items stay pending`
	reasonNothing  = "nothing new or changed to publish"
)

// exporter publishes one run's pending item versions into the config's
// export root, all or nothing and exactly once: it decides whether the run
// publishes, streams the versions into part files, and hands the rest to
// its target's publish protocol — a local folder's (folderTarget) or
// object storage's (objectTarget). A crash at any step is resolved by the
// target's reconcile on the next run, so every version reaches exactly one
// published run folder.
type exporter struct {
	cfg    config.Config
	db     *state.DB
	schema sink.Schema
	log    *slog.Logger
	target exportTarget
	// afterStep is Options.AfterPublishStep.
	afterStep func(PublishStep) error
	// partitionDate is Options.PartitionDate.
	partitionDate time.Time
}

// partitionDay is the day whose dt= partition a run publishes into.
func (x *exporter) partitionDay(r *verdict.RunReport) time.Time {
	if !x.partitionDate.IsZero() {
		return x.partitionDate
	}
	return r.StartedAt
}

// exportTarget is where an exporter publishes: the publish protocol of
// one kind of export root.
type exportTarget interface {
	// reconcile resolves the publishes a crash interrupted. It runs before
	// the crawl, so a target that cannot be used fails the run before its
	// first request.
	reconcile(ctx context.Context, x *exporter) error
	// publish writes the pending versions up to maxSeq (with x.write) and
	// publishes them, filling r.Export.
	publish(ctx context.Context, x *exporter, r *verdict.RunReport, maxSeq uint64) error
	// publishedRuns counts the runs the export root holds (the exports
	// the state's items were published to): every run folder of a local
	// folder; 0 or 1 in object storage, where listing them all would
	// grow with the output's history.
	publishedRuns(ctx context.Context) (int, error)
	// writeVerdict replaces the export root's _verdict.json.
	writeVerdict(ctx context.Context, b []byte) error
	close() error
}

// openTarget opens cfg's export root: a local folder, or an output in
// object storage, which is proved usable first (bucket, credentials,
// permissions, create-only writes), so a bad target fails the run before
// any request is sent and before the state is touched. storeTimeout
// bounds each request to object storage (0: the default).
func openTarget(ctx context.Context, cfg config.Config, storeTimeout time.Duration) (exportTarget, error) {
	if config.IsObjectStore(cfg.Output) {
		return openObjectTarget(ctx, cfg.Output, storeTimeout)
	}
	return &folderTarget{layout: sink.Layout{Output: cfg.Output}}, nil
}

// newExporter returns the exporter of cfg into target.
func newExporter(cfg config.Config, db *state.DB, target exportTarget, opts Options, log *slog.Logger) *exporter {
	return &exporter{
		cfg: cfg, db: db, log: log, afterStep: opts.AfterPublishStep, target: target, partitionDate: opts.PartitionDate,
		schema: sink.SchemaFor(cfg.Extract.Fields, cfg.Export.Tombstones),
	}
}

// reached reports a step of the publish done (see Options.AfterPublishStep).
func (x *exporter) reached(step PublishStep) error {
	if x.afterStep == nil {
		return nil
	}
	return x.afterStep(step)
}

// decide says whether the run publishes, and if not, why.
func (x *exporter) decide(r *verdict.RunReport) (publish bool, reason string) {
	switch {
	case r.Outcome == verdict.OutcomeFailed:
		return false, reasonFailed
	case r.Outcome == verdict.OutcomePartial && x.cfg.Export.PublishWhen == config.PublishWhenSuccess:
		return false, reasonWithheld
	}
	return true, ""
}

// publish exports the pending versions and fills r.Export. The report's
// JSON goes into the run folder as _verdict.json, so it must be final
// except for Export, which publish sets.
func (x *exporter) publish(ctx context.Context, r *verdict.RunReport) error {
	r.Export = verdict.Export{Files: []string{}}
	ok, reason := x.decide(r)
	if !ok {
		r.Export.Reason = reason
		return nil
	}
	pending, err := x.db.PendingSummary()
	if err != nil {
		return err
	}
	if pending.Count == 0 {
		r.Export.Reason = reasonNothing
		return nil
	}
	return x.target.publish(ctx, x, r, pending.MaxSeq)
}

// write streams the pending versions up to maxSeq into part files in
// store (named where in errors), at most maxFileRows rows each, and
// returns the run's manifest.
func (x *exporter) write(ctx context.Context, store sink.PartStore, where string, maxFileRows int64, maxSeq uint64, r *verdict.RunReport) (sink.Manifest, error) {
	m := sink.Manifest{SchemaVersion: 1, Config: x.cfg.Name, RunID: r.RunID, Format: sink.Format(x.cfg.Export.Format),
		CreatedAt: r.FinishedAt, Schema: x.schema.Fields}
	fs, err := sink.NewFileSetIn(store, where, x.schema, sink.Options{Format: m.Format,
		RowGroupRows: x.cfg.Export.RowGroupRows, MaxFileRows: maxFileRows, Metadata: map[string]string{
			"databrew.config": x.cfg.Name, "databrew.run_id": r.RunID, "databrew.schema_version": "1",
		}})
	if err != nil {
		return m, err
	}
	userFields := len(x.schema.User())
	rows := 0
	var stop error // why the writing stopped, not the state's reading
	err = x.db.ForEachPending(maxSeq, func(v state.Version) error {
		if rows++; rows%1024 == 0 && ctx.Err() != nil {
			// Before the publish is recorded, a signal or the export's
			// time limit abandons it: its items stay pending.
			stop = context.Cause(ctx)
			return stop
		}
		row := sink.Row{Key: v.Key, URL: v.URL, Change: v.Change, RunID: v.RunID, Hash: v.Hash, FetchedAt: v.FetchedAt}
		if v.Change == state.ChangeRemoved {
			row.Values = make([]any, userFields)
		} else if row.Values, err = sink.DecodeValues(x.schema, v.Values); err != nil {
			return fmt.Errorf("item %q: %w", v.Key, err)
		}
		switch v.Change {
		case state.ChangeNew:
			m.Changes.New++
		case state.ChangeChanged:
			m.Changes.Changed++
		case state.ChangeRemoved:
			m.Changes.Removed++
		}
		if err := fs.Write(row); err != nil {
			stop = err
			return err
		}
		return nil
	})
	if stop != nil {
		// Said as it is: the state was read well.
		err = stop
	}
	if err != nil {
		return m, errors.Join(err, fs.Abort())
	}
	if m.Files, err = fs.Close(); err != nil {
		return m, err
	}
	for _, f := range m.Files {
		m.Rows += f.Rows
	}
	return m, nil
}

func fileNames(files []sink.FileInfo) []string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return names
}

// encodeReport is the verdict JSON as every file holds it.
func encodeReport(r verdict.RunReport) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode verdict: %w", err)
	}
	return append(b, '\n'), nil
}
