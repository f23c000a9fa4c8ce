package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/databrew/databrew-stage/verdict"
)

// configLabel names the config on every metric; shardLabel names the
// shard (such as "2-of-4") on the metrics of a shard's run, and only
// there: a whole run's metrics, and those of a logical run its commit
// combined, do not carry it.
const (
	configLabel = "config"
	shardLabel  = "shard"
)

// The metric names, each the name of a gauge labelled with the config.
const (
	requestsName         = "databrew_stage_last_run_requests"
	retriedRequestsName  = "databrew_stage_last_run_retried_requests"
	notModifiedName      = "databrew_stage_last_run_not_modified_requests"
	urlsName             = "databrew_stage_last_run_urls"
	itemsName            = "databrew_stage_last_run_items"
	durationName         = "databrew_stage_last_run_duration_seconds"
	breakerTripsName     = "databrew_stage_last_run_breaker_trips"
	exportedRowsName     = "databrew_stage_last_run_exported_rows"
	exportFailedName     = "databrew_stage_last_run_export_failed"
	coverageGapsName     = "databrew_stage_last_run_coverage_gaps"
	outcomeName          = "databrew_stage_last_run_outcome"
	infoName             = "databrew_stage_last_run_info"
	tableInfoName        = "databrew_stage_last_run_table_info"
	lastRunTimestampName = "databrew_stage_last_run_timestamp_seconds"
	lastSuccessTimeName  = "databrew_stage_last_success_timestamp_seconds"
)

// gauges holds the metrics of one textfile, registered on one registry.
type gauges struct {
	requests, retriedRequests, notModified *gauge
	urls, items                            *gauge
	duration, breakerTrips                 *gauge
	exportedRows, exportFailed             *gauge
	coverageGaps, outcome, info, tableInfo *gauge
	lastRunTimestamp, lastSuccessTime      *gauge
	// byName finds a gauge by its metric name, to carry values over from
	// a previous file.
	byName map[string]*gauge
}

// gauge is one metric: the samples of runs of whole configs (labelled
// with the config and the metric's own labels) and of shard runs
// (labelled with the shard too), under one name. It registers as an
// unchecked collector, describing nothing: a checked registration wants
// every sample of a name to carry the same label names, and a whole run's
// samples must not carry the shard. Gathering still checks each sample.
type gauge struct {
	whole, shard *prometheus.GaugeVec
}

// Describe describes nothing: gauge is an unchecked collector.
func (g *gauge) Describe(chan<- *prometheus.Desc) {}

// Collect collects the samples of whole runs and of shard runs.
func (g *gauge) Collect(ch chan<- prometheus.Metric) {
	g.whole.Collect(ch)
	g.shard.Collect(ch)
}

// runKey names whose samples a run sets: the config, and the shard for a
// shard's run (empty for a whole run, and for a logical run a commit
// combined).
type runKey struct {
	config, shard string
}

// keyOf is the runKey of rep.
func keyOf(rep verdict.RunReport) runKey { return runKey{config: rep.Config, shard: rep.Shard} }

// vecOf returns the vector that holds k's samples, and k's label values
// followed by extra, in that vector's label order.
func (g *gauge) vecOf(k runKey, extra ...string) (*prometheus.GaugeVec, []string) {
	if k.shard == "" {
		return g.whole, append([]string{k.config}, extra...)
	}
	return g.shard, append([]string{k.config, k.shard}, extra...)
}

// deleteRun deletes every sample of k's run: a whole run's, or one
// shard's.
func (g *gauge) deleteRun(k runKey) {
	if k.shard == "" {
		g.whole.DeletePartialMatch(prometheus.Labels{configLabel: k.config})
		return
	}
	g.shard.DeletePartialMatch(prometheus.Labels{configLabel: k.config, shardLabel: k.shard})
}

