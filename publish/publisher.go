package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"time"

	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// Publisher publishes a state's pending versions into an Output, all or
// nothing and exactly once, by one protocol whatever the Storage (see
// Steps): the state records the intent; the parts are staged where
// readers do not see them and recorded; the publish is decided; the parts
// are completed; the run folder's _verdict.json, _manifest.json and then
// _SUCCESS are written create-only; the state commits. A run of the whole
// config is a logical run of one shard committed in the same process
// (Publish); shards stage their attempts (StageShard) for Commit, which
// decides the logical run. A crash at any step is resolved by the next
// Reconcile (or a shard's Settle), so every version reaches exactly one
// published run folder.
type Publisher struct {
	Out    Output
	Ledger Ledger
	Export Export
	// Log receives what reconciling does; nil discards it.
	Log *slog.Logger
	// AfterStep, when set, is called as a publish completes each step; an
	// error it returns abandons the publish right there, as a crash would.
	AfterStep func(Step) error
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (p *Publisher) log() *slog.Logger {
	if p.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Log
}

func (p *Publisher) now() time.Time {
	if p.Now == nil {
		return time.Now()
	}
	return p.Now()
}

// reached reports a step done.
func reached(after func(Step) error, s Step) error {
	if after == nil {
		return nil
	}
	return after(s)
}

// maxFileRows is the rows a part may hold in this output (see
// Export.MaxFileRows).
func (p *Publisher) maxFileRows() int64 {
	if p.Out.Storage.Caps().CompletesAtOnce && p.Export.MaxFileRows > 0 {
		return p.Export.MaxFileRows
	}
	return math.MaxInt64
}

// Publish publishes the pending versions up to maxSeq as the run r of the
// whole config, into the run folder of day, and fills r.Export. The
// report's JSON becomes the run folder's _verdict.json, so it must be
// final except for Export, which Publish sets. Until the publish is
// decided a signal or ctx's deadline abandons it (its items stay
// pending); from there it is finished.
func (p *Publisher) Publish(ctx context.Context, r *verdict.RunReport, day time.Time, maxSeq uint64) error {
	pub := state.Publication{Protocol: 2, RunID: r.RunID, MaxSeq: maxSeq, Output: p.Out.Name, Target: p.Out.ID,
		Dir: RunPath(day, r.RunID)}
	m, err := p.stage(ctx, &pub, r)
	if err != nil {
		return err
	}
	r.Export = verdict.Export{Published: true, Path: p.Out.Where(pub.Dir), Files: fileNames(m.Files), Rows: int(m.Rows)}
	if pub.Verdict, err = EncodeVerdict(*r); err != nil {
		return err
	}
	pub.Decided = true
	if err := p.Ledger.BeginPublish(pub); err != nil {
		return err
	}
	if err := reached(p.AfterStep, StepDecided); err != nil {
		return err
	}
	return p.finish(context.WithoutCancel(ctx), pub, p.AfterStep)
}

// stage records pub's intent, writes the versions into parts staged under
// its prefix, and records them: the steps StepIntent and StepStaged.
// What a failure leaves is undone, unless the store stopped answering:
// then the intent stays, and the next reconcile undoes it.
func (p *Publisher) stage(ctx context.Context, pub *state.Publication, r *verdict.RunReport) (sink.Manifest, error) {
	if err := p.Ledger.BeginPublish(*pub); err != nil {
		return sink.Manifest{}, err
	}
	if err := reached(p.AfterStep, StepIntent); err != nil {
		return sink.Manifest{}, err
	}
	prefix := partsPrefix(pub.Dir, pub.Shard, attemptOf(*pub))
	store := newStagedParts(ctx, p.Out.Storage, prefix)
	where := p.Out.Where(pub.Dir)
	if pub.Shard != "" {
		where = p.Out.Where(pub.Dir + "/" + ShardFolder(pub.Shard))
	}
	m, err := p.write(ctx, store, where, p.maxFileRows(), pub.MaxSeq, r)
	if err != nil && errors.Is(err, ErrNoAnswer) {
		// Undoing would wait for the store again: the state keeps the
		// intent, so the next run's reconcile rolls the publish back.
		return m, fmt.Errorf("write export (the next run removes what it left): %w", err)
	}
	if err != nil {
		// Undo even when the run was interrupted: nothing of it may stay.
		return m, errors.Join(fmt.Errorf("write export: %w", err), p.rollBack(context.WithoutCancel(ctx), *pub))
	}
	if pub.Manifest, err = m.Encode(); err != nil {
		return m, err
	}
	pub.Parts, pub.Rows, pub.At = store.parts(m.Files), int(m.Rows), m.CreatedAt
	if err := p.Ledger.BeginPublish(*pub); err != nil {
		return m, err
	}
	return m, reached(p.AfterStep, StepStaged)
}

// attemptOf is the attempt a shard's publication names; "" for a run of
// the whole config.
func attemptOf(pub state.Publication) string {
	if pub.Logical == "" {
		return ""
	}
	return pub.RunID
}

// rollBack removes what an undecided publish staged and forgets it: its
// versions stay pending.
func (p *Publisher) rollBack(ctx context.Context, pub state.Publication) error {
	if err := p.unstage(ctx, pub); err != nil {
		return err
	}
	return p.Ledger.AbortPublish(pub.RunID)
}

// unstage removes what a publication staged, finished or not: staged
// parts under its prefix, and, where parts are objects once finished, the
// objects there.
func (p *Publisher) unstage(ctx context.Context, pub state.Publication) error {
	if p.Out.Table != nil {
		_, err := p.Out.Table.RemoveRun(ctx, pub.RunID)
		return err
	}
	prefix := partsPrefix(pub.Dir, pub.Shard, attemptOf(pub))
	if _, err := p.Out.Storage.AbortStaged(ctx, prefix, ownStaged(prefix)); err != nil {
		return err
	}
	_, err := p.Out.Storage.DeletePrefix(ctx, prefix)
	return err
}

// finish completes a decided publish of a run of the whole config — its
// parts become visible, then its run files are written — and commits it
// in the state. A part that is gone (aborted by a lifecycle rule, say)
// rolls it back: its versions stay pending.
func (p *Publisher) finish(ctx context.Context, pub state.Publication, after func(Step) error) error {
	err := complete(ctx, p.Out.Storage, pub.Dir, partsOf(pub.Parts))
	if errors.Is(err, fs.ErrNotExist) {
		p.log().Warn("a part of an interrupted publish is gone; the publish is rolled back and its items stay pending",
			"run_id", pub.RunID, "run", p.Out.Where(pub.Dir))
		return p.rollBack(ctx, pub)
	}
	if err != nil {
		return err
	}
	if err := reached(after, StepVisible); err != nil {
		return err
	}
	if err := putRunFiles(ctx, p.Out.Storage, pub.Dir, pub.Verdict, pub.Manifest); err != nil {
		return err
	}
	if err := reached(after, StepCompleted); err != nil {
		return err
	}
	_, err = p.Ledger.CommitPublish(pub.RunID)
	return err
}

// complete makes parts visible in the run folder runPath: all at once
// where the Storage can, else one by one, each looked at again a few
// times before an error stands, since another process finishing the same
// decision may be completing it right then (a store can answer that a
// staged part is gone before its object appears). Another object at a
// key, or a store that does not answer, is no such moment.
func complete(ctx context.Context, s Storage, runPath string, parts []Part) error {
	if len(parts) == 0 {
		return nil
	}
	if s.Caps().CompletesAtOnce {
		return s.CompleteFolder(ctx, runPath+"/", parts)
	}
	for _, part := range parts {
		wait := 50 * time.Millisecond
		for try := 0; ; try++ {
			err := s.CompletePart(ctx, part)
			if err == nil {
				break
			}
			if errors.Is(err, fs.ErrExist) || errors.Is(err, ErrNoAnswer) || try == 7 {
				return err
			}
			select {
			case <-ctx.Done():
				return err
			case <-time.After(wait):
			}
			wait *= 2
		}
	}
	return nil
}

// putRunFiles writes a run folder's _verdict.json (when there is one),
// _manifest.json and _SUCCESS, each only when absent, so a second attempt
// never overwrites the first; _SUCCESS, last, is the commit point readers
// wait for.
func putRunFiles(ctx context.Context, s Storage, runPath string, verdictJSON, manifest []byte) error {
	files := []struct {
		name string
		data []byte
	}{{sink.VerdictFile, verdictJSON}, {sink.ManifestFile, manifest}, {sink.SuccessFile, nil}}
	for _, f := range files {
		if f.name != sink.SuccessFile && len(f.data) == 0 {
			continue
		}
		if _, err := s.PutIfAbsent(ctx, runPath+"/"+f.name, f.data); err != nil {
			return err
		}
	}
	return nil
}

// PutVerdict replaces the output's _verdict.json.
func (p *Publisher) PutVerdict(ctx context.Context, b []byte) error {
	return p.Out.Storage.Put(ctx, sink.VerdictFile, b)
}

// EncodeVerdict is a verdict's JSON as every file holds it.
func EncodeVerdict(r verdict.RunReport) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode verdict: %w", err)
	}
	return append(b, '\n'), nil
}

func fileNames(files []sink.FileInfo) []string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return names
}
