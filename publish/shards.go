package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
)

// ErrShardCount matches the error of a shard or a commit whose shard
// count differs from the one its logical run was started with.
var ErrShardCount = errors.New("shard count changed")

// ErrCommitted matches the error of a shard, or a commit, of a logical
// run committed already: nothing is done again.
var ErrCommitted = errors.New("committed already")

// ErrAbandoned matches the error of a shard or a commit of a logical run
// that a shard gave up: it started a later run, which took the items it
// had staged, so this run can no longer be committed.
var ErrAbandoned = errors.New("logical run abandoned")

// ShardRef names one shard of a logical run.
type ShardRef struct {
	Index, Count int
	RunID        string
}

// Name is the shard's name in folders, keys and verdicts: "2-of-4".
func (s ShardRef) Name() string { return fmt.Sprintf("%d-of-%d", s.Index, s.Count) }

// Claim is a logical run's _run.json: the first shard to start writes it,
// create-only, and every other shard and the commit read it, so all
// agree on the shard count and the partition the run publishes into.
type Claim struct {
	Config        string    `json:"config"`
	RunID         string    `json:"run_id"`
	Shards        int       `json:"shards"`
	PartitionDate string    `json:"partition_date"`
	CreatedAt     time.Time `json:"created_at"`
}

// RunPath is the run folder the logical run publishes into.
func (c Claim) RunPath() string { return "dt=" + c.PartitionDate + "/run=" + c.RunID }

