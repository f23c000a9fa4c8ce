package stage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// folderTarget publishes into a local folder: files are written to a
// staging folder and synced; the publish is recorded in state; the folder
// is renamed into the export root; its _manifest.json and then _SUCCESS
// are written; the state commits.
type folderTarget struct {
	layout sink.Layout
}

// reconcile resolves publishes a crash interrupted: a run folder that
// appeared is completed and committed (never published twice), one that
// did not is forgotten (its versions stay pending), and staging debris is
// removed from both places a run may be staged in. Only the run folder
// decides, never the staging path a publication recorded, so a publish
// staged elsewhere (by an earlier version, or before the output root
// became a mount point) is resolved the same way.
func (f *folderTarget) reconcile(_ context.Context, x *exporter) error {
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
	return sink.RemoveStaging(f.layout, "")
}

// publish writes the run into a staging folder on the output root's file
// system, records the publish, renames the folder into the root, and
// writes its _manifest.json and then _SUCCESS before the state commits.
func (f *folderTarget) publish(ctx context.Context, x *exporter, r *verdict.RunReport, maxSeq uint64) error {
	staging, err := f.layout.Stage(r.RunID)
	if err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	runDir := f.layout.RunDir(x.partitionDay(r), r.RunID)
	if err := x.reached(StepStaging); err != nil {
		return err
	}
	manifest, err := x.write(ctx, &sink.DirParts{Dir: staging}, staging, x.cfg.Export.MaxFileRows, maxSeq, r)
	if err != nil {
		_ = sink.RemoveStaging(f.layout, r.RunID)
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
	pub := state.Publication{RunID: r.RunID, MaxSeq: maxSeq, Dir: runDir, Staging: staging,
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
		return errors.Join(err, x.db.AbortPublish(r.RunID), sink.RemoveStaging(f.layout, r.RunID))
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

// publishedRuns counts the run folders in the output.
func (f *folderTarget) publishedRuns(context.Context) (int, error) {
	dirs, err := filepath.Glob(filepath.Join(f.layout.Output, "dt=*", "run=*"))
	return len(dirs), err
}

// writeVerdict atomically replaces the export root's _verdict.json.
func (f *folderTarget) writeVerdict(_ context.Context, b []byte) error {
	return sink.WriteFileAtomic(f.layout.VerdictPath(), b)
}

func (f *folderTarget) close() error { return nil }
