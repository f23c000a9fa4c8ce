package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/databrew/databrew-stage/stage"
)

// JobCompletionIndexEnv is the variable a Kubernetes Indexed Job sets to
// each pod's index, from 0: with --shards N it gives the shard.
const JobCompletionIndexEnv = "JOB_COMPLETION_INDEX"

// shardFlags are run's --shard, --shards and --run-id.
type shardFlags struct {
	shard  string
	shards int
	runID  string
}

// parse returns the shard the flags name, nil when they name none.
func (f shardFlags) parse(getenv func(string) string) (*stage.Shard, error) {
	switch {
	case f.shard == "" && f.shards == 0 && f.runID == "":
		return nil, nil
	case f.shard != "" && f.shards != 0:
		return nil, fmt.Errorf("give --shard I/N or --shards N (with %s), not both", JobCompletionIndexEnv)
	case f.runID == "":
		return nil, fmt.Errorf("a shard needs --run-id, the id every shard of the logical run and its commit share")
	}
	s := stage.Shard{RunID: f.runID}
	var err error
	switch {
	case f.shard != "":
		i, n, ok := strings.Cut(f.shard, "/")
		if s.Index, err = strconv.Atoi(i); ok && err == nil {
			s.Count, err = strconv.Atoi(n)
		}
		if !ok || err != nil {
			return nil, fmt.Errorf("--shard %q: want I/N, such as 0/4 (I from 0 to N-1)", f.shard)
		}
	case f.shards != 0:
		idx := getenv(JobCompletionIndexEnv)
		if idx == "" {
			return nil, fmt.Errorf("--shards %d takes the shard's index from %s, which is not set (give --shard I/N instead)", f.shards, JobCompletionIndexEnv)
		}
		if s.Index, err = strconv.Atoi(idx); err != nil {
			return nil, fmt.Errorf("%s=%q is not a number", JobCompletionIndexEnv, idx)
		}
		s.Count = f.shards
	default:
		return nil, fmt.Errorf("--run-id names a logical run of shards: give --shard I/N or --shards N too")
	}
	if err := s.Valid(); err != nil {
		return nil, err
	}
	return &s, nil
}
