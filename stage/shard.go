package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
)

// Shard names one shard of a logical run that an orchestrator fans out
// (Airflow's dynamic task mapping, a Kubernetes Indexed Job): shard
// Index of Count, all of them agreeing on RunID. Each shard walks the
// listing pages and fetches the item pages it owns (see crawl.Shard),
// keeps its state in its own folder of the storage path
// (shard-I-of-N), paces itself at Count times the configured delay, and
// stages its export for Commit, which publishes the logical run once
// every shard passed.
type Shard struct {
	Index, Count int
	RunID        string
}

// Name is the shard's name in folders, keys and verdicts: "2-of-4".
func (s Shard) Name() string { return fmt.Sprintf("%d-of-%d", s.Index, s.Count) }

func (s Shard) crawl() crawl.Shard { return crawl.Shard{Index: s.Index, Count: s.Count} }

// Valid returns an error naming what is wrong with the shard.
func (s Shard) Valid() error {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d of %d: want a count of at least 1 and an index from 0 to %d", s.Index, s.Count, max(s.Count-1, 0))
	}
	return ValidRunID(s.RunID)
}

// runIDPattern admits the run ids an orchestrator may give: they name a
// folder or key prefix (run=ID), so only characters every store and
// shell take as they are.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidRunID returns an error unless id can name a logical run: 1 to 128
// letters, digits, dots, dashes and underscores, starting with a letter
// or digit, without "__0x": object storage's client library reads
// "__0x41__" in a key as an escaped "A", so such a run's files and its
// _SUCCESS would land under two different prefixes.
func ValidRunID(id string) error {
	if !runIDPattern.MatchString(id) {
		return fmt.Errorf("run id %q: want 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit "+
			"(in Airflow, {{ ts_nodash }} or {{ run_id | replace(':', '-') | replace('+', '-') }})", id)
	}
	if strings.Contains(strings.ToLower(id), "__0x") {
		return fmt.Errorf("run id %q: must not hold \"__0x\", which object storage keys read as an escaped character", id)
	}
	return nil
}

// ErrShardCount matches the error Run and Commit return when the shard
// count differs from the one the storage path's states, or the logical
// run, were made with: changing it moves most items to another shard, so
// it takes the migration docs/shards.md describes, never a silent export.
var ErrShardCount = errors.New("shard count changed")

// ErrCommitted matches the error Run returns for a shard, and Commit for
// a logical run, that was committed already: nothing is done again. A
// shard run of a committed run is refused, its verdict failed (a run id
// names one logical run; a fixed one reused would skip every later run in
// silence); a commit of it is a success that changed nothing (a commit
// task retried after it succeeded must not fail).
var ErrCommitted = errors.New("committed already")

// committedShard is the error of a shard run given the id of a logical
// run committed already: it did nothing, and says when the run was
// committed and how to crawl again.
func committedShard(claim runClaim, d decision) error {
	return fmt.Errorf("run %s was %w, at %s (by %s), into dt=%s: a committed run takes no more shard runs, and this one did nothing "+
		"(what the run published stands). A run id names one logical run: give each logical run a new run id, the same in "+
		"its shards and its commit, such as its start time (in Airflow {{ ts_nodash }}, which a new DAG run changes)",
		claim.RunID, ErrCommitted, d.At.UTC().Format(time.RFC3339), d.By, claim.PartitionDate)
}

// ErrAbandoned matches the error Run and Commit return for a logical run
// that a shard abandoned: it started a later run, which took the items
// it had staged, so this run can no longer be committed.
var ErrAbandoned = errors.New("logical run abandoned")

// shardFolderPattern matches the state folders of shards.
var shardFolderPattern = regexp.MustCompile(`^shard-([0-9]+)-of-([0-9]+)$`)

// shardState is a shard's state folder found in a storage path.
type shardState struct {
	name         string
	index, count int
}

// shardStatesIn lists the shard state folders (shard-I-of-N) in a storage
// path, in order of count and index; none for a whole-config storage or
// one not made yet.
func shardStatesIn(storage string) ([]shardState, error) {
	entries, err := os.ReadDir(storage)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read storage %s: %w", storage, err)
	}
	var found []shardState
	for _, e := range entries {
		m := shardFolderPattern.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		f := shardState{name: e.Name()}
		f.index, _ = strconv.Atoi(m[1])
		f.count, _ = strconv.Atoi(m[2])
		found = append(found, f)
	}
	slices.SortFunc(found, func(a, b shardState) int {
		if a.count != b.count {
			return a.count - b.count
		}
		return a.index - b.index
	})
	return found, nil
}

// shardStorage checks the storage path against the shard s (nil: the
// whole config) and returns the folder the run keeps its state in: a
// sharded run's own folder under it. States of another shard count, or a
// whole-config state beside shard states, refuse the run.
func shardStorage(cfg config.Config, s *Shard) (string, error) {
	folders, err := shardStatesIn(cfg.Storage)
	if err != nil {
		return "", err
	}
	var counts, others []string // the shard counts found; those not s's
	for _, f := range folders {
		c := strconv.Itoa(f.count)
		if !slices.Contains(counts, c) {
			counts = append(counts, c)
			if s == nil || f.count != s.Count {
				others = append(others, c)
			}
		}
	}
	if s == nil {
		if len(counts) > 0 {
			return "", fmt.Errorf("%w: storage %s holds the states of shards (%s): run this config with --shard I/N, "+
				"or see \"Changing the shard count\" in docs/shards.md", ErrShardCount, cfg.Storage, strings.Join(counts, ", "))
		}
		return cfg.Storage, nil
	}
	switch {
	case len(others) > 0:
		return "", fmt.Errorf("%w: storage %s holds the states of %s shards; this is shard %d of %d. A new count moves most items "+
			"to another shard, and each would be exported again: commit the last run of the old count, move its shard-*-of-* "+
			"folders aside, and run the new shards once with --reset-state (see \"Changing the shard count\" in docs/shards.md)",
			ErrShardCount, cfg.Storage, strings.Join(others, ", "), s.Index, s.Count)
	case sink.Exists(filepath.Join(cfg.Storage, state.FileName)):
		return "", fmt.Errorf("%w: storage %s holds the state of the whole config (state.db); this is shard %d of %d: "+
			"move state.db aside and run the shards once with --reset-state (see \"Changing the shard count\" in docs/shards.md)",
			ErrShardCount, cfg.Storage, s.Index, s.Count)
	}
	return ShardStorage(cfg.Storage, *s), nil
}

