package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// configLabel names the config on every metric.
const configLabel = "config"

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
	lastRunTimestampName = "databrew_stage_last_run_timestamp_seconds"
	lastSuccessTimeName  = "databrew_stage_last_success_timestamp_seconds"
)

// gauges holds the metrics of one textfile, registered on one registry.
type gauges struct {
	requests, retriedRequests, notModified *prometheus.GaugeVec
	urls, items                            *prometheus.GaugeVec
	duration, breakerTrips                 *prometheus.GaugeVec
	exportedRows, exportFailed             *prometheus.GaugeVec
	coverageGaps, outcome, info            *prometheus.GaugeVec
	lastRunTimestamp, lastSuccessTime      *prometheus.GaugeVec
	// byName finds a gauge by its metric name, to carry values over from
	// a previous file.
	byName map[string]*prometheus.GaugeVec
}

// gaugeSpec describes one gauge: where it goes, its name, its HELP text
// and its labels besides config.
type gaugeSpec struct {
	dst    **prometheus.GaugeVec
	name   string
	help   string
	labels []string
}

// newGauges creates every gauge and registers it on reg.
func newGauges(reg prometheus.Registerer) (*gauges, error) {
	g := &gauges{byName: map[string]*prometheus.GaugeVec{}}
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
		{&g.lastRunTimestamp, lastRunTimestampName, "Unix time the config's last run finished, or was given up when it never started.", nil},
		{&g.lastSuccessTime, lastSuccessTimeName, "Unix time the config's last run that started and did not fail (success or partial) finished; failed runs and runs that never started leave it as it was.", nil},
	}
	for _, s := range specs {
		vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: s.name, Help: s.help}, append([]string{configLabel}, s.labels...))
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

// set sets the gauge of vec with labels to value, unless an earlier set
// failed.
func (s *gaugeSetter) set(vec *prometheus.GaugeVec, value float64, labels ...string) {
	if s.err != nil {
		return
	}
	gauge, err := vec.GetMetricWithLabelValues(labels...)
	if err != nil {
		s.err = fmt.Errorf("set a gauge labelled %q: %w", labels, err)
		return
	}
	gauge.Set(value)
}
