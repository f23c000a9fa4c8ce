package stage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

// shardTarget is the export of one attempt of one shard of a logical run
// — the task commit of Hadoop's S3A committers: the attempt writes its
// part files where they stay invisible (S3 multipart uploads left open
// under dt=D/run=ID/shard=I-of-N/, named for the attempt; a local
// folder's files in the run's staging folder), records them in its state
// as a publication of its own, and leaves a shard manifest with its
// verdict for Commit, the job commit, which decides on one attempt per
// shard. An attempt's parts are never undone while a commit may still
// choose them: a retried shard stages anew beside them, and the run's
// decision settles both — the state publishes the versions the decided
// attempt held, and the others' parts go.
type shardTarget struct {
	base    exportTarget
	lake    shardLake
	shard   Shard
	attempt string
	claim   runClaim
	clock   func() time.Time
	// storeTimeout is Options.StoreTimeout, for an output the config
	// named before.
	storeTimeout time.Duration
	// staged is what publish staged, for the shard manifest.
	staged *shardManifest
}

// openShard claims the logical run (or reads the claim another shard
// made) and checks it is not decided already: ErrCommitted when it was
// committed (whatever partition this shard was given), ErrAbandoned when
// a shard gave it up.
func openShard(ctx context.Context, cfg config.Config, opts Options, base exportTarget, startedAt time.Time) (*shardTarget, error) {
	lake, err := lakeOf(base)
	if err != nil {
		return nil, err
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	t := &shardTarget{base: base, lake: lake, shard: *opts.Shard, attempt: hex.EncodeToString(rnd[:]), clock: clockOf(opts).Now,
		storeTimeout: opts.StoreTimeout}
	day := startedAt
	if !opts.PartitionDate.IsZero() {
		day = opts.PartitionDate
	}
	claim, err := claimRun(ctx, t.lake, cfg, t.shard, day, startedAt)
	if err != nil {
		return nil, err
	}
	t.claim = claim
	d, err := readDecision(ctx, t.lake, t.shard.RunID)
	switch {
	case err != nil:
		return nil, err
	case d.Decision == decideCommit:
		return nil, committedShard(claim, d)
	case !opts.PartitionDate.IsZero() && claim.PartitionDate != opts.PartitionDate.UTC().Format(time.DateOnly):
		return nil, fmt.Errorf("run %s publishes into dt=%s, as its first shard claimed (%s); this shard was given --partition-date %s",
			t.shard.RunID, claim.PartitionDate, t.lake.where(controlPath(t.shard.RunID, claimFile)), opts.PartitionDate.UTC().Format(time.DateOnly))
	case d.Decision == decideAbort:
		return nil, fmt.Errorf("%w: run %s was given up at %s by %s, which took the items it had staged; start a new run id",
			ErrAbandoned, t.shard.RunID, d.At.Format(time.RFC3339), d.By)
	}
	return t, nil
}

// reconcile settles, before the crawl, what earlier attempts of the
// shard left staged (see settle), in the output each was staged in. Then
// it withdraws the shard's manifest of this run, if an earlier attempt
// left one: a commit from now on waits for this attempt's.
func (t *shardTarget) reconcile(ctx context.Context, x *exporter) error {
	pubs, err := x.db.Publishing()
	if err != nil {
		return err
	}
	for _, p := range pubs {
		if err := t.settleIn(ctx, x, p); err != nil {
			return err
		}
	}
	if n, err := t.lake.sweep(ctx, t.clock()); err != nil {
		return err
	} else if n > 0 {
		x.log.Warn("aborted the uploads of preflight probes that killed processes left", "uploads", n)
	}
	return t.lake.deleteControl(ctx, t.shard.RunID, shardManifestFile(t.shard.Name()))
}

// settleIn settles a publication in the output it was staged in: this
// run's, or the one the config named before.
func (t *shardTarget) settleIn(ctx context.Context, x *exporter, p state.Publication) error {
	if p.Logical == "" {
		// A whole-config publish cannot be in a shard's state; forget it.
		return x.db.AbortPublish(p.RunID)
	}
	if p.Target == t.lake.id() {
		return t.settle(ctx, x, t.lake, p)
	}
	x.log.Warn("settling what an earlier attempt staged in the output the config named then", "run_id", p.Logical, "output", p.Output)
	old, err := openTarget(ctx, config.Config{Output: p.Output}, t.storeTimeout)
	if err != nil {
		return fmt.Errorf("shard %s staged run %s in output %s, which the config named then: %w; "+
			"make it usable again, or start over with --reset-state", t.shard.Name(), p.Logical, p.Output, err)
	}
	defer old.close()
	lake, err := lakeOf(old)
	if err != nil {
		return err
	}
	return t.settle(ctx, x, lake, p)
}

// settle follows a staged attempt p to its logical run's decision:
//
//   - committed with p as the shard's attempt: the commit is finished if
//     nothing has finished it yet (its parts completed, _SUCCESS
//     written), and p's versions are published in the state;
//   - committed with another attempt, or given up: p's parts go, and its
//     versions stay pending (the decided attempt, if any, held them or
//     is settled beside it);
//   - not decided, and p is an earlier attempt at this very run (the
//     orchestrator retried the shard): p stays staged, for a commit may
//     still choose it; this attempt stages anew beside it;
//   - not decided, and p is of an earlier run: this shard gives that run
//     up (decides abort, unless a commit decides first), and p's
//     versions go into this run.
func (t *shardTarget) settle(ctx context.Context, x *exporter, lake shardLake, p state.Publication) error {
	d, err := readDecision(ctx, lake, p.Logical)
	if err != nil {
		return err
	}
	if d.Decision == "" {
		if p.Logical == t.shard.RunID && lake.id() == t.lake.id() {
			x.log.Info("an earlier attempt of this shard at this run stays staged until the run is decided",
				"run_id", p.Logical, "shard", t.shard.Name(), "attempt", p.RunID)
			return nil
		}
		d, err = decide(ctx, lake, p.Logical, decision{Decision: decideAbort, At: t.clock().UTC(),
			By: fmt.Sprintf("shard %s starting run %s", t.shard.Name(), t.shard.RunID)})
		if err != nil {
			return err
		}
		if d.Decision == decideAbort {
			x.log.Warn("an earlier run was not committed; this shard gives it up and its staged items go into this run",
				"run_id", p.Logical, "shard", t.shard.Name())
		}
	}
	if m, ok := d.chose(t.shard.Name()); d.Decision == decideCommit && ok && m.Attempt == p.RunID {
		claim, err := readClaim(ctx, lake, p.Logical)
		if err != nil {
			return err
		}
		done, err := lake.hasRunFile(ctx, claim.runPath(), sink.SuccessFile)
		if err != nil {
			return err
		}
		if !done {
			x.log.Warn("finishing the commit of an earlier run, decided but not completed", "run_id", p.Logical)
			r, err := finishCommitSteps(ctx, lake, claim, d, nil)
			if err != nil {
				return fmt.Errorf("run %s was decided commit but could not be completed (%w); if its parts are gone "+
					"(a lifecycle rule aborted the uploads), the run cannot be completed: remove what of it is visible and start this shard over with --reset-state", p.Logical, err)
			}
			if b, err := encodeReport(r); err == nil {
				if err := lake.putVerdict(ctx, b); err != nil {
					x.log.Warn("write the output's _verdict.json for the run this shard finished", "run_id", p.Logical, "err", err)
				}
			}
		}
		_, err = x.db.CommitPublish(p.RunID)
		return err
	}
	if err := lake.undoStaged(ctx, p.Dir); err != nil {
		return err
	}
	return x.db.AbortPublish(p.RunID)
}

// publish stages the shard's pending versions: the part files are
// written where readers do not see them, the state records them with
// their upload ids under the attempt's name, and the shard manifest
// (written with the verdict) hands them to the commit.
func (t *shardTarget) publish(ctx context.Context, x *exporter, r *verdict.RunReport, maxSeq uint64) error {
	runPath := t.claim.runPath()
	store, dir, finalName, uploads := t.lake.attemptParts(ctx, t.shard.RunID, runPath, t.shard.Name(), t.attempt)
	pub := state.Publication{RunID: t.attempt, Logical: t.shard.RunID, MaxSeq: maxSeq, Target: t.lake.id(), Output: x.cfg.Output, Dir: dir}
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
	manifest, err := x.write(ctx, store, t.lake.where(runPath+"/"+shardFolder(t.shard.Name())), maxRows, maxSeq, r)
	if err != nil {
		// Undo even when the run was interrupted: nothing of it may stay.
		cleanup := context.WithoutCancel(ctx)
		return errors.Join(fmt.Errorf("write export: %w", err), t.lake.undoStaged(cleanup, dir), x.db.AbortPublish(t.attempt))
	}
	if err := x.reached(StepUploaded); err != nil {
		return err
	}
	for i := range manifest.Files {
		manifest.Files[i].Name = finalName(manifest.Files[i].Name)
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
		files[i] = shardFolder(t.shard.Name()) + "/" + f.Name
	}
	r.Export = verdict.Export{Staged: true, Path: t.lake.where(runPath), Files: files, Rows: int(manifest.Rows),
		Reason: fmt.Sprintf("staged for the commit of run %s (databrew-stage commit --run-id %s --shards %d)", t.shard.RunID, t.shard.RunID, t.shard.Count)}
	t.staged = &shardManifest{Staged: true, Format: manifest.Format, Rows: manifest.Rows, Changes: manifest.Changes,
		Files: manifest.Files, Uploads: pub.Uploads, Schema: manifest.Schema}
	return nil
}

// writeVerdict writes the shard manifest: the attempt's verdict, and what
// it staged. The export root's _verdict.json is the commit's.
func (t *shardTarget) writeVerdict(ctx context.Context, b []byte) error {
	m := shardManifest{Files: []sink.FileInfo{}}
	if t.staged != nil {
		m = *t.staged
	}
	m.SchemaVersion, m.Config, m.RunID, m.Shard, m.Attempt, m.Verdict = 1, t.claim.Config, t.shard.RunID, t.shard.Name(), t.attempt, json.RawMessage(b)
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
