package publish

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// The shards of a logical run into a table (Output.Table set) follow the
// same protocol as into files, with the output's Storage holding only
// the control files (claims, decisions, shard manifests, verdicts): an
// attempt stages data files no commit references and describes them in
// its shard manifest (shardManifest.Table); the commit decides as for
// files, then adds every decided attempt's data files in one commit of
// the table carrying the logical run's id (Table.CommitStaged, which
// adds nothing the second time), so a reader of the table sees the whole
// logical run or none of it. A _SUCCESS control file, written after the
// table's commit, says the commit is finished. An attempt not chosen has its data files
// removed by its shard's next run (Table.RemoveRun).

// stageTable is Attempt.Stage into a table.
func (a *Attempt) stageTable(ctx context.Context, r *verdict.RunReport, maxSeq uint64) error {
	t := a.p.Out.Table
	pub := state.Publication{Protocol: 2, RunID: a.id, Logical: a.shard.RunID, Shard: a.shard.Name(), MaxSeq: maxSeq,
		Output: a.p.Out.Name, Target: a.p.Out.ID}
	if err := a.p.Ledger.BeginPublish(pub); err != nil {
		return err
	}
	if err := reached(a.p.AfterStep, StepIntent); err != nil {
		return err
	}
	staged, counted, err := stageRows(ctx, t, a.p.Ledger, a.p.Export.Schema, maxSeq, a.id, a.p.log())
	if err != nil {
		return err
	}
	described, files, err := staged.Staged()
	if err != nil {
		return removeFailedRun(ctx, t, a.id, a.p.log(), err)
	}
	pub.Rows = counted.rows
	if err := a.p.Ledger.BeginPublish(pub); err != nil {
		return err
	}
	if err := reached(a.p.AfterStep, StepStaged); err != nil {
		return err
	}
	desc := t.Describe()
	r.Export = verdict.Export{Staged: true, Path: t.Where(), Files: files, Rows: counted.rows, Table: &desc,
		Reason: fmt.Sprintf("staged for the commit of run %s (databrew-stage commit --run-id %s --shards %d)", a.shard.RunID, a.shard.RunID, a.shard.Count)}
	if files == nil {
		r.Export.Files = []string{}
	}
	a.staged = &shardManifest{Staged: true, Rows: int64(counted.rows), Changes: counted.changes, Files: []sink.FileInfo{}, Table: described}
	return nil
}

// isCommitted reports whether the logical run of claim is committed to
// the end: its run folder has _SUCCESS or, for a table, its control
// folder has (written after the table's commit and the run's verdict; a
// run whose table commit landed without it is finished from its
// decision, which adds nothing to the table the second time).
func (c control) isCommitted(ctx context.Context, claim Claim) (bool, error) {
	if c.out.Table != nil {
		_, exists, err := c.out.Storage.Stat(ctx, controlPath(claim.RunID, sink.SuccessFile))
		return exists, err
	}
	return c.hasRunFile(ctx, claim.RunPath(), sink.SuccessFile)
}

// finishTableCommit is finishCommit into a table: every decided attempt's
// data files in one commit of the table carrying the logical run's id,
// then the run's verdict and _SUCCESS among its control files.
func finishTableCommit(ctx context.Context, ctl control, claim Claim, d decision, after func(Step) error) (verdict.RunReport, error) {
	var r verdict.RunReport
	if err := json.Unmarshal(d.Verdict, &r); err != nil {
		return r, fmt.Errorf("run %s: the decision's verdict: %w", claim.RunID, err)
	}
	var staged []json.RawMessage
	rows := 0
	for _, sm := range d.Shards {
		if sm.holdsData() {
			staged = append(staged, sm.Table)
			rows += int(sm.Rows)
		}
	}
	t := ctl.out.Table
	if len(staged) == 0 {
		r.Export = verdict.Export{Files: []string{}, Reason: ReasonNothing}
		return r, nil
	}
	snapshot, files, err := t.CommitStaged(ctx, claim.RunID, staged)
	if err != nil {
		return r, err
	}
	if err := reached(after, StepVisible); err != nil {
		return r, err
	}
	desc := t.Describe()
	desc.SnapshotID = snapshot
	r.Export = verdict.Export{Published: true, Path: t.Where(), Files: files, Rows: rows, Table: &desc}
	vb, err := EncodeVerdict(r)
	if err != nil {
		return r, err
	}
	if err := ctl.put(ctx, claim.RunID, sink.VerdictFile, vb); err != nil {
		return r, err
	}
	if err := ctl.put(ctx, claim.RunID, sink.SuccessFile, nil); err != nil {
		return r, err
	}
	return r, reached(after, StepCompleted)
}
