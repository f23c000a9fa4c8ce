package metrics

import (
	"strconv"
	"time"

	"github.com/databrew/databrew-stage/verdict"
)

// outcomes are the values of the outcome label, each 1 or 0 for a run.
var outcomes = []verdict.Outcome{verdict.OutcomeSuccess, verdict.OutcomePartial, verdict.OutcomeFailed}

// movesLastSuccess reports whether rep sets the config's last success: a
// run that started and did not fail.
func movesLastSuccess(rep verdict.RunReport) bool {
	return rep.Started && rep.Outcome != verdict.OutcomeFailed
}

// record sets every gauge of rep's run (its config's, or its shard's) to
// rep's values; the last success only when rep moves it.
func (g *gauges) record(rep verdict.RunReport) error {
	var s gaugeSetter
	k := keyOf(rep)
	s.set(g.requests, k, float64(rep.Requests.Total))
	s.set(g.retriedRequests, k, float64(rep.Requests.Retried))
	s.set(g.notModified, k, float64(rep.Requests.NotModified))
	s.set(g.urls, k, float64(rep.Requests.OK), "ok")
	s.set(g.urls, k, float64(rep.Requests.Neutral), "neutral")
	s.set(g.urls, k, float64(rep.Requests.Failed), "failed")
	s.set(g.urls, k, float64(rep.Requests.RobotsExcluded), "robots_excluded")
	s.set(g.items, k, float64(rep.Items.New), "new")
	s.set(g.items, k, float64(rep.Items.Changed), "changed")
	s.set(g.items, k, float64(rep.Items.Unchanged), "unchanged")
	s.set(g.items, k, float64(rep.Items.Removed), "removed")
	s.set(g.items, k, float64(rep.Items.Skipped), "skipped")
	s.set(g.items, k, float64(rep.Items.DuplicateKeys), "duplicate_keys")
	s.set(g.duration, k, rep.FinishedAt.Sub(rep.StartedAt).Seconds())
	s.set(g.breakerTrips, k, float64(rep.Breaker.Trips))
	s.set(g.exportedRows, k, float64(exportedRows(rep.Export)))
	s.set(g.exportFailed, k, boolValue(rep.Export.Failed))
	s.set(g.coverageGaps, k, float64(rep.CoverageGaps))
	for _, o := range outcomes {
		s.set(g.outcome, k, boolValue(rep.Outcome == o), string(o))
	}
	// A config (or shard) run twice in one invocation keeps one info
	// series: the last run's.
	g.info.deleteRun(k)
	s.set(g.info, k, 1, string(rep.Stop), strconv.FormatBool(rep.Started))
	// The snapshot id is a label, not a value: a float64 holds no 64-bit
	// id exactly.
	g.tableInfo.deleteRun(k)
	if t := rep.Export.Table; t != nil {
		snapshot := ""
		if t.SnapshotID != 0 {
			snapshot = strconv.FormatInt(t.SnapshotID, 10)
		}
		s.set(g.tableInfo, k, 1, t.Name, t.Format, snapshot)
	}
	if !rep.FinishedAt.IsZero() {
		s.set(g.lastRunTimestamp, k, unixSeconds(rep.FinishedAt))
		if movesLastSuccess(rep) {
			s.set(g.lastSuccessTime, k, unixSeconds(rep.FinishedAt))
		}
	}
	return s.err
}

// exportedRows is the rows a run published: a shard's run stages its rows
// for the commit and publishes none itself.
func exportedRows(e verdict.Export) int {
	if e.Staged && !e.Published {
		return 0
	}
	return e.Rows
}

// boolValue is 1 for true and 0 for false.
func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds is t as Unix time in seconds, to the millisecond.
func unixSeconds(t time.Time) float64 {
	return float64(t.UnixMilli()) / 1e3
}
