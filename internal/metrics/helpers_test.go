package metrics

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/databrew/databrew-stage/verdict"
)

// textfile is a textfile as read back by the Prometheus text parser.
type textfile map[string]*dto.MetricFamily

// readTextfile parses the file at path with the text parser
// node-exporter's collector uses.
func readTextfile(t *testing.T, path string) textfile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return families
}

// value returns the value of the sample of metric name whose labels are
// exactly labels, and whether there is one.
func (tf textfile) value(t *testing.T, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	family, ok := tf[name]
	if !ok {
		return 0, false
	}
	found, value := 0, 0.0
	for _, sample := range family.GetMetric() {
		if maps.Equal(labelsOf(sample), labels) {
			found++
			value = sample.GetGauge().GetValue()
		}
	}
	if found > 1 {
		t.Errorf("%s%v: %d samples, want at most 1", name, labels, found)
	}
	return value, found == 1
}

// want checks the value of the sample of metric name with labels.
func (tf textfile) want(t *testing.T, name string, labels map[string]string, want float64) {
	t.Helper()
	got, ok := tf.value(t, name, labels)
	switch {
	case !ok:
		t.Errorf("%s%v: missing, want %v", name, labels, want)
	case got != want:
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

// wantAbsent checks there is no sample of metric name with labels.
func (tf textfile) wantAbsent(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	if got, ok := tf.value(t, name, labels); ok {
		t.Errorf("%s%v = %v, want no such sample", name, labels, got)
	}
}

// cfg is the label set of config name alone.
func cfg(name string) map[string]string { return map[string]string{"config": name} }

// with is the label set of config name and one more label.
func with(name, key, value string) map[string]string {
	return map[string]string{"config": name, key: value}
}

// writeAndRead writes reports to path and reads the file back.
func writeAndRead(t *testing.T, path string, reports ...verdict.RunReport) textfile {
	t.Helper()
	if err := WriteTextfile(path, reports); err != nil {
		t.Fatalf("WriteTextfile: %v", err)
	}
	return readTextfile(t, path)
}

// textfilePath is a fresh textfile path in a test folder.
func textfilePath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "databrew-stage.prom")
}

// clock is a fixed instant the runs of the tests are timed from.
var clock = time.Date(2025, 3, 14, 2, 0, 0, 0, time.UTC)

// successRun is a finished run of config that succeeded at finished, after
// 90.5 seconds.
func successRun(config string, finished time.Time) verdict.RunReport {
	return verdict.RunReport{
		Config: config, RunID: "r1", SchemaVersion: verdict.SchemaVersion,
		StartedAt: finished.Add(-90500 * time.Millisecond), FinishedAt: finished,
		Crawl: verdict.Crawl{
			Stop:         verdict.StopQueueEmpty,
			Requests:     verdict.RequestCounts{Total: 40, OK: 33, Neutral: 2, Failed: 1, Retried: 4, RobotsExcluded: 3, NotModified: 7},
			Items:        verdict.ItemCounts{New: 12, Changed: 3, Unchanged: 15, Removed: 2, Skipped: 5, DuplicateKeys: 1},
			CoverageGaps: 1,
			Breaker:      verdict.Breaker{Trips: 2, Probes: 3},
		},
		Outcome: verdict.OutcomeSuccess, Rule: 2, Productive: true, Started: true,
		Export: verdict.Export{Published: true, Rows: 17, Path: "out", Files: []string{"a.parquet"}},
	}
}

// failedRun is a run of config that started and failed at finished: the
// start page answered 500 for good.
func failedRun(config string, finished time.Time) verdict.RunReport {
	return verdict.RunReport{
		Config: config, RunID: "r2", SchemaVersion: verdict.SchemaVersion,
		StartedAt: finished.Add(-2 * time.Second), FinishedAt: finished,
		Crawl: verdict.Crawl{
			Stop:         verdict.StopQueueEmpty,
			Requests:     verdict.RequestCounts{Total: 6, Failed: 1, Retried: 5},
			CoverageGaps: 1,
		},
		Outcome: verdict.OutcomeFailed, Rule: 1, Started: true,
		Export: verdict.Export{Reason: "the run failed", Files: []string{}},
	}
}
