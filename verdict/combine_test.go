package verdict

import (
	"strings"
	"testing"
	"time"
)

// shard is a started shard's verdict with the given stop and outcome.
func shard(i int, stop Stop, outcome Outcome, rule Rule, productive bool, ok int) RunReport {
	at := time.Date(2026, 11, 30, 1, 0, i, 0, time.UTC)
	return RunReport{Config: "books", RunID: "r1", SchemaVersion: SchemaVersion, StartedAt: at, FinishedAt: at.Add(time.Minute),
		Crawl: Crawl{Stop: stop, Detail: "d" + string(rune('0'+i)), Requests: RequestCounts{Total: ok + 1, OK: ok, Failed: 1},
			Items: ItemCounts{New: 10 * i}, Gaps: []Gap{{URL: "u", Reason: "r"}}, CoverageGaps: 1,
			Traversal: Traversal{Completed: stop == StopQueueEmpty}},
		Outcome: outcome, Rule: rule, Productive: productive, Started: true, Shard: string(rune('0'+i)) + "-of-3"}
}

func TestCombine(t *testing.T) {
	at := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		shards  []RunReport
		stop    Stop
		outcome Outcome
		rule    Rule
		detail  string
	}{
		{"every shard succeeded", []RunReport{
			shard(0, StopQueueEmpty, OutcomeSuccess, 2, true, 5), shard(1, StopQueueEmpty, OutcomeSuccess, 2, false, 5),
			shard(2, StopMaxRequests, OutcomeSuccess, 2, false, 5)}, StopMaxRequests, OutcomeSuccess, 2, "shard 2-of-3: d2"},
		{"a partial shard makes the run partial", []RunReport{
			shard(0, StopQueueEmpty, OutcomeSuccess, 2, true, 5), shard(1, StopErrorRate, OutcomePartial, 3, true, 5),
			shard(2, StopQueueEmpty, OutcomeSuccess, 2, false, 5)}, StopErrorRate, OutcomePartial, 3, "shard 1-of-3: d1"},
		{"an interrupted shard that fetched makes it partial though none was productive", []RunReport{
			shard(0, StopQueueEmpty, OutcomeSuccess, 2, false, 5), shard(1, StopInterrupted, OutcomePartial, 3, false, 5),
			shard(2, StopQueueEmpty, OutcomeSuccess, 2, false, 5)}, StopInterrupted, OutcomePartial, 3, "shard 1-of-3: d1"},
		{"a failed shard fails the run, its rule standing", []RunReport{
			shard(0, StopQueueEmpty, OutcomeSuccess, 2, true, 5), shard(1, StopBlocked, OutcomePartial, 3, true, 5),
			shard(2, StopConsecutiveFailures, OutcomeFailed, 1, false, 0)}, StopConsecutiveFailures, OutcomeFailed, 1, "shard 2-of-3: d2"},
		{"a missing shard fails the run", []RunReport{
			shard(0, StopQueueEmpty, OutcomeSuccess, 2, true, 5), MissingShard("books", "r1", 1, 3, at),
			shard(2, StopQueueEmpty, OutcomeSuccess, 2, true, 5)}, StopError, OutcomeFailed, 4, "shard 1-of-3 left no verdict for run r1"},
		{"no shard at all fails", nil, StopError, OutcomeFailed, 4, "no shard"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Combine("books", "r1", tc.shards)
			if r.Stop != tc.stop || r.Outcome != tc.outcome || r.Rule != tc.rule {
				t.Errorf("got %s/%s rule %d, want %s/%s rule %d", r.Stop, r.Outcome, r.Rule, tc.stop, tc.outcome, tc.rule)
			}
			if !strings.HasPrefix(r.Detail, tc.detail) {
				t.Errorf("detail %q, want it to start with %q", r.Detail, tc.detail)
			}
			if len(r.Shards) != len(tc.shards) {
				t.Errorf("%d shard verdicts inside, want %d", len(r.Shards), len(tc.shards))
			}
			if err := r.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestCombineAddsUpTheShards(t *testing.T) {
	shards := []RunReport{shard(0, StopQueueEmpty, OutcomeSuccess, 2, false, 4), shard(1, StopQueueEmpty, OutcomeSuccess, 2, true, 6),
		shard(2, StopQueueEmpty, OutcomeSuccess, 2, true, 8)}
	shards[1].EmptyRunStreak, shards[0].EmptyRunStreak, shards[2].EmptyRunStreak = 0, 3, 0
	r := Combine("books", "r1", shards)
	if r.Requests.OK != 18 || r.Requests.Total != 21 || r.Items.New != 30 || r.CoverageGaps != 3 || len(r.Gaps) != 3 {
		t.Errorf("counts = %+v %+v gaps %d/%d", r.Requests, r.Items, r.CoverageGaps, len(r.Gaps))
	}
	if !r.Productive || r.EmptyRunStreak != 0 || !r.Traversal.Completed {
		t.Errorf("productive %v streak %d completed %v, want true 0 true", r.Productive, r.EmptyRunStreak, r.Traversal.Completed)
	}
	if !r.StartedAt.Equal(shards[0].StartedAt) || !r.FinishedAt.Equal(shards[2].FinishedAt) {
		t.Errorf("span %v-%v, want the first start and the last finish", r.StartedAt, r.FinishedAt)
	}
	shards[1].Traversal.Completed = false
	if Combine("books", "r1", shards).Traversal.Completed {
		t.Error("a shard whose traversal goes on: the logical run's traversal reads completed")
	}
}
