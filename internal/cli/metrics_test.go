package cli

import (
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// gaugeOf returns the value of the gauge name of config in the textfile
// families, and whether the file has one.
func gaugeOf(families map[string]*dto.MetricFamily, name, config string, extra ...string) (float64, bool) {
	for _, sample := range families[name].GetMetric() {
		labels := map[string]string{}
		for _, pair := range sample.GetLabel() {
			labels[pair.GetName()] = pair.GetValue()
		}
		if labels["config"] != config || (len(extra) == 2 && labels[extra[0]] != extra[1]) {
			continue
		}
		return sample.GetGauge().GetValue(), true
	}
	return 0, false
}

// TestRun_MetricsFile: --metrics-file is written when a run fails too:
// books succeeded and has a last success, down failed and has none, and
// says so in its outcome. A file that cannot be written exits 1 and names
// it, even when every run succeeded.
func TestRun_MetricsFile(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20, PerPage: 10})
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 503, PathPrefix: "/catalogue/page-9.html"})
	books := f.config("books", "", nil)
	down := f.config("down", f.srv.URL+"/catalogue/page-9.html", nil)
	mf := filepath.Join(f.dir, "databrew-stage.prom")

	r := runMain(t, "run", "--metrics-file", mf, books, down)
	if r.code != ExitFailed {
		t.Fatalf("run exited %d, want 1 (down failed)", r.code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(readFile(t, mf)))
	if err != nil {
		t.Fatalf("parse %s: %v", mf, err)
	}
	lastRun, ok := gaugeOf(families, "databrew_stage_last_run_timestamp_seconds", "books")
	if lastSuccess, ok2 := gaugeOf(families, "databrew_stage_last_success_timestamp_seconds", "books"); !ok || !ok2 || lastSuccess != lastRun || lastSuccess == 0 {
		t.Errorf("books: last success %v, last run %v; want both, equal", lastSuccess, lastRun)
	}
	if n, _ := gaugeOf(families, "databrew_stage_last_run_items", "books", "change", "new"); n != 20 {
		t.Errorf("books: %v new items, want 20", n)
	}
	if _, ok := gaugeOf(families, "databrew_stage_last_success_timestamp_seconds", "down"); ok {
		t.Error("down has a last success; it never succeeded")
	}
	if v, _ := gaugeOf(families, "databrew_stage_last_run_outcome", "down", "outcome", "failed"); v != 1 {
		t.Errorf("down: outcome failed = %v, want 1", v)
	}

	missing := filepath.Join(f.dir, "no-such-folder", "databrew-stage.prom")
	r = runMain(t, "run", "--metrics-file", missing, books)
	if r.code != ExitFailed || !strings.Contains(r.stderr, "--metrics-file") || !strings.Contains(r.stderr, missing) {
		t.Errorf("unwritable metrics file: exit %d, stderr %q; want 1 and a message naming %s", r.code, r.stderr, missing)
	}
}
