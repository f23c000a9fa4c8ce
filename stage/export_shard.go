package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// shardTarget is the export of one shard of a logical run — the task
// commit of Hadoop's S3A committers: the shard writes its part files
// where they stay invisible (S3 multipart uploads left open under
// dt=D/run=ID/shard=I-of-N/; a local folder's files in the run's staging
// folder), records them in its state, and leaves a shard manifest with
// its verdict for Commit, the job commit. Its versions stay in flight in
// the state until a later run of the shard learns the logical run's
// fate: committed (they are published) or abandoned (they are pending
// again and go into that run).
type shardTarget struct {
	base  exportTarget
	lake  shardLake
	id    string // the output as publications record it
	shard Shard
	claim runClaim
	clock func() time.Time
	// staged is what publish staged, for the shard manifest.
	staged *shardManifest
}

// openShard claims the logical run (or reads the claim another shard
// made) and checks it is not decided already: ErrCommitted when it was
// committed, ErrAbandoned when a shard gave it up.
func openShard(ctx context.Context, cfg config.Config, opts Options, base exportTarget, startedAt time.Time) (*shardTarget, error) {
	t := &shardTarget{base: base, shard: *opts.Shard, clock: clockOf(opts).Now}
	switch b := base.(type) {
	case *objectTarget:
		if !b.t.HidesParts() {
			return nil, fmt.Errorf("output %s: shards need an output that keeps uploaded parts invisible until the commit (s3://) or a local folder", cfg.Output)
		}
		t.lake, t.id = objectLake{b}, b.t.URL()
	case *folderTarget:
		t.lake = folderLake{root: b.layout.Output}
	default:
		return nil, fmt.Errorf("output %s: shards are not supported there", cfg.Output)
	}
	day := startedAt
	if !opts.PartitionDate.IsZero() {
		day = opts.PartitionDate
	}
	claim, err := claimRun(ctx, t.lake, cfg, t.shard, day)
	if err != nil {
		return nil, err
	}
	if !opts.PartitionDate.IsZero() && claim.PartitionDate != opts.PartitionDate.UTC().Format(time.DateOnly) {
		return nil, fmt.Errorf("run %s publishes into dt=%s, as its first shard claimed (%s); this shard was given --partition-date %s",
			t.shard.RunID, claim.PartitionDate, t.lake.where(controlPath(t.shard.RunID, claimFile)), opts.PartitionDate.UTC().Format(time.DateOnly))
	}
	t.claim = claim
	d, err := readDecision(ctx, t.lake, t.shard.RunID)
	switch {
	case err != nil:
		return nil, err
	case d.Decision == decideCommit:
		return nil, fmt.Errorf("run %s was %w (%s, by %s): shard %s has nothing to do", t.shard.RunID, ErrCommitted, d.At.Format(time.RFC3339), d.By, t.shard.Name())
	case d.Decision == decideAbort:
		return nil, fmt.Errorf("%w: run %s was given up at %s by %s, which took the items it had staged; start a new run id",
			ErrAbandoned, t.shard.RunID, d.At.Format(time.RFC3339), d.By)
	}
	return t, nil
}

// reconcile settles what earlier runs of the shard left in flight, before
// the crawl: its own earlier attempt at this logical run is undone (the
// orchestrator retried it: its work is replaced); an earlier logical run
// is followed to its decision — committed: its versions are published;
// not decided: this shard gives it up (decides abort), so no commit can
// publish it without these versions, which go into this run instead.
func (t *shardTarget) reconcile(ctx context.Context, x *exporter) error {
	pubs, err := x.db.Publishing()
	if err != nil {
		return err
	}
	for _, p := range pubs {
		switch {
		case p.Target != t.id:
			x.log.Warn("a publish into another output was interrupted; its items stay pending for this output",
				"run_id", p.RunID, "was", p.Target+" "+p.Dir)
			if err := x.db.AbortPublish(p.RunID); err != nil {
				return err
			}
		case p.RunID == t.shard.RunID:
			x.log.Warn("replacing what an earlier attempt of this shard staged", "run_id", p.RunID, "shard", t.shard.Name())
			if err := t.undo(ctx, x, p); err != nil {
				return err
			}
		default:
			d, err := decide(ctx, t.lake, p.RunID, decideAbort, fmt.Sprintf("shard %s starting run %s", t.shard.Name(), t.shard.RunID), t.clock())
			if err != nil {
				return err
			}
			if d.Decision == decideCommit {
				if _, err := x.db.CommitPublish(p.RunID); err != nil {
					return err
				}
				continue
			}
			x.log.Warn("an earlier run was not committed; this shard gives it up and its staged items go into this run",
				"run_id", p.RunID, "shard", t.shard.Name())
			if err := t.undo(ctx, x, p); err != nil {
				return err
			}
		}
	}
	if n, err := t.lake.sweep(ctx, t.clock()); err != nil {
		return err
	} else if n > 0 {
		x.log.Warn("aborted the uploads of preflight probes that killed processes left", "uploads", n)
	}
	// A manifest an earlier attempt left, with nothing recorded in flight
	// (it staged nothing, or failed): the commit must not read it while
	// this attempt runs.
	return t.lake.deleteControl(ctx, t.shard.RunID, shardManifestFile(t.shard.Name()))
}

