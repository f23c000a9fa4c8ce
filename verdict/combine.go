package verdict

import (
	"fmt"
	"strings"
	"time"
)

// stopSeverity orders the stops for a logical run of several shards: the
// combined stop is the most severe of the shards' stops, so a run that
// one shard ended on a stop rule, a block or an error does not read as
// having emptied its queue.
var stopSeverity = map[Stop]int{
	StopQueueEmpty: 0, StopMaxRequests: 1, StopConsecutiveFailures: 2, StopErrorRate: 3,
	StopInterrupted: 4, StopBlocked: 5, StopError: 6,
}

// MissingShard is the verdict that stands for a shard that left none for
// the commit: it did not finish (it is running, was killed, or never
// ran).
func MissingShard(config, runID string, index, count int, at time.Time) RunReport {
	r := unstarted(config, at, StopError, fmt.Sprintf("shard %d-of-%d left no verdict for run %s: it did not finish; run it again, then commit", index, count, runID))
	r.RunID, r.Rule = runID, 4
	r.Shard = fmt.Sprintf("%d-of-%d", index, count)
	r.Export.Reason = "the shard did not finish"
	return r
}

// Combine is the verdict of a logical run made of shards, one verdict per
// shard in index order (see MissingShard for one that left none). A shard
// that failed fails the logical run, its rule and detail standing,
// whatever the others did. Otherwise the outcome rules apply to the
// shards taken together: the stop is the most severe of their stops, a
// request succeeded when one did in any shard, and the run was productive
// when any shard was. (Rule 1 cannot match then: each shard passed it on
// its own facts, and what it asks — no success while failures remain, a
// start URL fetched without a listing that yielded — would have failed
// the shard that held it.) So the logical run is partial when any shard
// is, and succeeds when every shard emptied its queue or its budget.
// Counts add up; gaps and breaker events are listed shard by shard. The
// export section is the commit's to fill in.
func Combine(config, runID string, shards []RunReport) RunReport {
	r := RunReport{Config: config, RunID: runID, SchemaVersion: SchemaVersion, Started: true,
		Crawl:  Crawl{Stop: StopQueueEmpty, Gaps: []Gap{}, Breaker: Breaker{Events: []BreakerEvent{}}, Fields: map[string]FieldCounts{}},
		Export: Export{Files: []string{}}, Shards: shards}
	var facts Facts
	var failed *RunReport
	streak := -1
	for i := range shards {
		s := &shards[i]
		if r.StartedAt.IsZero() || s.StartedAt.Before(r.StartedAt) {
			r.StartedAt = s.StartedAt
		}
		if s.FinishedAt.After(r.FinishedAt) {
			r.FinishedAt = s.FinishedAt
		}
		if stopSeverity[s.Stop] > stopSeverity[r.Stop] {
			r.Stop, r.Detail = s.Stop, shardDetail(s)
		}
		r.Started = r.Started && s.Started
		addRequests(&r.Requests, s.Requests)
		addItems(&r.Items, s.Items)
		r.Render = addRender(r.Render, s.Render)
		for name, c := range s.Fields {
			sum := r.Fields[name]
			sum.TypeErrors += c.TypeErrors
			sum.FoundNothing += c.FoundNothing
			r.Fields[name] = sum
		}
		r.CoverageGaps += s.CoverageGaps
		for _, g := range s.Gaps {
			if len(r.Gaps) < MaxListedGaps {
				r.Gaps = append(r.Gaps, g)
			}
		}
		r.Traversal.Queued += s.Traversal.Queued
		r.Traversal.Gaps += s.Traversal.Gaps
		r.Traversal.Started = r.Traversal.Started || s.Traversal.Started
		r.Breaker.Trips += s.Breaker.Trips
		r.Breaker.Probes += s.Breaker.Probes
		r.Breaker.Events = append(r.Breaker.Events, s.Breaker.Events...)
		if streak < 0 || s.EmptyRunStreak < streak {
			streak = s.EmptyRunStreak
		}
		facts.Succeeded = facts.Succeeded || s.Requests.OK > 0
		facts.Productive = facts.Productive || s.Productive
		if s.Outcome == OutcomeFailed && failed == nil {
			failed = s
		}
	}
	r.Traversal.Completed = len(shards) > 0
	for _, s := range shards {
		r.Traversal.Completed = r.Traversal.Completed && s.Traversal.Completed
	}
	r.EmptyRunStreak = max(streak, 0)
	r.Productive = facts.Productive
	facts.Stop = r.Stop
	r.Outcome, r.Rule = Decide(facts)
	switch {
	case len(shards) == 0:
		r.Stop, r.Detail, r.Outcome, r.Rule = StopError, "no shard", OutcomeFailed, 4
	case failed != nil:
		r.Outcome, r.Rule = OutcomeFailed, failed.Rule
		r.Stop, r.Detail = failed.Stop, shardDetail(failed)
	}
	return r
}

// shardDetail is a shard's detail as the logical run's: prefixed with the
// shard's name.
func shardDetail(s *RunReport) string {
	name := s.Shard
	if name == "" {
		name = "?"
	}
	if s.Detail == "" {
		return fmt.Sprintf("shard %s stopped on %s", name, s.Stop)
	}
	if strings.HasPrefix(s.Detail, "shard "+name) {
		return s.Detail
	}
	return fmt.Sprintf("shard %s: %s", name, s.Detail)
}

func addRequests(a *RequestCounts, b RequestCounts) {
	a.Total += b.Total
	a.OK += b.OK
	a.Neutral += b.Neutral
	a.Failed += b.Failed
	a.Retried += b.Retried
	a.RobotsExcluded += b.RobotsExcluded
	a.NotModified += b.NotModified
	a.Subresources += b.Subresources
}

func addItems(a *ItemCounts, b ItemCounts) {
	a.New += b.New
	a.Changed += b.Changed
	a.Unchanged += b.Unchanged
	a.Removed += b.Removed
	a.Skipped += b.Skipped
	a.DuplicateKeys += b.DuplicateKeys
	a.TypeErrors += b.TypeErrors
}
