package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"
	"time"

	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// objectTarget publishes into object storage, which has no rename:
//
//  1. one transaction records the intent (run id, the versions up to
//     maxSeq, the run's key prefix);
//  2. the part is written to its final key, create-only; on S3 its
//     multipart upload is left uncompleted, so no reader lists it;
//  3. a second transaction records the manifest, the run's verdict and
//     the upload ids: from here a crash is rolled forward, not back;
//  4. the part is completed with If-None-Match: *, then _verdict.json,
//     _manifest.json and _SUCCESS are written create-only (_SUCCESS is the
//     commit point; finding it there means an earlier attempt committed);
//  5. one transaction marks the versions published.
//
// A run is one part file (max_file_rows applies to local folders only):
// completing one upload is atomic, so a reader listing *.parquet sees all
// of a run or none of it.
type objectTarget struct {
	t *objstore.Target
}

// openObjectTarget opens the output, each request bounded by
// storeTimeout, and proves it usable (see objstore.Target.Preflight)
// before anything is crawled.
func openObjectTarget(ctx context.Context, output string, storeTimeout time.Duration) (*objectTarget, error) {
	t, err := objstore.OpenWith(ctx, output, objstore.Options{CallTimeout: storeTimeout})
	if err != nil {
		return nil, err
	}
	if err := t.Preflight(ctx); err != nil {
		_ = t.Close()
		return nil, err
	}
	return &objectTarget{t: t}, nil
}

// where names a run prefix in errors, the log and the verdict: the
// output's URL without its query, and the prefix, without a trailing
// slash, as a run folder's path has none (export.path is the same shape
// for a folder and an object store).
func (o *objectTarget) where(runPrefix string) string {
	base, _, _ := strings.Cut(o.t.URL(), "?")
	return strings.TrimSuffix(strings.TrimSuffix(base, "/")+"/"+strings.TrimPrefix(runPrefix, o.t.Prefix()), "/")
}

// publishedRuns is 1 when the output holds a committed run (a run
// prefix with its _SUCCESS), else 0: the listing stops at the first, so
// it does not grow with the output's history.
func (o *objectTarget) publishedRuns(ctx context.Context) (int, error) {
	found, err := o.t.HasKey(ctx, o.t.Key("dt="), func(k string) bool {
		return strings.HasSuffix(k, "/"+sink.SuccessFile) && strings.Contains(k, "/run=")
	})
	if !found {
		return 0, err
	}
	return 1, err
}

// reconcile resolves the publishes a crash interrupted: one without its
// manifest is rolled back (its uploads aborted, anything under its prefix
// deleted; its versions stay pending), one with it is rolled forward.
// Then every multipart upload the stage's protocol left under the output
// is aborted (see abortOwnUploads): no publish of this state owns it any
// more. Other applications' uploads are left alone.
func (o *objectTarget) reconcile(ctx context.Context, x *exporter) error {
	pubs, err := x.db.Publishing()
	if err != nil {
		return err
	}
	for _, p := range pubs {
		switch {
		case p.Target != o.t.URL():
			// A publish into another output (the config changed, or a
			// local folder): its versions go to this one.
			x.log.Warn("a publish into another output was interrupted; its items stay pending for this output",
				"run_id", p.RunID, "was", p.Target+" "+p.Dir)
			if err := x.db.AbortPublish(p.RunID); err != nil {
				return err
			}
		case !p.HasManifest():
			x.log.Warn("publish interrupted before its part was uploaded; its items stay pending", "run_id", p.RunID)
			if err := o.rollBack(ctx, x, p); err != nil {
				return err
			}
		default:
			x.log.Warn("completing a publish interrupted after its part was uploaded", "run_id", p.RunID, "prefix", o.where(p.Dir))
			if err := o.commit(ctx, x, p); err != nil {
				return err
			}
		}
	}
	n, err := abortOwnUploads(ctx, o.t, time.Now())
	if n > 0 {
		x.log.Warn("aborted multipart uploads no publish owns under the output", "uploads", n)
	}
	return err
}

// rollBack removes what a publish left under its prefix and forgets it:
// its versions stay pending.
func (o *objectTarget) rollBack(ctx context.Context, x *exporter, p state.Publication) error {
	if _, err := o.t.AbortUploads(ctx, p.Dir, ownUpload); err != nil {
		return err
	}
	if _, err := o.t.DeletePrefix(ctx, p.Dir); err != nil {
		return err
	}
	return x.db.AbortPublish(p.RunID)
}

