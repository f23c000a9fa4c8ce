package stage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/publish"
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

func (s Shard) ref() publish.ShardRef {
	return publish.ShardRef{Index: s.Index, Count: s.Count, RunID: s.RunID}
}

// ShardsFolder is the folder of an export root that holds the control
// files of logical runs made of shards (see publish.ShardsFolder).
const ShardsFolder = publish.ShardsFolder

// Valid returns an error naming what is wrong with the shard.
func (s Shard) Valid() error {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d of %d: want a count of at least 1 and an index from 0 to %d", s.Index, s.Count, max(s.Count-1, 0))
	}
	return ValidRunID(s.RunID)
}

// runIDPattern admits the characters of the run ids an orchestrator may
// give: they name a folder or key prefix (run=ID), so only characters
// every store and shell take as they are; maxRunID bounds their length.
// The bound is not a counted repetition in the pattern: {0,127} compiles
// to 128 copies of the class, over 100 KB of heap that every process
// would hold, and that the collector's goal would double.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// maxRunID is the longest run id, in bytes.
const maxRunID = 128

// ValidRunID returns an error unless id can name a logical run: 1 to 128
// letters, digits, dots, dashes and underscores, starting with a letter
// or digit, without "__0x": object storage's client library reads
// "__0x41__" in a key as an escaped "A", so such a run's files and its
// _SUCCESS would land under two different prefixes.
func ValidRunID(id string) error {
	if len(id) > maxRunID || !runIDPattern.MatchString(id) {
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
var ErrShardCount = publish.ErrShardCount

// ErrCommitted matches the error Run returns for a shard, and Commit for
// a logical run, that was committed already: nothing is done again. A
// shard run of a committed run is refused, its verdict failed (a run id
// names one logical run; a fixed one reused would skip every later run in
// silence); a commit of it is a success that changed nothing (a commit
// task retried after it succeeded must not fail).
var ErrCommitted = publish.ErrCommitted

// ErrAbandoned matches the error Run and Commit return for a logical run
// that a shard abandoned: it started a later run, which took the items
// it had staged, so this run can no longer be committed.
var ErrAbandoned = publish.ErrAbandoned

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
