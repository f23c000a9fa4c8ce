package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"time"

	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/verdict"
)

// CommitRequest is what Commit commits.
type CommitRequest struct {
	// Config is the config's name; Count the logical run's shards.
	Config string
	RunID  string
	Count  int
	// WithholdPartial withholds a partial logical run (publish_when =
	// "success").
	WithholdPartial bool
	// At is when the commit started.
	At time.Time
	// AfterStep, when set, is called as the commit completes each of
	// CommitSteps; an error it returns abandons the commit right there,
	// as a crash would.
	AfterStep func(Step) error
	// Log receives the commit's log lines; nil discards them.
	Log *slog.Logger
}

// runManifest is a committed logical run's _manifest.json: the run
// folder's manifest, its files named under their shard folders, and the
// shards it is made of.
type runManifest struct {
	sink.Manifest
	Shards []string `json:"shards"`
}

// Commit is the job commit of a logical run, the fan-in task after its
// shards: it reads every shard's manifest and combines their verdicts
// (see verdict.Combine). When every shard passed, their staged parts are
// all still there, and the run publishes, it decides commit, create-only,
// freezing the manifests it decided on (a shard that gave the run up
// first wins, and the commit fails with ErrAbandoned); then it completes
// those parts, drops every other attempt's, and writes the run folder's
// _verdict.json, _manifest.json and then _SUCCESS, each create-only. When
// a shard failed or is missing, nothing is decided or completed: the
// combined verdict, failed, says why in the output's _verdict.json;
// rerunning that shard and then Commit completes the run. A run decided
// commit before is finished as decided; one committed already is not
// committed again: the error wraps ErrCommitted and the report is the
// run's. The returned report is the logical run's verdict; the error is
// non-nil when the commit could not be made or recorded.
func Commit(ctx context.Context, out Output, req CommitRequest) (verdict.RunReport, error) {
	if req.Log == nil {
		req.Log = slog.New(slog.DiscardHandler)
	}
	ctl, at, runID, count := control{out}, req.At, req.RunID, req.Count
	unusable := func(err error) (verdict.RunReport, error) {
		return verdict.OutputUnusable(req.Config, at, err.Error()), err
	}
	if out.Sweep != nil {
		if n, err := out.Sweep(ctx, at, false); err != nil {
			req.Log.Warn("could not abort the uploads of stale preflight probes", "err", err)
		} else if n > 0 {
			req.Log.Warn("aborted the uploads of preflight probes that killed processes left", "uploads", n)
		}
	}
	claim, err := ctl.readClaim(ctx, runID)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		claim = Claim{Config: req.Config, RunID: runID, Shards: count}
	case err != nil:
		return unusable(err)
	case claim.Shards != count:
		return unusable(fmt.Errorf("%w: run %s was started with %d shards (%s); commit was given --shards %d",
			ErrShardCount, runID, claim.Shards, ctl.where(runID, claimFile), count))
	case claim.Config != req.Config:
		return unusable(fmt.Errorf("run %s in this output was claimed by config %q, not %q (%s)", runID, claim.Config, req.Config, ctl.where(runID, claimFile)))
	}
	if claim.PartitionDate != "" {
		if done, err := ctl.isCommitted(ctx, claim); err != nil {
			return unusable(err)
		} else if done {
			return committed(ctx, ctl, req, claim.RunPath())
		}
	}
	d, err := ctl.readDecision(ctx, runID)
	if err != nil {
		return unusable(err)
	}
	if d.Decision != "" {
		return follow(ctx, ctl, req, claim, d)
	}
	shards, manifests, err := readShards(ctx, ctl, req)
	if err != nil {
		return unusable(err)
	}
	for i, m := range manifests {
		if !m.Staged {
			continue
		}
		if err := checkStaged(ctx, out, claim.RunPath(), m); err != nil {
			// A shard's parts are gone (an upload a lifecycle rule aborted,
			// say): the shard must run again.
			shards[i].Outcome, shards[i].Rule, shards[i].Stop = verdict.OutcomeFailed, 4, verdict.StopError
			shards[i].Detail = fmt.Sprintf("shard %s: what it staged is gone (%v): run it again, then commit", m.Shard, err)
		}
	}
	r := verdict.Combine(req.Config, runID, shards)
	if r.FinishedAt.Before(at) {
		r.FinishedAt = at
	}
	if reason, failed := withhold(req, r, shards); reason != "" {
		// Another commit may have decided meanwhile (and, finishing it,
		// moved what this one found staged): it stands.
		if d, err := ctl.readDecision(ctx, runID); err == nil && d.Decision != "" {
			return follow(ctx, ctl, req, claim, d)
		}
		r.Export = verdict.Export{Files: []string{}, Reason: reason, Failed: failed}
		return r, writeCommitVerdict(ctx, ctl, r, true)
	}
	vb, err := json.Marshal(r)
	if err != nil {
		return r, err
	}
	mine := decision{Decision: decideCommit, By: "commit", At: at, Shards: manifests, Verdict: vb}
	if d, err = ctl.decide(ctx, runID, mine); err != nil {
		return r, err
	}
	if d.Decision != decideCommit || !d.At.Equal(mine.At) || d.By != mine.By {
		return follow(ctx, ctl, req, claim, d) // another process decided first
	}
	if err := reached(req.AfterStep, StepDecided); err != nil {
		return r, err
	}
	return finishAndRecord(ctx, ctl, req, claim, d)
}

