package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/verdict"
)

// CommitOptions are what a caller adds to a config for one commit.
type CommitOptions struct {
	// Clock defaults to the system clock.
	Clock interface{ Now() time.Time }
	// Logger receives the commit's log lines; nil discards them.
	Logger *slog.Logger
	// StoreTimeout bounds each request to an output in object storage,
	// as Options.StoreTimeout does a run's; 0 means
	// objstore.DefaultCallTimeout.
	StoreTimeout time.Duration
	// AfterCommitStep, when set, is called as the commit completes each
	// of its steps (StepDecided, StepVisible, StepCompleted); an error it
	// returns abandons the commit right there, as a crash would.
	AfterCommitStep func(PublishStep) error
}

// StepDecided: the commit's decision is written; the parts are completed
// next. From here the logical run is committed, and a commit run again,
// or any shard's next run, finishes it.
const StepDecided PublishStep = "decided"

// runManifest is a committed logical run's _manifest.json: the run
// folder's manifest, its files named under their shard folders, and the
// shards it is made of.
type runManifest struct {
	sink.Manifest
	Shards []string `json:"shards"`
}

// Commit is the job commit of a logical run of count shards of cfg, the
// fan-in task after the shards: it reads every shard's manifest and
// combines their verdicts (see verdict.Combine). When every shard passed,
// their staged parts are all still there, and the run publishes, it
// decides commit, create-only, freezing the manifests it decided on (a
// shard that gave the run up first wins, and the commit fails with
// ErrAbandoned); then it completes those parts (on S3, the multipart
// uploads; in a local folder, renames into dt=D/run=ID), drops every
// other attempt's, and writes the run folder's _verdict.json,
// _manifest.json and then _SUCCESS, each create-only. When a shard
// failed or is missing, nothing is decided or completed: the combined
// verdict, failed, says why in the export root's _verdict.json; rerunning
// that shard and then Commit completes the run. A run decided commit
// before is finished as decided; one committed already is not committed
// again: the error wraps ErrCommitted and the report is the run's. The
// returned report is the logical run's verdict; the error is non-nil when
// the commit could not be made or recorded.
func Commit(ctx context.Context, cfg config.Config, runID string, count int, opts CommitOptions) (verdict.RunReport, error) {
	now := time.Now
	if opts.Clock != nil {
		now = opts.Clock.Now
	}
	log := opts.Logger
	if log == nil {
		log = discard
	}
	at := now().UTC()
	if err := (Shard{Count: count, RunID: runID}).Valid(); err != nil {
		return verdict.OutputUnusable(cfg.Name, at, err.Error()), err
	}
	target, err := openTarget(ctx, cfg, opts.StoreTimeout)
	if err != nil {
		logStoreAnswer(log, err)
		err = fmt.Errorf("%s: %w: %w", cfg.Name, ErrOutput, err)
		return verdict.OutputUnusable(cfg.Name, at, err.Error()), err
	}
	defer target.close()
	lake, err := lakeOf(target)
	if err != nil {
		return verdict.OutputUnusable(cfg.Name, at, err.Error()), err
	}
	if n, err := lake.sweep(ctx, at); err != nil {
		log.Warn("could not abort the uploads of stale preflight probes", "err", err)
	} else if n > 0 {
		log.Warn("aborted the uploads of preflight probes that killed processes left", "uploads", n)
	}
	claim, err := readClaim(ctx, lake, runID)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		claim = runClaim{Config: cfg.Name, RunID: runID, Shards: count}
	case err != nil:
		return verdict.OutputUnusable(cfg.Name, at, err.Error()), err
	case claim.Shards != count:
		err := fmt.Errorf("%w: run %s was started with %d shards (%s); commit was given --shards %d",
			ErrShardCount, runID, claim.Shards, lake.where(controlPath(runID, claimFile)), count)
		return verdict.OutputUnusable(cfg.Name, at, err.Error()), err
	case claim.Config != cfg.Name:
		err := fmt.Errorf("run %s in this output was claimed by config %q, not %q (%s)", runID, claim.Config, cfg.Name, lake.where(controlPath(runID, claimFile)))
		return verdict.OutputUnusable(cfg.Name, at, err.Error()), err
	}
	if claim.PartitionDate != "" {
		if done, err := lake.hasRunFile(ctx, claim.runPath(), sink.SuccessFile); err != nil {
			return verdict.OutputUnusable(cfg.Name, at, err.Error()), err
		} else if done {
			return committed(ctx, lake, cfg, runID, claim.runPath(), at)
		}
	}
	d, err := readDecision(ctx, lake, runID)
	if err != nil {
		return verdict.OutputUnusable(cfg.Name, at, err.Error()), err
	}
	if d.Decision != "" {
		return follow(ctx, lake, cfg, claim, d, at, opts, log)
	}
	shards, manifests, err := readShards(ctx, lake, cfg, runID, count, at)
	if err != nil {
		return verdict.OutputUnusable(cfg.Name, at, err.Error()), err
	}
	for i, m := range manifests {
		if !m.Staged {
			continue
		}
		if err := lake.checkStaged(ctx, runID, claim.runPath(), m); err != nil {
			// A shard's parts are gone (an upload a lifecycle rule aborted,
			// say): the shard must run again.
			shards[i].Outcome, shards[i].Rule, shards[i].Stop = verdict.OutcomeFailed, 4, verdict.StopError
			shards[i].Detail = fmt.Sprintf("shard %s: what it staged is gone (%v): run it again, then commit", m.Shard, err)
		}
	}
	r := verdict.Combine(cfg.Name, runID, shards)
	if r.FinishedAt.Before(at) {
		r.FinishedAt = at
	}
	if reason, failed := withhold(cfg, r, shards); reason != "" {
		// Another commit may have decided meanwhile (and, finishing it,
		// moved what this one found staged): it stands.
		if d, err := readDecision(ctx, lake, runID); err == nil && d.Decision != "" {
			return follow(ctx, lake, cfg, claim, d, at, opts, log)
		}
		r.Export = verdict.Export{Files: []string{}, Reason: reason, Failed: failed}
		return r, writeCommitVerdict(ctx, lake, r, true)
	}
	vb, err := json.Marshal(r)
	if err != nil {
		return r, err
	}
	mine := decision{Decision: decideCommit, By: "commit", At: at, Shards: manifests, Verdict: vb}
	if d, err = decide(ctx, lake, runID, mine); err != nil {
		return r, err
	}
	if d.Decision != decideCommit || !d.At.Equal(mine.At) || d.By != mine.By {
		return follow(ctx, lake, cfg, claim, d, at, opts, log) // another process decided first
	}
	if opts.AfterCommitStep != nil {
		if err := opts.AfterCommitStep(StepDecided); err != nil {
			return r, err
		}
	}
	return finishAndRecord(ctx, lake, claim, d, opts, log)
}

