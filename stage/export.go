package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

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

// exporter publishes one run's pending item versions with the publish
// protocol: files are written to a staging folder and synced; the publish
// is recorded in state; the folder is renamed into the export root; its
// _manifest.json and then _SUCCESS are written; the state commits. A crash
// at any step is resolved by reconcile on the next run, so every version
// reaches exactly one published folder.
type exporter struct {
	cfg    config.Config
	db     *state.DB
	layout sink.Layout
	schema sink.Schema
	log    *slog.Logger
	// afterStep is Options.AfterPublishStep.
	afterStep func(PublishStep) error
}

func newExporter(cfg config.Config, db *state.DB, opts Options, log *slog.Logger) *exporter {
	return &exporter{
		cfg: cfg, db: db, log: log, afterStep: opts.AfterPublishStep,
		layout: sink.Layout{Output: cfg.Output},
		schema: sink.SchemaFor(cfg.Extract.Fields, cfg.Export.Tombstones),
	}
}

// reconcile resolves publishes a crash interrupted: a run folder that
// appeared is completed and committed (never published twice), one that
// did not is forgotten (its versions stay pending), and staging debris is
// removed from both places a run may be staged in. Only the run folder
// decides, never the staging path a publication recorded, so a publish
// staged elsewhere (by an earlier version, or before the output root
// became a mount point) is resolved the same way.
func (x *exporter) reconcile() error {
	pubs, err := x.db.Publishing()
	if err != nil {
		return err
	}
	for _, p := range pubs {
		if !sink.Exists(p.Dir) {
			x.log.Warn("publish interrupted before its folder appeared; its items stay pending", "run_id", p.RunID)
			if err := x.db.AbortPublish(p.RunID); err != nil {
				return err
			}
			continue
		}
		if !sink.IsComplete(p.Dir) {
			x.log.Warn("completing a publish interrupted after its folder appeared", "run_id", p.RunID, "dir", p.Dir)
			if err := sink.Complete(p.Dir, p.Manifest); err != nil {
				return err
			}
		}
		if _, err := x.db.CommitPublish(p.RunID); err != nil {
			return err
		}
	}
	return sink.RemoveStaging(x.layout, "")
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
	staging, err := x.layout.Stage(r.RunID)
	if err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	runDir := x.layout.RunDir(r.StartedAt, r.RunID)
	if err := x.reached(StepStaging); err != nil {
		return err
	}
	manifest, err := x.write(ctx, staging, pending.MaxSeq, r)
	if err != nil {
		_ = sink.RemoveStaging(x.layout, r.RunID)
		return fmt.Errorf("write export: %w", err)
	}
	r.Export = verdict.Export{Published: true, Path: runDir, Files: fileNames(manifest.Files), Rows: int(manifest.Rows)}
	verdictJSON, err := encodeReport(*r)
	if err != nil {
		return err
	}
	manifestJSON, err := manifest.Encode()
	if err != nil {
		return err
	}
	if err := sink.WriteFileAtomic(filepath.Join(staging, sink.VerdictFile), verdictJSON); err != nil {
		return err
	}
	if err := x.reached(StepStaged); err != nil {
		return err
	}
	pub := state.Publication{RunID: r.RunID, MaxSeq: pending.MaxSeq, Dir: runDir, Staging: staging,
		Manifest: manifestJSON, Rows: int(manifest.Rows), At: manifest.CreatedAt}
	if err := x.db.BeginPublish(pub); err != nil {
		return err
	}
	if err := x.reached(StepRecorded); err != nil {
		return err
	}
	if err := sink.Promote(staging, runDir); err != nil {
		if sink.Exists(runDir) {
			return err // the folder is visible: reconcile completes and commits it
		}
		return errors.Join(err, x.db.AbortPublish(r.RunID), sink.RemoveStaging(x.layout, r.RunID))
	}
	if err := x.reached(StepRenamed); err != nil {
		return err
	}
	if err := sink.SyncPromoted(staging, runDir); err != nil {
		return err // the folder is visible: reconcile completes and commits it
	}
	if err := x.reached(StepPromoted); err != nil {
		return err
	}
	if err := sink.Complete(runDir, manifestJSON); err != nil {
		return err // the folder is visible: reconcile completes it
	}
	if err := x.reached(StepCompleted); err != nil {
		return err
	}
	_, err = x.db.CommitPublish(r.RunID)
	return err
}

// write streams the pending versions up to maxSeq into part files in dir.
func (x *exporter) write(ctx context.Context, dir string, maxSeq uint64, r *verdict.RunReport) (sink.Manifest, error) {
	m := sink.Manifest{SchemaVersion: 1, Config: x.cfg.Name, RunID: r.RunID, Format: sink.Format(x.cfg.Export.Format),
		CreatedAt: r.FinishedAt, Schema: x.schema.Fields}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return m, fmt.Errorf("create %s: %w", dir, err)
	}
	fs, err := sink.NewFileSet(dir, x.schema, sink.Options{Format: m.Format,
		RowGroupRows: x.cfg.Export.RowGroupRows, MaxFileRows: x.cfg.Export.MaxFileRows, Metadata: map[string]string{
			"databrew.config": x.cfg.Name, "databrew.run_id": r.RunID, "databrew.schema_version": "1",
		}})
	if err != nil {
		return m, err
	}
	userFields := len(x.schema.User())
	rows := 0
	err = x.db.ForEachPending(maxSeq, func(v state.Version) error {
		if rows++; rows%1024 == 0 && ctx.Err() != nil {
			// Before the publish is recorded, a signal or the deadline
			// abandons it: its items stay pending.
			return context.Cause(ctx)
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
		return fs.Write(row)
	})
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