// checkStaged reports whether every part a shard manifest lists can
// still be completed (or was): fs.ErrNotExist when one is gone.
func checkStaged(ctx context.Context, out Output, runPath string, m shardManifest) error {
	if out.Table != nil {
		if m.Rows == 0 {
			return nil
		}
		return out.Table.CheckStaged(ctx, m.Table)
	}
	s := out.Storage
	parts, err := m.parts(runPath)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err := s.CheckPart(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// follow answers a commit that finds the run decided by another process:
// given up (see abandoned), or committed (see decidedBefore).
func follow(ctx context.Context, ctl control, req CommitRequest, claim Claim, d decision) (verdict.RunReport, error) {
	if d.Decision == decideAbort {
		return abandoned(ctx, ctl, req, d)
	}
	return decidedBefore(ctx, ctl, req, claim, d)
}

// decidedBefore answers a commit of a run another commit decided: a run
// with nothing to publish is committed already (nothing changes, and the
// error wraps ErrCommitted); one whose parts wait is finished as decided.
func decidedBefore(ctx context.Context, ctl control, req CommitRequest, claim Claim, d decision) (verdict.RunReport, error) {
	staged := false
	for _, m := range d.Shards {
		staged = staged || m.holdsData()
	}
	if !staged {
		var r verdict.RunReport
		if err := json.Unmarshal(d.Verdict, &r); err != nil {
			return r, fmt.Errorf("run %s: the decision's verdict: %w", claim.RunID, err)
		}
		r.Export = verdict.Export{Files: []string{}, Reason: ReasonNothing}
		return r, fmt.Errorf("run %s was %w, at %s (by %s), with nothing to publish: this commit changed nothing",
			claim.RunID, ErrCommitted, d.At.UTC().Format(time.RFC3339), d.By)
	}
	req.Log.Warn("finishing a commit decided before", "run_id", claim.RunID, "decided_at", d.At)
	return finishAndRecord(ctx, ctl, req, claim, d)
}

// ReasonNothing is an export's reason when it had nothing to publish.
const ReasonNothing = "nothing new or changed to publish"

// finishAndRecord finishes a decided commit and writes its verdict as the
// output's. From the decision on a signal or a time limit no longer stops
// the commit: a commit run again would only finish it.
func finishAndRecord(ctx context.Context, ctl control, req CommitRequest, claim Claim, d decision) (verdict.RunReport, error) {
	ctx = context.WithoutCancel(ctx)
	r, err := finishCommit(ctx, ctl, claim, d, req.AfterStep)
	if err != nil {
		return r, fmt.Errorf("commit run %s: the run is decided commit, and a commit run again finishes it: %w", claim.RunID, err)
	}
	b, err := EncodeVerdict(r)
	if err != nil {
		return r, err
	}
	req.Log.Info("committed", "run_id", claim.RunID, "rows", r.Export.Rows, "path", r.Export.Path)
	return r, ctl.out.Storage.Put(ctx, sink.VerdictFile, b)
}

// finishCommit makes a decided commit's parts visible, drops every other
// attempt's, and writes the run folder's _verdict.json, _manifest.json
// and _SUCCESS, all from the decision alone, so any process that finds
// the decision — the commit, run again, or a shard's next run — finishes
// it the same way. A run whose decided shards staged nothing gets no run
// folder. It returns the run's verdict.
func finishCommit(ctx context.Context, ctl control, claim Claim, d decision, after func(Step) error) (verdict.RunReport, error) {
	if ctl.out.Table != nil {
		return finishTableCommit(ctx, ctl, claim, d, after)
	}
	var r verdict.RunReport
	if err := json.Unmarshal(d.Verdict, &r); err != nil {
		return r, fmt.Errorf("run %s: the decision's verdict: %w", claim.RunID, err)
	}
	runPath := claim.RunPath()
	m := runManifest{Manifest: sink.Manifest{SchemaVersion: 1, Config: r.Config, RunID: claim.RunID, CreatedAt: d.At, Files: []sink.FileInfo{}}}
	var parts []Part
	for _, sm := range d.Shards {
		m.Shards = append(m.Shards, sm.Shard)
		if !sm.Staged {
			continue
		}
		ps, err := sm.parts(runPath)
		if err != nil {
			return r, err
		}
		parts = append(parts, ps...)
		m.Format, m.Schema = sm.Format, sm.Schema
		m.Rows += sm.Rows
		m.Changes.New += sm.Changes.New
		m.Changes.Changed += sm.Changes.Changed
		m.Changes.Removed += sm.Changes.Removed
		for _, f := range sm.Files {
			f.Name = ShardFolder(sm.Shard) + "/" + f.Name
			m.Files = append(m.Files, f)
		}
	}
	s := ctl.out.Storage
	if len(m.Files) == 0 {
		r.Export = verdict.Export{Files: []string{}, Reason: ReasonNothing}
		return r, discardOthers(ctx, s, runPath, nil)
	}
	if err := complete(ctx, s, runPath, parts); err != nil {
		return r, err
	}
	if err := discardOthers(ctx, s, runPath, parts); err != nil {
		return r, err
	}
	if err := reached(after, StepVisible); err != nil {
		return r, err
	}
	r.Export = verdict.Export{Published: true, Path: ctl.out.Where(runPath), Files: fileNames(m.Files), Rows: int(m.Rows)}
	vb, err := EncodeVerdict(r)
	if err != nil {
		return r, err
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return r, err
	}
	if err := putRunFiles(ctx, s, runPath, vb, append(mb, '\n')); err != nil {
		return r, err
	}
	return r, reached(after, StepCompleted)
}

// discardOthers aborts every staged part of the run folder but the
// decided ones: no other attempt's can ever be completed.
func discardOthers(ctx context.Context, s Storage, runPath string, decided []Part) error {
	_, err := s.AbortStaged(ctx, runPath+"/", func(st Staged) bool {
		return OwnKey(st.Key) && !slices.ContainsFunc(decided, func(p Part) bool { return p.Key == st.Key && (p.Token == "" || p.Token == st.Token) })
	})
	return err
}

// readShards reads every shard's manifest and verdict, by index; a shard
// without one gets verdict.MissingShard (and no manifest in the list).
func readShards(ctx context.Context, ctl control, req CommitRequest) ([]verdict.RunReport, []shardManifest, error) {
	shards := make([]verdict.RunReport, req.Count)
	var manifests []shardManifest
	for i := range req.Count {
		name := ShardRef{Index: i, Count: req.Count}.Name()
		b, err := ctl.read(ctx, req.RunID, shardManifestFile(name))
		if errors.Is(err, fs.ErrNotExist) {
			shards[i] = verdict.MissingShard(req.Config, req.RunID, i, req.Count, req.At)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		var m shardManifest
		where := ctl.where(req.RunID, shardManifestFile(name))
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
func withhold(req CommitRequest, r verdict.RunReport, shards []verdict.RunReport) (reason string, failed bool) {
	for _, s := range shards {
		if s.Export.Failed && s.Started {
			return fmt.Sprintf("the export of shard %s failed, so nothing is committed: run it again, then commit (%s)", s.Shard, s.Export.Reason), true
		}
	}
	switch {
	case r.Outcome == verdict.OutcomeFailed:
		return "the logical run failed, so nothing is committed; the shards' staged items wait: run the failed or missing shard again, then commit", false
	case r.Outcome == verdict.OutcomePartial && req.WithholdPartial:
		return `publish_when = "success" withholds a partial run: nothing is committed`, false
	}
	return "", false
}

// abandoned is the verdict of a commit that found the run given up. The
// output's _verdict.json is left alone: it may describe the later run
// that took the items.
func abandoned(ctx context.Context, ctl control, req CommitRequest, d decision) (verdict.RunReport, error) {
	err := fmt.Errorf("%w: run %s was given up at %s by %s, which took the items it had staged into a later run",
		ErrAbandoned, req.RunID, d.At.Format(time.RFC3339), d.By)
	r := verdict.OutputUnusable(req.Config, req.At, err.Error())
	r.RunID, r.Started, r.Rule = req.RunID, true, 4
	r.Export = verdict.Export{Files: []string{}, Failed: true, Reason: err.Error()}
	return r, errors.Join(err, writeCommitVerdict(ctx, ctl, r, false))
}

// writeCommitVerdict writes the verdict of a commit that published
// nothing into the run's control folder, and, when root is set, as the
// output's _verdict.json.
func writeCommitVerdict(ctx context.Context, ctl control, r verdict.RunReport, root bool) error {
	b, err := EncodeVerdict(r)
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	err = ctl.put(ctx, r.RunID, sink.VerdictFile, b)
	if root {
		err = errors.Join(err, ctl.out.Storage.Put(ctx, sink.VerdictFile, b))
	}
	return err
}

// committed is the answer of a commit of a run that has its _SUCCESS:
// the run's verdict as committed (a commit task retried after it
// succeeded hands on the same verdict), and ErrCommitted, saying when.
func committed(ctx context.Context, ctl control, req CommitRequest, runPath string) (verdict.RunReport, error) {
	var r verdict.RunReport
	var b []byte
	var err error
	where := ctl.out.Where(runPath + "/" + sink.SuccessFile)
	if ctl.out.Table != nil {
		// A table's run has its verdict and _SUCCESS among control files.
		b, err = ctl.read(ctx, req.RunID, sink.VerdictFile)
		where = ctl.where(req.RunID, sink.SuccessFile)
	} else {
		b, err = ctl.out.Storage.Read(ctx, runPath+"/"+sink.VerdictFile)
	}
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil || r.Validate() != nil {
		r = verdict.RunReport{Config: req.Config, RunID: req.RunID, SchemaVersion: verdict.SchemaVersion, StartedAt: req.At, FinishedAt: req.At,
			Started: true, Crawl: verdict.Crawl{Stop: verdict.StopQueueEmpty, Gaps: []verdict.Gap{}, Breaker: verdict.Breaker{Events: []verdict.BreakerEvent{}}},
			Outcome: verdict.OutcomeSuccess, Export: verdict.Export{Published: true, Path: ctl.out.Where(runPath), Files: []string{}}}
		if ctl.out.Table != nil {
			r.Export.Path = ctl.out.Table.Where()
		}
	}
	when := ""
	if d, err := ctl.readDecision(ctx, req.RunID); err == nil && d.Decision == decideCommit {
		when = fmt.Sprintf(", at %s (by %s)", d.At.UTC().Format(time.RFC3339), d.By)
	}
	return r, fmt.Errorf("run %s was %w%s: this commit changed nothing (%s)", req.RunID, ErrCommitted, when, where)
}