// decision is a logical run's _decision.json: commit or abort, written
// once, create-only, by the commit (commit) or by a shard that starts a
// later run while this one holds some of its items staged (abort).
// Whoever comes second follows the first. A commit freezes what it
// decided on: the manifest of each shard's attempt it publishes and the
// combined verdict, so finishing it (a commit run again, or a shard's
// next run) publishes exactly that, whatever a shard wrote since.
type decision struct {
	Decision string    `json:"decision"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	// Shards are the decided attempts' manifests, by shard index.
	Shards []shardManifest `json:"shards,omitempty"`
	// Verdict is the logical run's combined verdict, its export section
	// aside.
	Verdict json.RawMessage `json:"verdict,omitempty"`
}

// chose returns the decided manifest of shard, if the decision is a
// commit.
func (d decision) chose(shard string) (shardManifest, bool) {
	for _, m := range d.Shards {
		if m.Shard == shard {
			return m, true
		}
	}
	return shardManifest{}, false
}

// The decisions, and the names of a logical run's control files.
const (
	decideCommit = "commit"
	decideAbort  = "abort"

	claimFile    = "_run.json"
	decisionFile = "_decision.json"
)

// shardManifestFile is the control file a shard writes for the commit.
func shardManifestFile(shard string) string { return "shard-" + shard + ".json" }

// shardManifest is what one shard leaves for the commit: its verdict and
// the parts it staged (not visible), with their rows, sizes and checksums
// (Files, named in the shard's folder) and where and how they are staged
// (Parts).
type shardManifest struct {
	SchemaVersion int    `json:"schema_version"`
	Config        string `json:"config"`
	RunID         string `json:"run_id"`
	Shard         string `json:"shard"`
	// Attempt names the shard's attempt at the run that wrote the
	// manifest; its parts' names carry it.
	Attempt string          `json:"attempt"`
	Verdict json.RawMessage `json:"verdict"`
	Staged  bool            `json:"staged"`
	Format  sink.Format     `json:"format,omitempty"`
	Rows    int64           `json:"rows"`
	Changes sink.Changes    `json:"changes"`
	Files   []sink.FileInfo `json:"files"`
	Parts   []state.Part    `json:"parts,omitempty"`
	// Uploads holds the S3 upload id of each file by name, in a manifest
	// an earlier release wrote (its Parts are empty).
	Uploads map[string]string `json:"uploads,omitempty"`
	Schema  []sink.Column     `json:"schema,omitempty"`
	// Table describes the data files the attempt staged in a table
	// (Output.Table), for Table.CommitStaged.
	Table json.RawMessage `json:"table,omitempty"`
}

// holdsData reports whether the attempt staged anything to publish:
// part files, or rows of a table.
func (m shardManifest) holdsData() bool {
	return m.Staged && (len(m.Files) > 0 || (len(m.Table) > 0 && m.Rows > 0))
}

// parts are the manifest's staged parts in runPath, from Parts or, in a
// manifest an earlier release wrote, from its files and upload ids. A
// local folder's attempt of that release staged its files in a folder of
// its own, which this protocol cannot complete: an error says so.
func (m shardManifest) parts(runPath string) ([]Part, error) {
	if len(m.Parts) > 0 || len(m.Files) == 0 {
		return partsOf(m.Parts), nil
	}
	if m.Uploads == nil {
		return nil, fmt.Errorf("shard %s: attempt %s was staged by an earlier release in a folder of its own, which this release "+
			"cannot complete: commit the run with that release, or run its shards again with a new run id", m.Shard, m.Attempt)
	}
	out := make([]Part, len(m.Files))
	for i, f := range m.Files {
		out[i] = Part{Key: runPath + "/" + ShardFolder(m.Shard) + "/" + f.Name, Token: m.Uploads[f.Name], Size: f.Bytes}
	}
	return out, nil
}

// control reads and writes a logical run's control files in an output.
type control struct{ out Output }

func (c control) where(runID, name string) string { return c.out.Where(controlPath(runID, name)) }

func (c control) read(ctx context.Context, runID, name string) ([]byte, error) {
	return c.out.Storage.Read(ctx, controlPath(runID, name))
}

func (c control) put(ctx context.Context, runID, name string, data []byte) error {
	return c.out.Storage.Put(ctx, controlPath(runID, name), data)
}

func (c control) create(ctx context.Context, runID, name string, data []byte) (bool, error) {
	return c.out.Storage.PutIfAbsent(ctx, controlPath(runID, name), data)
}

func (c control) delete(ctx context.Context, runID, name string) error {
	_, err := c.out.Storage.DeletePrefix(ctx, controlPath(runID, name))
	return err
}

// readClaim reads a logical run's claim; fs.ErrNotExist when no shard
// started it.
func (c control) readClaim(ctx context.Context, runID string) (Claim, error) {
	var cl Claim
	b, err := c.read(ctx, runID, claimFile)
	if err != nil {
		return cl, err
	}
	if err := json.Unmarshal(b, &cl); err != nil {
		return cl, fmt.Errorf("%s: %w", c.where(runID, claimFile), err)
	}
	return cl, nil
}

// claimRun writes the logical run's claim, at now, for the partition
// day, unless a shard did first, and returns the claim that stands,
// after checking it agrees with the shard.
func (c control) claimRun(ctx context.Context, config string, s ShardRef, day, now time.Time) (Claim, error) {
	want := Claim{Config: config, RunID: s.RunID, Shards: s.Count, PartitionDate: day.UTC().Format(time.DateOnly), CreatedAt: now.UTC()}
	b, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		return want, err
	}
	if _, err := c.create(ctx, s.RunID, claimFile, append(b, '\n')); err != nil {
		return want, err
	}
	got, err := c.readClaim(ctx, s.RunID)
	switch {
	case err != nil:
		return got, err
	case got.Shards != s.Count:
		return got, fmt.Errorf("%w: run %s was started with %d shards (%s); this is shard %d of %d",
			ErrShardCount, s.RunID, got.Shards, c.where(s.RunID, claimFile), s.Index, s.Count)
	case got.Config != config:
		return got, fmt.Errorf("run %s in this output was claimed by config %q, not %q (%s): give this run another run id, or this config another output",
			s.RunID, got.Config, config, c.where(s.RunID, claimFile))
	}
	return got, nil
}

// readDecision reads a logical run's decision; "" when none was made.
func (c control) readDecision(ctx context.Context, runID string) (decision, error) {
	var d decision
	b, err := c.read(ctx, runID, decisionFile)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("%s: %w", c.where(runID, decisionFile), err)
	}
	return d, nil
}

// decide makes the logical run's decision d, unless one was made first,
// and returns the one that stands. Once the decision may be written, a
// signal no longer stops the reading back.
func (c control) decide(ctx context.Context, runID string, d decision) (decision, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return decision{}, err
	}
	ctx = context.WithoutCancel(ctx)
	if _, err := c.create(ctx, runID, decisionFile, append(b, '\n')); err != nil {
		return decision{}, err
	}
	return c.readDecision(ctx, runID)
}

// hasRunFile reports whether the run folder holds the file name.
func (c control) hasRunFile(ctx context.Context, runPath, name string) (bool, error) {
	_, exists, err := c.out.Storage.Stat(ctx, runPath+"/"+name)
	return exists, err
}