// publish writes the run's part under its prefix and commits it.
func (o *objectTarget) publish(ctx context.Context, x *exporter, r *verdict.RunReport, maxSeq uint64) error {
	runPrefix := o.t.Key(sink.RunPath(x.partitionDay(r), r.RunID) + "/")
	pub := state.Publication{RunID: r.RunID, MaxSeq: maxSeq, Target: o.t.URL(), Dir: runPrefix}
	if err := x.db.BeginPublish(pub); err != nil {
		return err
	}
	if err := x.reached(StepIntent); err != nil {
		return err
	}
	parts := o.t.Parts(ctx, runPrefix)
	manifest, err := x.write(ctx, objectParts{parts}, o.where(runPrefix), math.MaxInt64, maxSeq, r)
	if err != nil && (errors.Is(err, objstore.ErrTimeout) || o.t.Unanswered()) {
		// The store does not answer: undoing would wait for it again.
		// The state keeps the intent, so the next run's reconcile rolls
		// the publish back, as after a crash.
		return fmt.Errorf("write export (the next run removes what it left): %w", err)
	}
	if err != nil {
		// Undo even when the run was interrupted: nothing of it may stay.
		return errors.Join(fmt.Errorf("write export: %w", err), o.rollBack(context.WithoutCancel(ctx), x, pub))
	}
	if err := x.reached(StepUploaded); err != nil {
		return err
	}
	r.Export = verdict.Export{Published: true, Path: o.where(runPrefix), Files: fileNames(manifest.Files), Rows: int(manifest.Rows)}
	if pub.Verdict, err = encodeReport(*r); err != nil {
		return err
	}
	if pub.Manifest, err = manifest.Encode(); err != nil {
		return err
	}
	pub.Rows, pub.At, pub.Uploads = int(manifest.Rows), manifest.CreatedAt, parts.UploadIDs()
	if err := x.db.BeginPublish(pub); err != nil {
		return err
	}
	if err := x.reached(StepReady); err != nil {
		return err
	}
	// From here the run is committed, not abandoned: a signal or the
	// export's time limit no longer stops it.
	return o.commit(context.WithoutCancel(ctx), x, pub)
}

// commit completes a ready publish: its part becomes visible, then its
// _verdict.json, _manifest.json and _SUCCESS are written, each only when
// absent, so a second attempt never overwrites the first; the state
// commits last. A part that is gone (its upload aborted and no object)
// rolls the publish back: its versions stay pending.
func (o *objectTarget) commit(ctx context.Context, x *exporter, p state.Publication) error {
	var m sink.Manifest
	if err := json.Unmarshal(p.Manifest, &m); err != nil {
		return fmt.Errorf("publication %s: manifest: %w", p.RunID, err)
	}
	for _, f := range m.Files {
		err := o.t.CompletePart(ctx, p.Dir+f.Name, p.Uploads[f.Name], f.Bytes)
		if errors.Is(err, fs.ErrNotExist) {
			x.log.Warn("a part of an interrupted publish is gone; the publish is rolled back and its items stay pending",
				"run_id", p.RunID, "part", o.where(p.Dir+f.Name))
			return o.rollBack(ctx, x, p)
		}
		if err != nil {
			return err
		}
	}
	if err := x.reached(StepVisible); err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{{sink.VerdictFile, p.Verdict}, {sink.ManifestFile, p.Manifest}, {sink.SuccessFile, nil}}
	for _, f := range files {
		if f.name == sink.VerdictFile && len(f.data) == 0 {
			continue
		}
		if _, err := o.t.PutIfAbsent(ctx, p.Dir+f.name, f.data); err != nil {
			return err
		}
	}
	if err := x.reached(StepCompleted); err != nil {
		return err
	}
	_, err := x.db.CommitPublish(p.RunID)
	return err
}

// writeVerdict replaces the output's _verdict.json.
func (o *objectTarget) writeVerdict(ctx context.Context, b []byte) error {
	return o.t.Put(ctx, o.t.Key(sink.VerdictFile), b)
}

func (o *objectTarget) close() error { return o.t.Close() }

// objectParts is a run prefix's parts as the sink's PartStore.
type objectParts struct{ *objstore.Parts }

// Create starts the part file name.
func (p objectParts) Create(name string) (sink.PartWriter, error) { return p.Parts.Create(name) }