// follow answers a commit that finds the run decided by another process:
// given up (see abandoned), or committed (see decidedBefore).
func follow(ctx context.Context, lake shardLake, cfg config.Config, claim runClaim, d decision, at time.Time, opts CommitOptions, log *slog.Logger) (verdict.RunReport, error) {
	if d.Decision == decideAbort {
		return abandoned(ctx, lake, cfg, claim.RunID, at, d)
	}
	return decidedBefore(ctx, lake, claim, d, opts, log)
}

// decidedBefore answers a commit of a run another commit decided: a run
// with nothing to publish is committed already (nothing changes, and the
// error wraps ErrCommitted); one whose parts wait is finished as decided.
func decidedBefore(ctx context.Context, lake shardLake, claim runClaim, d decision, opts CommitOptions, log *slog.Logger) (verdict.RunReport, error) {
	staged := false
	for _, m := range d.Shards {
		staged = staged || (m.Staged && len(m.Files) > 0)
	}
	if !staged {
		var r verdict.RunReport
		if err := json.Unmarshal(d.Verdict, &r); err != nil {
			return r, fmt.Errorf("run %s: the decision's verdict: %w", claim.RunID, err)
		}
		r.Export = verdict.Export{Files: []string{}, Reason: reasonNothing}
		return r, fmt.Errorf("run %s was %w, at %s (by %s), with nothing to publish: this commit changed nothing",
			claim.RunID, ErrCommitted, d.At.UTC().Format(time.RFC3339), d.By)
	}
	log.Warn("finishing a commit decided before", "run_id", claim.RunID, "decided_at", d.At)
	return finishAndRecord(ctx, lake, claim, d, opts, log)
}