// undo removes what a publication of the shard staged, and forgets it:
// its versions are pending again.
func (t *shardTarget) undo(ctx context.Context, x *exporter, p state.Publication) error {
	if err := t.lake.undoStaged(ctx, p.Dir); err != nil {
		return err
	}
	return x.db.AbortPublish(p.RunID)
}

// publish stages the shard's pending versions: the part files are
// written where readers do not see them, the state records them with
// their upload ids, and the shard manifest (written with the verdict)
// hands them to the commit.
func (t *shardTarget) publish(ctx context.Context, x *exporter, r *verdict.RunReport, maxSeq uint64) error {
	runPath := t.claim.runPath()
	store, dir, uploads := t.lake.shardParts(ctx, t.shard.RunID, t.shard.Name(), runPath)
	pub := state.Publication{RunID: t.shard.RunID, MaxSeq: maxSeq, Target: t.id, Dir: dir}
	if err := x.db.BeginPublish(pub); err != nil {
		return err
	}
	if err := x.reached(StepIntent); err != nil {
		return err
	}
	maxRows := int64(math.MaxInt64) // one part per shard in object storage: fewer uploads to complete
	if _, ok := t.lake.(folderLake); ok {
		maxRows = x.cfg.Export.MaxFileRows
	}
	where := t.lake.where(runPath + "/shard=" + t.shard.Name())
	manifest, err := x.write(ctx, store, where, maxRows, maxSeq, r)
	if err != nil {
		// Undo even when the run was interrupted: nothing of it may stay.
		return errors.Join(fmt.Errorf("write export: %w", err), t.undo(context.WithoutCancel(ctx), x, pub))
	}
	if err := x.reached(StepUploaded); err != nil {
		return err
	}
	if pub.Manifest, err = manifest.Encode(); err != nil {
		return err
	}
	pub.Rows, pub.At, pub.Uploads = int(manifest.Rows), manifest.CreatedAt, uploads()
	if err := x.db.BeginPublish(pub); err != nil {
		return err
	}
	if err := x.reached(StepReady); err != nil {
		return err
	}
	files := make([]string, len(manifest.Files))
	for i, f := range manifest.Files {
		files[i] = "shard=" + t.shard.Name() + "/" + f.Name
	}
	r.Export = verdict.Export{Staged: true, Path: t.lake.where(runPath), Files: files, Rows: int(manifest.Rows),
		Reason: fmt.Sprintf("staged for the commit of run %s (databrew-stage commit --run-id %s --shards %d)", t.shard.RunID, t.shard.RunID, t.shard.Count)}
	t.staged = &shardManifest{Staged: true, Dir: dir, Format: manifest.Format, Rows: manifest.Rows, Changes: manifest.Changes,
		Files: manifest.Files, Uploads: pub.Uploads, Schema: manifest.Schema}
	return nil
}

// writeVerdict writes the shard manifest: the shard's verdict, and what
// it staged. The export root's _verdict.json is the commit's.
func (t *shardTarget) writeVerdict(ctx context.Context, b []byte) error {
	m := shardManifest{Files: []sink.FileInfo{}}
	if t.staged != nil {
		m = *t.staged
	}
	m.SchemaVersion, m.Config, m.RunID, m.Shard, m.Verdict = 1, t.claim.Config, t.shard.RunID, t.shard.Name(), json.RawMessage(b)
	enc, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode shard manifest: %w", err)
	}
	return t.lake.putControl(ctx, t.shard.RunID, shardManifestFile(t.shard.Name()), append(enc, '\n'))
}

func (t *shardTarget) publishedRuns(ctx context.Context) (int, error) {
	return t.base.publishedRuns(ctx)
}

func (t *shardTarget) close() error { return t.base.close() }
