package lineage

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/verdict"
)

// testConfig is a config with a string, a float, a list and a timestamp
// field, exporting into dir/out.
func testConfig(dir string) config.Config {
	return config.Config{
		Name:   "books",
		Output: filepath.Join(dir, "out"),
		Extract: extract.Spec{Fields: []extract.FieldSpec{
			{Name: "title", Required: true},
			{Name: "price", Type: extract.TypeFloat64},
			{Name: "tags", Multiple: true},
			{Name: "listed_at", Type: extract.TypeTimestamp},
		}},
	}
}

func newTestTracker(t *testing.T, dir string) *Tracker {
	t.Helper()
	tr, err := NewTracker(testConfig(dir), "")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

var (
	testStart  = time.Date(2026, 11, 30, 0, 23, 5, 123e6, time.UTC)
	testFinish = testStart.Add(65 * time.Second)
)

// publishedReport is the verdict of a run that published two part files
// into dir.
func publishedReport(t *testing.T, dir string) verdict.RunReport {
	t.Helper()
	runDir := filepath.Join(dir, "out", "dt=2026-11-30", "run=20261130T002305.123Z-3f9a")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int{"part-00000.parquet": 1000, "part-00001.parquet": 234} {
		if err := os.WriteFile(filepath.Join(runDir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return verdict.RunReport{
		Config: "books", RunID: "20261130T002305.123Z-3f9a", StartedAt: testStart, FinishedAt: testFinish,
		Crawl:   verdict.Crawl{Stop: verdict.StopQueueEmpty},
		Outcome: verdict.OutcomeSuccess, Productive: true, Started: true,
		Export: verdict.Export{Published: true, Path: runDir, Files: []string{"part-00000.parquet", "part-00001.parquet"}, Rows: 1003},
	}
}

// failedReport is the verdict of a run the site blocked.
func failedReport() verdict.RunReport {
	return verdict.RunReport{
		Config: "books", RunID: "20261130T002305.123Z-3f9a", StartedAt: testStart, FinishedAt: testFinish,
		Crawl:   verdict.Crawl{Stop: verdict.StopBlocked, Detail: "HTTP 403 on 5 requests in a row"},
		Outcome: verdict.OutcomeFailed, Started: true,
		Export: verdict.Export{Files: []string{}, Reason: "the run failed: nothing is published"},
	}
}

// unproductiveReport is the verdict of a run with nothing new: it
// publishes no run folder.
func unproductiveReport() verdict.RunReport {
	rep := failedReport()
	rep.Outcome, rep.Stop, rep.Detail = verdict.OutcomeSuccess, verdict.StopQueueEmpty, ""
	rep.Export.Reason = "nothing new or changed to publish"
	return rep
}

// failedExportReport is the verdict of a run whose export failed with an
// error.
func failedExportReport() verdict.RunReport {
	rep := failedReport()
	rep.Outcome, rep.Stop, rep.Detail = verdict.OutcomeSuccess, verdict.StopQueueEmpty, ""
	rep.Export = verdict.Export{Failed: true, Files: []string{}, Reason: "write part-00000.parquet: no space left on device"}
	return rep
}

// lockedReport is the verdict of a run that never started: its storage
// path was locked.
func lockedReport() verdict.RunReport {
	return verdict.Locked("books", testStart, "storage is locked by another process")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// get follows a path of keys and indexes through decoded JSON; nil when
// something on the way is missing.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestStartEvent(t *testing.T) {
	dir := t.TempDir()
	tr := newTestTracker(t, dir)
	ev := validateEvent(t, mustJSON(t, tr.Start(testStart)))
	for _, c := range []struct {
		path []any
		want any
	}{
		{[]any{"eventType"}, "START"},
		{[]any{"eventTime"}, "2026-11-30T00:23:05.123Z"},
		{[]any{"schemaURL"}, "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"},
		{[]any{"producer"}, Producer()},
		{[]any{"run", "runId"}, tr.RunID()},
		{[]any{"job", "namespace"}, "databrew-stage"},
		{[]any{"job", "name"}, "books"},
		{[]any{"outputs", 0, "namespace"}, "file"},
		{[]any{"outputs", 0, "name"}, filepath.Join(dir, "out")},
		{[]any{"run", "facets", "databrew_stage", "config"}, "books"},
		{[]any{"run", "facets", "databrew_stage", "runId"}, nil},
		{[]any{"run", "facets", "errorMessage"}, nil},
		{[]any{"outputs", 0, "outputFacets", "outputStatistics"}, nil},
	} {
		if got := get(ev, c.path...); got != c.want {
			t.Errorf("%v = %v, want %v", c.path, got, c.want)
		}
	}
	if !uuidV7.MatchString(tr.RunID()) {
		t.Errorf("runId %q is not a UUIDv7", tr.RunID())
	}
	if got := len(get(ev, "inputs").([]any)); got != 0 {
		t.Errorf("%d inputs, want none", got)
	}
}

// TestSchemaFacet: the export's columns in order, user fields with their
// types, a list as an array of its element, then the system columns.
func TestSchemaFacet(t *testing.T) {
	ev := validateEvent(t, mustJSON(t, newTestTracker(t, t.TempDir()).Start(testStart)))
	fields, _ := get(ev, "outputs", 0, "facets", "schema", "fields").([]any)
	want := []struct{ name, typ, element string }{
		{"title", "string", ""}, {"price", "float64", ""}, {"tags", "array", "string"}, {"listed_at", "timestamp", ""},
		{"_key", "string", ""}, {"_url", "string", ""}, {"_change", "string", ""},
		{"_fetched_at", "timestamp", ""}, {"_run_id", "string", ""}, {"_hash", "string", ""},
	}
	if len(fields) != len(want) {
		t.Fatalf("%d fields, want %d: %v", len(fields), len(want), fields)
	}
	for i, w := range want {
		f := fields[i]
		if get(f, "name") != w.name || get(f, "type") != w.typ || get(f, "ordinal_position") != float64(i+1) {
			t.Errorf("field %d = %v, want %s %s at %d", i, f, w.name, w.typ, i+1)
		}
		if el := get(f, "fields", 0); w.element != "" && (get(el, "name") != "_element" || get(el, "type") != w.element) {
			t.Errorf("field %s: element %v, want _element %s", w.name, el, w.element)
		}
	}
	if get(fields[5], "description") != "the item page's URL" {
		t.Errorf("_url has no description: %v", fields[5])
	}
	if got := get(ev, "outputs", 0, "facets", "schema", "_schemaURL"); got != SchemaFacetURL {
		t.Errorf("_schemaURL %v", got)
	}
}

func TestCompleteEventOfAPublishedRun(t *testing.T) {
	dir := t.TempDir()
	tr := newTestTracker(t, dir)
	start := validateEvent(t, mustJSON(t, tr.Start(testStart)))
	rep := publishedReport(t, dir)
	ev := validateEvent(t, mustJSON(t, tr.End(rep)))
	for _, c := range []struct {
		path []any
		want any
	}{
		{[]any{"eventType"}, "COMPLETE"},
		{[]any{"eventTime"}, "2026-11-30T00:24:10.123Z"},
		{[]any{"run", "runId"}, get(start, "run", "runId")},
		{[]any{"outputs", 0, "outputFacets", "outputStatistics", "rowCount"}, float64(1003)},
		{[]any{"outputs", 0, "outputFacets", "outputStatistics", "fileCount"}, float64(2)},
		{[]any{"outputs", 0, "outputFacets", "outputStatistics", "size"}, float64(1234)},
		{[]any{"outputs", 0, "outputFacets", "outputStatistics", "_schemaURL"}, OutputStatisticsFacetURL},
		{[]any{"run", "facets", "databrew_stage", "runId"}, "20261130T002305.123Z-3f9a"},
		{[]any{"run", "facets", "databrew_stage", "outcome"}, "success"},
		{[]any{"run", "facets", "databrew_stage", "stop"}, "queue_empty"},
		{[]any{"run", "facets", "databrew_stage", "productive"}, true},
		{[]any{"run", "facets", "databrew_stage", "exportPath"}, rep.Export.Path},
		{[]any{"run", "facets", "errorMessage"}, nil},
	} {
		if got := get(ev, c.path...); got != c.want {
			t.Errorf("%v = %v, want %v", c.path, got, c.want)
		}
	}
	if get(ev, "outputs", 0, "facets", "schema") == nil {
		t.Error("the end event lacks the schema facet")
	}
}

// TestCompleteEventOfAnUnproductiveRun: nothing new publishes no run
// folder, so the run completes without output statistics.
func TestCompleteEventOfAnUnproductiveRun(t *testing.T) {
	rep := unproductiveReport()
	ev := validateEvent(t, mustJSON(t, newTestTracker(t, t.TempDir()).End(rep)))
	if get(ev, "eventType") != "COMPLETE" {
		t.Errorf("eventType %v, want COMPLETE", get(ev, "eventType"))
	}
	if got := get(ev, "outputs", 0, "outputFacets", "outputStatistics"); got != nil {
		t.Errorf("outputStatistics %v, want none", got)
	}
	if got := get(ev, "run", "facets", "databrew_stage", "productive"); got != false {
		t.Errorf("productive %v, want false", got)
	}
}

func TestFailEvent(t *testing.T) {
	rep := failedReport()
	ev := validateEvent(t, mustJSON(t, newTestTracker(t, t.TempDir()).End(rep)))
	for _, c := range []struct {
		path []any
		want any
	}{
		{[]any{"eventType"}, "FAIL"},
		{[]any{"run", "facets", "errorMessage", "message"}, rep.Summary()},
		{[]any{"run", "facets", "errorMessage", "programmingLanguage"}, "go"},
		{[]any{"run", "facets", "errorMessage", "_schemaURL"}, ErrorMessageFacetURL},
		{[]any{"run", "facets", "databrew_stage", "outcome"}, "failed"},
		{[]any{"run", "facets", "databrew_stage", "stop"}, "blocked"},
		{[]any{"run", "facets", "databrew_stage", "exportPath"}, nil},
		{[]any{"outputs", 0, "outputFacets", "outputStatistics"}, nil},
	} {
		if got := get(ev, c.path...); got != c.want {
			t.Errorf("%v = %v, want %v", c.path, got, c.want)
		}
	}
}

// TestFailEventOfAFailedExport: a run whose export failed with an error
// fails the exit code, so its lineage fails too, and says why.
func TestFailEventOfAFailedExport(t *testing.T) {
	rep := failedExportReport()
	ev := validateEvent(t, mustJSON(t, newTestTracker(t, t.TempDir()).End(rep)))
	if get(ev, "eventType") != "FAIL" {
		t.Errorf("eventType %v, want FAIL", get(ev, "eventType"))
	}
	want := rep.Summary() + " · export failed: write part-00000.parquet: no space left on device"
	if got := get(ev, "run", "facets", "errorMessage", "message"); got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// TestFailEventOfARunThatNeverStarted: a locked storage path has no stage
// run id; the event still follows the spec.
func TestFailEventOfARunThatNeverStarted(t *testing.T) {
	rep := lockedReport()
	ev := validateEvent(t, mustJSON(t, newTestTracker(t, t.TempDir()).End(rep)))
	if get(ev, "eventType") != "FAIL" || get(ev, "run", "facets", "databrew_stage", "runId") != nil {
		t.Errorf("event %v", ev)
	}
}

func TestNamespaceFromCaller(t *testing.T) {
	tr, err := NewTracker(testConfig(t.TempDir()), "prod-crawlers")
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Start(testStart).Job.Namespace; got != "prod-crawlers" {
		t.Errorf("job namespace %q", got)
	}
}

// TestObjectStoreOutput: the output dataset of an S3 export has no size
// (that would cost a request per file) but its rows and files.
func TestObjectStoreOutput(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Output = "s3://lake/crawls/books?region=eu-west-1"
	tr, err := NewTracker(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	rep := publishedReport(t, t.TempDir())
	ev := validateEvent(t, mustJSON(t, tr.End(rep)))
	if get(ev, "outputs", 0, "namespace") != "s3://lake" || get(ev, "outputs", 0, "name") != "crawls/books" {
		t.Errorf("dataset %v %v", get(ev, "outputs", 0, "namespace"), get(ev, "outputs", 0, "name"))
	}
	if got := get(ev, "outputs", 0, "outputFacets", "outputStatistics", "size"); got != nil {
		t.Errorf("size %v, want none", got)
	}
	if got := get(ev, "outputs", 0, "outputFacets", "outputStatistics", "rowCount"); got != float64(1003) {
		t.Errorf("rowCount %v", got)
	}
}

func TestEachTrackerHasItsOwnRunID(t *testing.T) {
	a, b := newTestTracker(t, t.TempDir()), newTestTracker(t, t.TempDir())
	if a.RunID() == b.RunID() {
		t.Errorf("two runs share run id %s", a.RunID())
	}
}

// logicalTracker is the tracker of the logical run nightly-1 of the test
// config exporting into dir/out, as a shard or the commit makes it.
func logicalTracker(t *testing.T, dir string) *Tracker {
	t.Helper()
	tr, err := NewLogicalRunTracker(testConfig(dir), "", "nightly-1")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// shardReport is the verdict of shard name of the logical run nightly-1:
// it staged rows for the commit and published nothing.
func shardReport(name string, outcome verdict.Outcome) verdict.RunReport {
	return verdict.RunReport{
		Config: "books", RunID: "nightly-1", Shard: name, StartedAt: testStart, FinishedAt: testFinish,
		Crawl:   verdict.Crawl{Stop: verdict.StopQueueEmpty},
		Outcome: outcome, Productive: true, Started: true,
		Export: verdict.Export{Staged: true, Rows: 500, Files: []string{"part-00000.parquet"}},
	}
}

// commitReport is the combined verdict of the logical run nightly-1 that
// its commit published into dir.
func commitReport(t *testing.T, dir string) verdict.RunReport {
	rep := publishedReport(t, dir)
	rep.RunID = "nightly-1"
	rep.Shards = []verdict.RunReport{shardReport("0-of-2", verdict.OutcomeSuccess), shardReport("1-of-2", verdict.OutcomeSuccess)}
	return rep
}

// TestLogicalRunEvents: every shard and the commit, each making its own
// tracker, send events of one OpenLineage run: the logical run's id, the
// config's job, the export root. A shard sends START and, at its end,
// RUNNING with its verdict in brief and its shard, failed or not, with
// neither errorMessage nor statistics; the commit sends the COMPLETE,
// without a shard, with the statistics of what it published.
func TestLogicalRunEvents(t *testing.T) {
	dir := t.TempDir()
	want := LogicalRunID(DefaultNamespace, "books", "nightly-1")
	var shardEvents []map[string]any
	for i, outcome := range []verdict.Outcome{verdict.OutcomeSuccess, verdict.OutcomeFailed} {
		name := []string{"0-of-2", "1-of-2"}[i]
		tr := logicalTracker(t, dir).Shard(name)
		start := validateEvent(t, mustJSON(t, tr.Start(testStart)))
		end := validateEvent(t, mustJSON(t, tr.End(shardReport(name, outcome))))
		for _, c := range []struct {
			ev   map[string]any
			path []any
			want any
		}{
			{start, []any{"eventType"}, "START"},
			{start, []any{"run", "runId"}, want},
			{start, []any{"job", "name"}, "books"},
			{start, []any{"outputs", 0, "name"}, filepath.Join(dir, "out")},
			{start, []any{"run", "facets", "databrew_stage", "shard"}, name},
			{start, []any{"run", "facets", "databrew_stage", "runId"}, "nightly-1"},
			{end, []any{"eventType"}, "RUNNING"},
			{end, []any{"run", "runId"}, want},
			{end, []any{"run", "facets", "databrew_stage", "shard"}, name},
			{end, []any{"run", "facets", "databrew_stage", "runId"}, "nightly-1"},
			{end, []any{"run", "facets", "databrew_stage", "outcome"}, string(outcome)},
			{end, []any{"run", "facets", "errorMessage"}, nil},
			{end, []any{"outputs", 0, "outputFacets", "outputStatistics"}, nil},
		} {
			if got := get(c.ev, c.path...); got != c.want {
				t.Errorf("shard %s: %v = %v, want %v", name, c.path, got, c.want)
			}
		}
		shardEvents = append(shardEvents, start, end)
	}

	rep := commitReport(t, dir)
	ev := validateEvent(t, mustJSON(t, logicalTracker(t, dir).End(rep)))
	for _, c := range []struct {
		path []any
		want any
	}{
		{[]any{"eventType"}, "COMPLETE"},
		{[]any{"run", "runId"}, want},
		{[]any{"job", "namespace"}, "databrew-stage"},
		{[]any{"job", "name"}, "books"},
		{[]any{"outputs", 0, "namespace"}, "file"},
		{[]any{"outputs", 0, "name"}, filepath.Join(dir, "out")},
		{[]any{"outputs", 0, "outputFacets", "outputStatistics", "rowCount"}, float64(1003)},
		{[]any{"outputs", 0, "outputFacets", "outputStatistics", "fileCount"}, float64(2)},
		{[]any{"run", "facets", "databrew_stage", "runId"}, "nightly-1"},
		{[]any{"run", "facets", "databrew_stage", "outcome"}, "success"},
		{[]any{"run", "facets", "databrew_stage", "exportPath"}, rep.Export.Path},
		{[]any{"run", "facets", "databrew_stage", "shard"}, nil},
		{[]any{"run", "facets", "errorMessage"}, nil},
	} {
		if got := get(ev, c.path...); got != c.want {
			t.Errorf("commit: %v = %v, want %v", c.path, got, c.want)
		}
	}
	if len(shardEvents) != 4 {
		t.Fatalf("%d shard events", len(shardEvents))
	}
}

// TestLogicalRunFailEvent: a commit whose combined verdict failed sends
// FAIL with the errorMessage facet, under the logical run's id.
func TestLogicalRunFailEvent(t *testing.T) {
	rep := failedReport()
	rep.RunID = "nightly-1"
	ev := validateEvent(t, mustJSON(t, logicalTracker(t, t.TempDir()).End(rep)))
	if get(ev, "eventType") != "FAIL" || get(ev, "run", "runId") != LogicalRunID(DefaultNamespace, "books", "nightly-1") ||
		get(ev, "run", "facets", "errorMessage", "message") != rep.Summary() || get(ev, "run", "facets", "databrew_stage", "shard") != nil {
		t.Errorf("event %v", ev)
	}
}

// TestWholeRunsCarryNoShard: a whole run's events have no shard, and its
// START no stage run id (the stage picks it later).
func TestWholeRunsCarryNoShard(t *testing.T) {
	dir := t.TempDir()
	tr := newTestTracker(t, dir)
	for _, ev := range []RunEvent{tr.Start(testStart), tr.End(publishedReport(t, dir))} {
		if ev.Run.Facets.Stage.Shard != "" {
			t.Errorf("%s carries shard %q", ev.EventType, ev.Run.Facets.Stage.Shard)
		}
	}
	if tr.Start(testStart).Run.Facets.Stage.RunID != "" {
		t.Error("a whole run's START has a stage run id")
	}
}