// finishAndRecord finishes a decided commit and writes its verdict as the
// export root's. From the decision on a signal or a time limit no longer
// stops the commit: a commit run again would only finish it.
func finishAndRecord(ctx context.Context, lake shardLake, claim runClaim, d decision, opts CommitOptions, log *slog.Logger) (verdict.RunReport, error) {
	ctx = context.WithoutCancel(ctx)
	r, err := finishCommitSteps(ctx, lake, claim, d, opts.AfterCommitStep)
	if err != nil {
		return r, fmt.Errorf("commit run %s: the run is decided commit, and a commit run again finishes it: %w", claim.RunID, err)
	}
	b, err := encodeReport(r)
	if err != nil {
		return r, err
	}
	log.Info("committed", "run_id", claim.RunID, "rows", r.Export.Rows, "path", r.Export.Path)
	return r, lake.putVerdict(ctx, b)
}

// finishCommitSteps makes a decided commit's parts visible, drops every
// other attempt's, and writes the run folder's _verdict.json,
// _manifest.json and _SUCCESS, all from the decision alone, so any
// process that finds the decision — the commit, run again, or a shard's
// next run — finishes it the same way. A run whose decided shards staged
// nothing gets no run folder. It returns the run's verdict.
func finishCommitSteps(ctx context.Context, lake shardLake, claim runClaim, d decision, step func(PublishStep) error) (verdict.RunReport, error) {
	var r verdict.RunReport
	if err := json.Unmarshal(d.Verdict, &r); err != nil {
		return r, fmt.Errorf("run %s: the decision's verdict: %w", claim.RunID, err)
	}
	runPath := claim.runPath()
	m := runManifest{Manifest: sink.Manifest{SchemaVersion: 1, Config: r.Config, RunID: claim.RunID, CreatedAt: d.At, Files: []sink.FileInfo{}}}
	for _, sm := range d.Shards {
		m.Shards = append(m.Shards, sm.Shard)
		if !sm.Staged {
			continue
		}
		m.Format, m.Schema = sm.Format, sm.Schema
		m.Rows += sm.Rows
		m.Changes.New += sm.Changes.New
		m.Changes.Changed += sm.Changes.Changed
		m.Changes.Removed += sm.Changes.Removed
		for _, f := range sm.Files {
			f.Name = shardFolder(sm.Shard) + "/" + f.Name
			m.Files = append(m.Files, f)
		}
	}
	if len(m.Files) == 0 {
		r.Export = verdict.Export{Files: []string{}, Reason: reasonNothing}
		return r, lake.discardOthers(ctx, claim.RunID, runPath, d.Shards)
	}
	if err := lake.completeRun(ctx, claim.RunID, runPath, d.Shards); err != nil {
		return r, err
	}
	if err := lake.discardOthers(ctx, claim.RunID, runPath, d.Shards); err != nil {
		return r, err
	}
	if step != nil {
		if err := step(StepVisible); err != nil {
			return r, err
		}
	}
	r.Export = verdict.Export{Published: true, Path: lake.where(runPath), Files: fileNames(m.Files), Rows: int(m.Rows)}
	vb, err := encodeReport(r)
	if err != nil {
		return r, err
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return r, err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{sink.VerdictFile, vb}, {sink.ManifestFile, append(mb, '\n')}, {sink.SuccessFile, nil}} {
		if err := lake.putRunFile(ctx, runPath, f.name, f.data); err != nil {
			return r, err
		}
	}
	if step != nil {
		if err := step(StepCompleted); err != nil {
			return r, err
		}
	}
	return r, nil
}

// readShards reads every shard's manifest and verdict, by index; a shard
// without one gets verdict.MissingShard (and no manifest in the list).
func readShards(ctx context.Context, lake shardLake, cfg config.Config, runID string, count int, at time.Time) ([]verdict.RunReport, []shardManifest, error) {
	shards := make([]verdict.RunReport, count)
	var manifests []shardManifest
	for i := range count {
		name := Shard{Index: i, Count: count}.Name()
		b, err := lake.readControl(ctx, runID, shardManifestFile(name))
		if errors.Is(err, fs.ErrNotExist) {
			shards[i] = verdict.MissingShard(cfg.Name, runID, i, count, at)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		var m shardManifest
		where := lake.where(controlPath(runID, shardManifestFile(name)))
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", where, err)
		}
		if err := json.Unmarshal(m.Verdict, &shards[i]); err != nil {
			return nil, nil, fmt.Errorf("%s: verdict: %w", where, err)
		}
		if err := shards[i].Validate(); err != nil {
			return nil, nil, fmt.Errorf("%s: verdict: %w", where, err)
		}
		shards[i].Shard = name
		manifests = append(manifests, m)
	}
	return shards, manifests, nil
}

