package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/databrew/databrew-stage/verdict"
)

// outcomes are the values of the outcome label, each 1 or 0 for a run.
var outcomes = []verdict.Outcome{verdict.OutcomeSuccess, verdict.OutcomePartial, verdict.OutcomeFailed}

// movesLastSuccess reports whether rep sets the config's last success: a
// run that started and did not fail.
func movesLastSuccess(rep verdict.RunReport) bool {
	return rep.Started && rep.Outcome != verdict.OutcomeFailed
}

// record sets every gauge of rep's config to rep's values; the last
// success only when rep moves it.
func (g *gauges) record(rep verdict.RunReport) error {
	var s gaugeSetter
	config := rep.Config
	s.set(g.requests, float64(rep.Requests.Total), config)
	s.set(g.retriedRequests, float64(rep.Requests.Retried), config)
	s.set(g.notModified, float64(rep.Requests.NotModified), config)
	s.set(g.urls, float64(rep.Requests.OK), config, "ok")
	s.set(g.urls, float64(rep.Requests.Neutral), config, "neutral")
	s.set(g.urls, float64(rep.Requests.Failed), config, "failed")
	s.set(g.urls, float64(rep.Requests.RobotsExcluded), config, "robots_excluded")
	s.set(g.items, float64(rep.Items.New), config, "new")
	s.set(g.items, float64(rep.Items.Changed), config, "changed")
	s.set(g.items, float64(rep.Items.Unchanged), config, "unchanged")
	s.set(g.items, float64(rep.Items.Removed), config, "removed")
	s.set(g.items, float64(rep.Items.Skipped), config, "skipped")
	s.set(g.items, float64(rep.Items.DuplicateKeys), config, "duplicate_keys")
	s.set(g.duration, rep.FinishedAt.Sub(rep.StartedAt).Seconds(), config)
	s.set(g.breakerTrips, float64(rep.Breaker.Trips), config)
	s.set(g.exportedRows, float64(rep.Export.Rows), config)
	s.set(g.exportFailed, boolValue(rep.Export.Failed), config)
	s.set(g.coverageGaps, float64(rep.CoverageGaps), config)
	for _, o := range outcomes {
		s.set(g.outcome, boolValue(rep.Outcome == o), config, string(o))
	}
	// A config run twice in one invocation keeps one info series: the
	// last run's.
	g.info.DeletePartialMatch(prometheus.Labels{configLabel: config})
	s.set(g.info, 1, config, string(rep.Stop), strconv.FormatBool(rep.Started))
	if !rep.FinishedAt.IsZero() {
		s.set(g.lastRunTimestamp, unixSeconds(rep.FinishedAt), config)
		if movesLastSuccess(rep) {
			s.set(g.lastSuccessTime, unixSeconds(rep.FinishedAt), config)
		}
	}
	return s.err
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