// gaugeSpec describes one gauge: where it goes, its name, its HELP text
// and its labels besides config (and shard).
type gaugeSpec struct {
	dst    **gauge
	name   string
	help   string
	labels []string
}

// newGauges creates every gauge and registers it on reg.
func newGauges(reg prometheus.Registerer) (*gauges, error) {
	g := &gauges{byName: map[string]*gauge{}}
	specs := []gaugeSpec{
		{&g.requests, requestsName, "HTTP exchanges for pages in the config's last run, retries included; robots.txt fetches are not counted.", nil},
		{&g.retriedRequests, retriedRequestsName, "HTTP exchanges in the config's last run that retried an earlier one.", nil},
		{&g.notModified, notModifiedName, "Conditional requests in the config's last run that the site answered with 304 Not Modified.", nil},
		{&g.urls, urlsName, "URLs in the config's last run by result after retries: ok, neutral (the site's answer about that URL, such as 404), failed, or robots_excluded (not fetched).", []string{"result"}},
		{&g.items, itemsName, "Items in the config's last run by change: new, changed, unchanged and removed items were stored; skipped items were on pages not due for a revisit; duplicate_keys items were not stored because another page holds their key.", []string{"change"}},
		{&g.duration, durationName, "Wall-clock time of the config's last run, from start to finish.", nil},
		{&g.breakerTrips, breakerTripsName, "Times the circuit breaker tripped (paused the crawl) in the config's last run.", nil},
		{&g.exportedRows, exportedRowsName, "Rows the config's last run published to its output; 0 when it published nothing.", nil},
		{&g.exportFailed, exportFailedName, "1 when the config's last run had to publish and an error (writing the export or the state) kept it from doing so, 0 otherwise.", nil},
		{&g.coverageGaps, coverageGapsName, "URLs in the config's last run whose result was a failure or a page extraction could not use.", nil},
		{&g.outcome, outcomeName, "1 for the outcome of the config's last run (success, partial or failed), 0 for the other two.", []string{"outcome"}},
		{&g.info, infoName, "Always 1; the labels say why the config's last run stopped and whether it started at all.", []string{"stop", "started"}},
		{&g.tableInfo, tableInfoName, "Always 1, for a config whose output is a table (an Iceberg table); the labels name the table (NAMESPACE.TABLE), its format, and the id of the snapshot the config's last run committed into it (empty when it committed none).", []string{"table", "format", "snapshot_id"}},
		{&g.lastRunTimestamp, lastRunTimestampName, "Unix time the config's last run finished, or was given up when it never started.", nil},
		{&g.lastSuccessTime, lastSuccessTimeName, "Unix time the config's last run that started and did not fail (success or partial) finished; failed runs and runs that never started leave it as it was.", nil},
	}
	for _, s := range specs {
		opts := prometheus.GaugeOpts{Name: s.name, Help: s.help}
		vec := &gauge{
			whole: prometheus.NewGaugeVec(opts, append([]string{configLabel}, s.labels...)),
			shard: prometheus.NewGaugeVec(opts, append([]string{configLabel, shardLabel}, s.labels...)),
		}
		if err := reg.Register(vec); err != nil {
			return nil, fmt.Errorf("register %s: %w", s.name, err)
		}
		*s.dst = vec
		g.byName[s.name] = vec
	}
	return g, nil
}

// gaugeSetter sets gauges of a vector by label values and keeps the first
// error, so a sequence of sets is checked once at its end.
type gaugeSetter struct {
	err error
}

// set sets the sample of g for run k with the extra label values to
// value, unless an earlier set failed.
func (s *gaugeSetter) set(g *gauge, k runKey, value float64, extra ...string) {
	if s.err != nil {
		return
	}
	vec, labels := g.vecOf(k, extra...)
	sample, err := vec.GetMetricWithLabelValues(labels...)
	if err != nil {
		s.err = fmt.Errorf("set a gauge labelled %q: %w", labels, err)
		return
	}
	sample.Set(value)
}