// withhold says why the logical run does not publish, or "": a failed
// run (a shard failed or is missing), a shard whose export failed with an
// error (failed: the commit fails downstream as a run whose export failed
// does), or a partial run under publish_when = "success".
func withhold(cfg config.Config, r verdict.RunReport, shards []verdict.RunReport) (reason string, failed bool) {
	for _, s := range shards {
		if s.Export.Failed && s.Started {
			return fmt.Sprintf("the export of shard %s failed, so nothing is committed: run it again, then commit (%s)", s.Shard, s.Export.Reason), true
		}
	}
	switch {
	case r.Outcome == verdict.OutcomeFailed:
		return "the logical run failed, so nothing is committed; the shards' staged items wait: run the failed or missing shard again, then commit", false
	case r.Outcome == verdict.OutcomePartial && cfg.Export.PublishWhen == config.PublishWhenSuccess:
		return `publish_when = "success" withholds a partial run: nothing is committed`, false
	}
	return "", false
}

// abandoned is the verdict of a commit that found the run given up. The
// export root's _verdict.json is left alone: it may describe the later
// run that took the items.
func abandoned(ctx context.Context, lake shardLake, cfg config.Config, runID string, at time.Time, d decision) (verdict.RunReport, error) {
	err := fmt.Errorf("%w: run %s was given up at %s by %s, which took the items it had staged into a later run",
		ErrAbandoned, runID, d.At.Format(time.RFC3339), d.By)
	r := verdict.OutputUnusable(cfg.Name, at, err.Error())
	r.RunID, r.Started, r.Rule = runID, true, 4
	r.Export = verdict.Export{Files: []string{}, Failed: true, Reason: err.Error()}
	return r, errors.Join(err, writeCommitVerdict(ctx, lake, r, false))
}

// writeCommitVerdict writes the verdict of a commit that published
// nothing into the run's control folder, and, when root is set, as the
// export root's _verdict.json.
func writeCommitVerdict(ctx context.Context, lake shardLake, r verdict.RunReport, root bool) error {
	b, err := encodeReport(r)
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	err = lake.putControl(ctx, r.RunID, sink.VerdictFile, b)
	if root {
		err = errors.Join(err, lake.putVerdict(ctx, b))
	}
	return err
}

// committed is the answer of a commit of a run that has its _SUCCESS:
// the run's verdict as committed (a commit task retried after it
// succeeded hands on the same verdict), and ErrCommitted, saying when.
func committed(ctx context.Context, lake shardLake, cfg config.Config, runID, runPath string, at time.Time) (verdict.RunReport, error) {
	var r verdict.RunReport
	b, err := lake.readRunFile(ctx, runPath, sink.VerdictFile)
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil || r.Validate() != nil {
		r = verdict.RunReport{Config: cfg.Name, RunID: runID, SchemaVersion: verdict.SchemaVersion, StartedAt: at, FinishedAt: at,
			Started: true, Crawl: verdict.Crawl{Stop: verdict.StopQueueEmpty, Gaps: []verdict.Gap{}, Breaker: verdict.Breaker{Events: []verdict.BreakerEvent{}}},
			Outcome: verdict.OutcomeSuccess, Export: verdict.Export{Published: true, Path: lake.where(runPath), Files: []string{}}}
	}
	when := ""
	if d, err := readDecision(ctx, lake, runID); err == nil && d.Decision == decideCommit {
		when = fmt.Sprintf(", at %s (by %s)", d.At.UTC().Format(time.RFC3339), d.By)
	}
	return r, fmt.Errorf("run %s was %w%s: this commit changed nothing (%s)", runID, ErrCommitted, when, lake.where(runPath+"/"+sink.SuccessFile))
}