// runClaim is a logical run's _run.json: the first shard to start writes
// it, create-only, and every other shard and the commit read it, so all
// agree on the shard count and the partition the run publishes into.
type runClaim struct {
	Config        string    `json:"config"`
	RunID         string    `json:"run_id"`
	Shards        int       `json:"shards"`
	PartitionDate string    `json:"partition_date"`
	CreatedAt     time.Time `json:"created_at"`
}

// runPath is the run folder the logical run publishes into.
func (c runClaim) runPath() string { return "dt=" + c.PartitionDate + "/run=" + c.RunID }

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

// shardManifestFile is the control file shard writes for the commit.
func shardManifestFile(shard string) string { return "shard-" + shard + ".json" }

// shardManifest is what one shard leaves for the commit: its verdict and
// the files it staged (uploaded, not visible), with their rows, sizes,
// checksums and, on S3, upload ids.
type shardManifest struct {
	SchemaVersion int    `json:"schema_version"`
	Config        string `json:"config"`
	RunID         string `json:"run_id"`
	Shard         string `json:"shard"`
	// Attempt names the shard's attempt at the run that wrote the
	// manifest; its parts' names carry it on S3.
	Attempt string            `json:"attempt"`
	Verdict json.RawMessage   `json:"verdict"`
	Staged  bool              `json:"staged"`
	Format  sink.Format       `json:"format,omitempty"`
	Rows    int64             `json:"rows"`
	Changes sink.Changes      `json:"changes"`
	Files   []sink.FileInfo   `json:"files"`
	Uploads map[string]string `json:"uploads,omitempty"`
	Schema  []sink.Column     `json:"schema,omitempty"`
}

// readClaim reads a logical run's claim; fs.ErrNotExist when no shard
// started it.
func readClaim(ctx context.Context, lake shardLake, runID string) (runClaim, error) {
	var c runClaim
	b, err := lake.readControl(ctx, runID, claimFile)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", lake.where(controlPath(runID, claimFile)), err)
	}
	return c, nil
}

// claimRun writes the logical run's claim, at now, for the partition
// day, unless a shard did first, and returns the claim that stands,
// after checking it agrees with this shard.
func claimRun(ctx context.Context, lake shardLake, cfg config.Config, s Shard, day, now time.Time) (runClaim, error) {
	want := runClaim{Config: cfg.Name, RunID: s.RunID, Shards: s.Count, PartitionDate: day.UTC().Format(time.DateOnly), CreatedAt: now.UTC()}
	b, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		return want, err
	}
	if _, err := lake.createControl(ctx, s.RunID, claimFile, append(b, '\n')); err != nil {
		return want, err
	}
	got, err := readClaim(ctx, lake, s.RunID)
	switch {
	case err != nil:
		return got, err
	case got.Shards != s.Count:
		return got, fmt.Errorf("%w: run %s was started with %d shards (%s); this is shard %d of %d",
			ErrShardCount, s.RunID, got.Shards, lake.where(controlPath(s.RunID, claimFile)), s.Index, s.Count)
	case got.Config != cfg.Name:
		return got, fmt.Errorf("run %s in this output was claimed by config %q, not %q (%s): give this run another run id, or this config another output",
			s.RunID, got.Config, cfg.Name, lake.where(controlPath(s.RunID, claimFile)))
	}
	return got, nil
}

// readDecision reads a logical run's decision; "" when none was made.
func readDecision(ctx context.Context, lake shardLake, runID string) (decision, error) {
	var d decision
	b, err := lake.readControl(ctx, runID, decisionFile)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("%s: %w", lake.where(controlPath(runID, decisionFile)), err)
	}
	return d, nil
}

// decide makes the logical run's decision d, unless one was made first,
// and returns the one that stands. Once the decision may be written, a
// signal no longer stops the reading back.
func decide(ctx context.Context, lake shardLake, runID string, d decision) (decision, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return decision{}, err
	}
	ctx = context.WithoutCancel(ctx)
	if _, err := lake.createControl(ctx, runID, decisionFile, append(b, '\n')); err != nil {
		return decision{}, err
	}
	return readDecision(ctx, lake, runID)
}

// ShardStates lists the shard state folders (shard-I-of-N) in a storage
// path, in order of count and index; none for a whole-config storage.
func ShardStates(storage string) ([]string, error) {
	folders, err := shardStatesIn(storage)
	out := make([]string, len(folders))
	for i, f := range folders {
		out[i] = filepath.Join(storage, f.name)
	}
	return out, err
}

// ShardStorage is the state folder of a shard in a storage path.
func ShardStorage(storage string, s Shard) string { return filepath.Join(storage, "shard-"+s.Name()) }
