package publish

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// Attempt is one attempt of one shard of a logical run — the task commit
// of Hadoop's S3A committers: it stages its parts where they stay
// invisible (named for the attempt in the shard's folder of the run
// folder), records them in its state as a publication of its own, and
// leaves a shard manifest with its verdict for Commit, the job commit,
// which decides on one attempt per shard. An attempt's parts are never
// undone while a commit may still choose them: a retried shard stages
// anew beside them, and the run's decision settles both — the state
// publishes the versions the decided attempt held, and the others' parts
// go.
type Attempt struct {
	p     *Publisher
	ctl   control
	shard ShardRef
	id    string
	claim Claim
	// openOther opens an output the config named before, to settle what
	// an earlier attempt staged there.
	openOther func(ctx context.Context, name string) (Output, error)
	staged    *shardManifest
}

// OpenShard claims the logical run of shard s (or reads the claim
// another shard made), for the partition day, and checks it is not
// decided already: ErrCommitted when it was committed, ErrAbandoned when
// a shard gave it up. dayGiven says day is the orchestrator's, which
// must then agree with the claim. openOther opens an output the config
// named before (see Attempt.Settle). Outputs whose staged parts readers
// would see cannot take shards.
func OpenShard(ctx context.Context, p *Publisher, s ShardRef, day time.Time, dayGiven bool,
	openOther func(ctx context.Context, name string) (Output, error)) (*Attempt, error) {
	if !p.Out.Storage.Caps().HidesParts {
		return nil, fmt.Errorf("output %s: shards need an output that keeps staged parts invisible until the commit (s3://) or a local folder", p.Out.Name)
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	a := &Attempt{p: p, ctl: control{p.Out}, shard: s, id: hex.EncodeToString(rnd[:]), openOther: openOther}
	claim, err := a.ctl.claimRun(ctx, p.Export.Config, s, day, p.now())
	if err != nil {
		return nil, err
	}
	a.claim = claim
	d, err := a.ctl.readDecision(ctx, s.RunID)
	switch {
	case err != nil:
		return nil, err
	case d.Decision == decideCommit:
		return nil, committedShard(claim, d)
	case dayGiven && claim.PartitionDate != day.UTC().Format(time.DateOnly):
		return nil, fmt.Errorf("run %s publishes into dt=%s, as its first shard claimed (%s); this shard was given --partition-date %s",
			s.RunID, claim.PartitionDate, a.ctl.where(s.RunID, claimFile), day.UTC().Format(time.DateOnly))
	case d.Decision == decideAbort:
		return nil, fmt.Errorf("%w: run %s was given up at %s by %s, which took the items it had staged; start a new run id",
			ErrAbandoned, s.RunID, d.At.Format(time.RFC3339), d.By)
	}
	return a, nil
}

// committedShard is the error of a shard run given the id of a logical
// run committed already: it did nothing, and says when the run was
// committed and how to crawl again.
func committedShard(claim Claim, d decision) error {
	return fmt.Errorf("run %s was %w, at %s (by %s), into dt=%s: a committed run takes no more shard runs, and this one did nothing "+
		"(what the run published stands). A run id names one logical run: give each logical run a new run id, the same in "+
		"its shards and its commit, such as its start time (in Airflow {{ ts_nodash }}, which a new DAG run changes)",
		claim.RunID, ErrCommitted, d.At.UTC().Format(time.RFC3339), d.By, claim.PartitionDate)
}

// Settle is the shard's reconcile, before the crawl: it settles what
// earlier attempts of the shard left staged (see settle), in the output
// each was staged in, sweeps what killed processes left, and withdraws
// the shard's manifest of this run, if an earlier attempt left one: a
// commit from now on waits for this attempt's.
func (a *Attempt) Settle(ctx context.Context) error {
	pubs, err := a.p.Ledger.Publishing()
	if err != nil {
		return err
	}
	for _, pub := range pubs {
		if err := a.settleIn(ctx, pub); err != nil {
			return err
		}
	}
	if err := a.p.sweep(ctx, false); err != nil {
		return err
	}
	return a.ctl.delete(ctx, a.shard.RunID, shardManifestFile(a.shard.Name()))
}

// settleIn settles a publication in the output it was staged in: this
// run's, or the one the config named before.
func (a *Attempt) settleIn(ctx context.Context, pub state.Publication) error {
	if pub.Logical == "" {
		// A whole-config publish cannot be in a shard's state; forget it.
		return a.p.Ledger.AbortPublish(pub.RunID)
	}
	if up, here := a.p.upgrade(ctx, pub); here {
		return a.settle(ctx, a.p, up)
	}
	a.p.log().Warn("settling what an earlier attempt staged in the output the config named then", "run_id", pub.Logical, "output", pub.Output)
	out, err := a.openOther(ctx, pub.Output)
	if err != nil {
		return fmt.Errorf("shard %s staged run %s in output %s, which the config named then: %w; "+
			"make it usable again, or start over with --reset-state", a.shard.Name(), pub.Logical, pub.Output, err)
	}
	defer out.Close()
	old := *a.p
	old.Out = out
	up, here := old.upgrade(ctx, pub)
	if !here {
		return fmt.Errorf("shard %s staged run %s in output %s, which does not know it: start over with --reset-state", a.shard.Name(), pub.Logical, pub.Output)
	}
	return a.settle(ctx, &old, up)
}

// settle follows a staged attempt pub to its logical run's decision, in
// the output of p:
//
//   - committed with pub as the shard's attempt: the commit is finished if
//     nothing has finished it yet (its parts completed, _SUCCESS
//     written), and pub's versions are published in the state;
//   - committed with another attempt, or given up: pub's parts go, and
//     its versions stay pending (the decided attempt, if any, held them
//     or is settled beside it);
//   - not decided, and pub is an earlier attempt at this very run (the
//     orchestrator retried the shard): pub stays staged, for a commit may
//     still choose it; this attempt stages anew beside it;
//   - not decided, and pub is of an earlier run: this shard gives that
//     run up (decides abort, unless a commit decides first), and pub's
//     versions go into this run.
func (a *Attempt) settle(ctx context.Context, p *Publisher, pub state.Publication) error {
	ctl := control{p.Out}
	d, err := ctl.readDecision(ctx, pub.Logical)
	if err != nil {
		return err
	}
	if d.Decision == "" {
		if pub.Logical == a.shard.RunID && p.Out.ID == a.p.Out.ID {
			p.log().Info("an earlier attempt of this shard at this run stays staged until the run is decided",
				"run_id", pub.Logical, "shard", a.shard.Name(), "attempt", pub.RunID)
			return nil
		}
		d, err = ctl.decide(ctx, pub.Logical, decision{Decision: decideAbort, At: a.p.now().UTC(),
			By: fmt.Sprintf("shard %s starting run %s", a.shard.Name(), a.shard.RunID)})
		if err != nil {
			return err
		}
		if d.Decision == decideAbort {
			p.log().Warn("an earlier run was not committed; this shard gives it up and its staged items go into this run",
				"run_id", pub.Logical, "shard", a.shard.Name())
		}
	}
	if m, ok := d.chose(a.shard.Name()); d.Decision == decideCommit && ok && m.Attempt == pub.RunID {
		claim, err := ctl.readClaim(ctx, pub.Logical)
		if err != nil {
			return err
		}
		done, err := ctl.isCommitted(ctx, claim)
		if err != nil {
			return err
		}
		if !done {
			p.log().Warn("finishing the commit of an earlier run, decided but not completed", "run_id", pub.Logical)
			r, err := finishCommit(ctx, ctl, claim, d, nil)
			if err != nil {
				return fmt.Errorf("run %s was decided commit but could not be completed (%w); if its parts are gone "+
					"(a lifecycle rule aborted the uploads), the run cannot be completed: remove what of it is visible and start this shard over with --reset-state", pub.Logical, err)
			}
			if b, err := EncodeVerdict(r); err == nil {
				if err := p.PutVerdict(ctx, b); err != nil {
					p.log().Warn("write the output's _verdict.json for the run this shard finished", "run_id", pub.Logical, "err", err)
				}
			}
		}
		_, err = a.p.Ledger.CommitPublish(pub.RunID)
		return err
	}
	if err := unstageAttempt(ctx, p, pub); err != nil {
		return err
	}
	return a.p.Ledger.AbortPublish(pub.RunID)
}

// unstageAttempt removes what an attempt staged: its parts, or the
// folder an earlier release staged a local folder's attempt in.
func unstageAttempt(ctx context.Context, p *Publisher, pub state.Publication) error {
	if pub.Shard == "" {
		_, err := p.Out.Storage.DeletePrefix(ctx, pub.Dir+"/")
		return err
	}
	return p.unstage(ctx, pub)
}

// Stage stages the shard's pending versions up to maxSeq for the commit
// and fills r.Export: the parts are written where readers do not see
// them, and the state records them under the attempt's name (StepIntent,
// StepStaged); PutManifest then hands them to the commit.
func (a *Attempt) Stage(ctx context.Context, r *verdict.RunReport, maxSeq uint64) error {
	if a.p.Out.Table != nil {
		return a.stageTable(ctx, r, maxSeq)
	}
	runPath := a.claim.RunPath()
	pub := state.Publication{Protocol: 2, RunID: a.id, Logical: a.shard.RunID, Shard: a.shard.Name(), MaxSeq: maxSeq,
		Output: a.p.Out.Name, Target: a.p.Out.ID, Dir: runPath}
	m, err := a.p.stage(ctx, &pub, r)
	if err != nil {
		return err
	}
	files := make([]sink.FileInfo, len(m.Files))
	names := make([]string, len(m.Files))
	for i, f := range m.Files {
		f.Name = a.id + "-" + f.Name
		files[i], names[i] = f, ShardFolder(a.shard.Name())+"/"+f.Name
	}
	r.Export = verdict.Export{Staged: true, Path: a.p.Out.Where(runPath), Files: names, Rows: int(m.Rows),
		Reason: fmt.Sprintf("staged for the commit of run %s (databrew-stage commit --run-id %s --shards %d)", a.shard.RunID, a.shard.RunID, a.shard.Count)}
	a.staged = &shardManifest{Staged: true, Format: m.Format, Rows: m.Rows, Changes: m.Changes,
		Files: files, Parts: pub.Parts, Schema: m.Schema}
	return nil
}

// PutManifest writes the shard manifest: the attempt's verdict b, and
// what it staged. The output's _verdict.json is the commit's.
func (a *Attempt) PutManifest(ctx context.Context, b []byte) error {
	m := shardManifest{Files: []sink.FileInfo{}}
	if a.staged != nil {
		m = *a.staged
	}
	m.SchemaVersion, m.Config, m.RunID, m.Shard, m.Attempt, m.Verdict = 1, a.claim.Config, a.shard.RunID, a.shard.Name(), a.id, json.RawMessage(b)
	enc, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode shard manifest: %w", err)
	}
	return a.ctl.put(ctx, a.shard.RunID, shardManifestFile(a.shard.Name()), append(enc, '\n'))
}
