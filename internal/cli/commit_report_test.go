package cli

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/dagsterpipes"
	"github.com/databrew/databrew-stage/lineage"
)

// pipesEnv is the environment Dagster gives a process it launches under
// Pipes: a context naming asset, and messages appended to the file
// messages.
func pipesEnv(t *testing.T, asset, messages string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for k, v := range map[string]any{
		dagsterpipes.ContextEnv: map[string]any{"data": map[string]any{
			"asset_keys": []string{asset}, "partition_key": nil, "run_id": "dagster-run-1", "extras": map[string]any{},
		}},
		dagsterpipes.MessagesEnv: map[string]any{"path": messages},
	} {
		s, err := dagsterpipes.EncodeParam(v)
		if err != nil {
			t.Fatal(err)
		}
		vars[k] = s
	}
	return vars
}

// pipesMessages reads a Pipes messages file: each message decoded, in
// order, log messages left out.
func pipesMessages(t *testing.T, path string) []event {
	t.Helper()
	var out []event
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		ev := decodeEvent(t, []byte(line))
		if ev.get("method") != "log" {
			out = append(out, ev)
		}
	}
	return out
}

// methods lists the methods of messages.
func methods(messages []event) []string {
	var out []string
	for _, m := range messages {
		s, _ := m.get("method").(string)
		out = append(out, s)
	}
	return out
}

// textfile parses a --metrics-file as node-exporter's collector does.
func textfile(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(readFile(t, path)))
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return families
}

// sample returns the value of the sample of metric name whose labels are
// exactly labels, and whether the file has exactly one.
func sample(families map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	found, value := 0, 0.0
	for _, m := range families[name].GetMetric() {
		got := map[string]string{}
		for _, pair := range m.GetLabel() {
			got[pair.GetName()] = pair.GetValue()
		}
		if maps.Equal(got, labels) {
			found++
			value = m.GetGauge().GetValue()
		}
	}
	return value, found == 1
}

// TestCommit_ReportsTheLogicalRun: two shards of a real logical run crawl
// the test site, each writing the one metrics file, the one lineage file
// and Pipes messages; then the commit writes them too. The metrics file
// parses, with the logical run's metrics under the config alone (as a
// whole run's) and each shard's under its shard label; the lineage file
// holds one OpenLineage run: each shard's START and RUNNING, naming the
// shard, then exactly one COMPLETE without a shard, all under the logical
// run's id, the config's job and the export root; the commit's Pipes
// messages hold one materialization and the passing verdict check, the
// shards' neither, only their verdicts in custom messages.
func TestCommit_ReportsTheLogicalRun(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30, PerPage: 10})
	books := f.config("books", "", nil)
	metricsFile := filepath.Join(f.dir, "databrew-stage.prom")
	lineageFile := filepath.Join(f.dir, "lineage.jsonl")

	for _, shard := range []string{"0/2", "1/2"} {
		messages := filepath.Join(f.dir, "shard-"+shard[:1]+".pipes.jsonl")
		r := runMainEnv(t, pipesEnv(t, "books", messages), "run", "--shard", shard, "--run-id", "nightly-1",
			"--metrics-file", metricsFile, "--lineage-file", lineageFile, books)
		if r.code != ExitOK || strings.Contains(r.stderr, "openlineage") {
			t.Fatalf("shard %s: exit %d, stderr %q", shard, r.code, r.stderr)
		}
		msgs := pipesMessages(t, messages)
		if got := methods(msgs); !slices.Equal(got, []string{"opened", "report_custom_message", "closed"}) {
			t.Fatalf("shard %s: Pipes methods %v, want opened, one custom message, closed: no materialization, no check", shard, got)
		}
		name := shard[:1] + "-of-2"
		for _, c := range []struct {
			path []any
			want any
		}{
			{[]any{"params", "payload", "kind"}, "databrew_stage.shard_verdict"},
			{[]any{"params", "payload", "config"}, "books"},
			{[]any{"params", "payload", "run_id"}, "nightly-1"},
			{[]any{"params", "payload", "shard"}, name},
			{[]any{"params", "payload", "passed"}, true},
			{[]any{"params", "payload", "metadata", "shard", "raw_value"}, name},
			{[]any{"params", "payload", "metadata", "shard", "type"}, "text"},
			{[]any{"params", "payload", "metadata", "outcome", "raw_value"}, "success"},
		} {
			if got := msgs[1].get(c.path...); got != c.want {
				t.Errorf("shard %s: custom message %v = %v, want %v", shard, c.path, got, c.want)
			}
		}
	}

	messages := filepath.Join(f.dir, "commit.pipes.jsonl")
	r := runMainEnv(t, pipesEnv(t, "books", messages), "commit", books, "--run-id", "nightly-1", "--shards", "2",
		"--metrics-file", metricsFile, "--lineage-file", lineageFile)
	if r.code != ExitOK || !strings.Contains(r.stderr, "published 30 rows") || strings.Contains(r.stderr, "openlineage") {
		t.Fatalf("commit: exit %d, stderr %q; want 0, 30 rows published and no word of lineage", r.code, r.stderr)
	}

	// Prometheus: the logical run's metrics as a whole run's, the shards'
	// beside them.
	families := textfile(t, metricsFile)
	whole := map[string]string{"config": "books"}
	with := func(k, v string) map[string]string { m := maps.Clone(whole); m[k] = v; return m }
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"databrew_stage_last_run_outcome", with("outcome", "success"), 1},
		{"databrew_stage_last_run_outcome", with("outcome", "failed"), 0},
		{"databrew_stage_last_run_exported_rows", whole, 30},
		{"databrew_stage_last_run_export_failed", whole, 0},
		{"databrew_stage_last_run_items", with("change", "new"), 30},
		{"databrew_stage_last_run_info", map[string]string{"config": "books", "stop": "queue_empty", "started": "true"}, 1},
		{"databrew_stage_last_run_exported_rows", map[string]string{"config": "books", "shard": "0-of-2"}, 0},
		{"databrew_stage_last_run_exported_rows", map[string]string{"config": "books", "shard": "1-of-2"}, 0},
		{"databrew_stage_last_run_outcome", map[string]string{"config": "books", "shard": "1-of-2", "outcome": "success"}, 1},
	} {
		if got, ok := sample(families, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (found: %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if len(families) != 14 {
		t.Errorf("%d metric families, want the 14 of a whole run", len(families))
	}
	requests, _ := sample(families, "databrew_stage_last_run_requests", whole)
	shard0, _ := sample(families, "databrew_stage_last_run_requests", map[string]string{"config": "books", "shard": "0-of-2"})
	shard1, _ := sample(families, "databrew_stage_last_run_requests", map[string]string{"config": "books", "shard": "1-of-2"})
	if requests == 0 || requests != shard0+shard1 {
		t.Errorf("the logical run made %v requests, its shards %v and %v: want their sum", requests, shard0, shard1)
	}
	lastSuccess, ok := sample(families, "databrew_stage_last_success_timestamp_seconds", whole)
	if !ok || lastSuccess == 0 {
		t.Errorf("no last success of the logical run")
	}

	// OpenLineage: one run, the shards' START and RUNNING, one COMPLETE.
	runID := lineage.LogicalRunID(lineage.DefaultNamespace, "books", "nightly-1")
	events := lineageLines(t, lineageFile)
	var types []string
	for i, ev := range events {
		types = append(types, ev.get("eventType").(string))
		for _, c := range []struct {
			path []any
			want any
		}{
			{[]any{"run", "runId"}, runID},
			{[]any{"job", "namespace"}, "databrew-stage"},
			{[]any{"job", "name"}, "books"},
			{[]any{"outputs", 0, "namespace"}, "file"},
			{[]any{"outputs", 0, "name"}, filepath.Join(f.dir, "out", "books")},
			{[]any{"run", "facets", "databrew_stage", "runId"}, "nightly-1"},
		} {
			if got := ev.get(c.path...); got != c.want {
				t.Errorf("event %d (%v): %v = %v, want %v", i, ev.get("eventType"), c.path, got, c.want)
			}
		}
	}
	if want := []string{"START", "RUNNING", "START", "RUNNING", "COMPLETE"}; !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	for i, shard := range []string{"0-of-2", "0-of-2", "1-of-2", "1-of-2"} {
		if got := events[i].get("run", "facets", "databrew_stage", "shard"); got != shard {
			t.Errorf("event %d: shard %v, want %s", i, got, shard)
		}
	}
	complete := events[4]
	if got := complete.get("run", "facets", "databrew_stage", "shard"); got != nil {
		t.Errorf("the COMPLETE names shard %v, want none", got)
	}
	if got := complete.get("outputs", 0, "outputFacets", "outputStatistics", "rowCount"); got != float64(30) {
		t.Errorf("the COMPLETE's rowCount is %v, want 30", got)
	}
	if got := complete.get("outputs", 0, "outputFacets", "outputStatistics", "fileCount"); got != float64(2) {
		t.Errorf("the COMPLETE's fileCount is %v, want 2 (a part per shard)", got)
	}
	if got, ok := complete.get("outputs", 0, "outputFacets", "outputStatistics", "size").(float64); !ok || got <= 0 {
		t.Errorf("the COMPLETE's size is %v, want the bytes of the parts", got)
	}

	// Dagster Pipes: the commit materializes the asset once.
	msgs := pipesMessages(t, messages)
	if got := methods(msgs); !slices.Equal(got, []string{"opened", "report_asset_materialization", "report_asset_check", "closed"}) {
		t.Fatalf("commit: Pipes methods %v", got)
	}
	for _, c := range []struct {
		ev   event
		path []any
		want any
	}{
		{msgs[1], []any{"params", "asset_key"}, "books"},
		{msgs[1], []any{"params", "data_version"}, "nightly-1"},
		{msgs[1], []any{"params", "metadata", "rows", "raw_value"}, float64(30)},
		{msgs[1], []any{"params", "metadata", "new", "raw_value"}, float64(30)},
		{msgs[1], []any{"params", "metadata", "run_id", "raw_value"}, "nightly-1"},
		{msgs[1], []any{"params", "metadata", "shard"}, nil},
		{msgs[2], []any{"params", "check_name"}, "verdict"},
		{msgs[2], []any{"params", "passed"}, true},
		{msgs[2], []any{"params", "metadata", "outcome", "raw_value"}, "success"},
	} {
		if got := c.ev.get(c.path...); got != c.want {
			t.Errorf("commit: %v %v = %v, want %v", c.ev.get("method"), c.path, got, c.want)
		}
	}
	if files, _ := msgs[1].get("params", "metadata", "files", "raw_value").([]any); len(files) != 2 {
		t.Errorf("commit: the materialization lists files %v, want 2", files)
	}

	// A commit run again (a task retried after its pod died past
	// _SUCCESS, before it reported) changes nothing and reports the run
	// as committed once more: the same COMPLETE, the same materialization.
	again := filepath.Join(f.dir, "again.pipes.jsonl")
	r = runMainEnv(t, pipesEnv(t, "books", again), "commit", books, "--run-id", "nightly-1", "--shards", "2",
		"--lineage-file", lineageFile)
	if r.code != ExitOK || !strings.Contains(r.stderr, "committed already") {
		t.Fatalf("second commit: exit %d, stderr %q", r.code, r.stderr)
	}
	events = lineageLines(t, lineageFile)
	if len(events) != 6 || events[5].get("eventType") != "COMPLETE" || events[5].get("run", "runId") != runID ||
		events[5].get("eventTime") != complete.get("eventTime") {
		t.Errorf("second commit: events %v, want the COMPLETE again, at the same time", events)
	}
	msgs = pipesMessages(t, again)
	if got := methods(msgs); !slices.Equal(got, []string{"opened", "report_asset_materialization", "report_asset_check", "closed"}) ||
		msgs[1].get("params", "data_version") != "nightly-1" {
		t.Errorf("second commit: Pipes messages %v", msgs)
	}
}

// TestCommit_ReportsAFailedLogicalRun: a commit with a shard missing
// publishes nothing and exits 1; its reports say the logical run failed:
// FAIL with the errorMessage facet (after the one shard's START and
// RUNNING, under one run id), the failed outcome in the metrics, and under
// Pipes the failing verdict check without a materialization.
func TestCommit_ReportsAFailedLogicalRun(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20, PerPage: 10})
	books := f.config("books", "", nil)
	metricsFile := filepath.Join(f.dir, "databrew-stage.prom")
	lineageFile := filepath.Join(f.dir, "lineage.jsonl")
	if r := runMain(t, "run", "--shard", "0/2", "--run-id", "nightly-2", "--lineage-file", lineageFile, books); r.code != ExitOK {
		t.Fatalf("shard: exit %d", r.code)
	}
	messages := filepath.Join(f.dir, "commit.pipes.jsonl")
	r := runMainEnv(t, pipesEnv(t, "books", messages), "commit", books, "--run-id", "nightly-2", "--shards", "2", "--json",
		"--metrics-file", metricsFile, "--lineage-file", lineageFile)
	if r.code != ExitFailed || !strings.Contains(r.stderr, "shard 1-of-2 left no verdict") {
		t.Fatalf("commit: exit %d, stderr %q; want 1 and the missing shard named", r.code, r.stderr)
	}
	var verdict struct {
		Outcome string `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &verdict); err != nil || verdict.Outcome != "failed" {
		t.Fatalf("commit --json: %q (%v)", r.stdout, err)
	}

	events := lineageLines(t, lineageFile)
	var types []string
	for _, ev := range events {
		types = append(types, ev.get("eventType").(string))
		if ev.get("run", "runId") != lineage.LogicalRunID(lineage.DefaultNamespace, "books", "nightly-2") {
			t.Errorf("%v event under run %v", ev.get("eventType"), ev.get("run", "runId"))
		}
	}
	if !slices.Equal(types, []string{"START", "RUNNING", "FAIL"}) {
		t.Fatalf("events %v, want START, RUNNING, FAIL", types)
	}
	if msg, _ := events[2].get("run", "facets", "errorMessage", "message").(string); !strings.Contains(msg, "shard 1-of-2") {
		t.Errorf("the FAIL's message %q does not name the missing shard", msg)
	}

	families := textfile(t, metricsFile)
	if got, ok := sample(families, "databrew_stage_last_run_outcome", map[string]string{"config": "books", "outcome": "failed"}); !ok || got != 1 {
		t.Errorf("outcome failed = %v (found: %v), want 1", got, ok)
	}
	if _, ok := sample(families, "databrew_stage_last_success_timestamp_seconds", map[string]string{"config": "books"}); ok {
		t.Error("a logical run that failed set a last success")
	}

	msgs := pipesMessages(t, messages)
	if got := methods(msgs); !slices.Equal(got, []string{"opened", "report_asset_check", "closed"}) {
		t.Fatalf("commit: Pipes methods %v, want the check alone", got)
	}
	if msgs[1].get("params", "passed") != false || msgs[1].get("params", "metadata", "outcome", "raw_value") != "failed" {
		t.Errorf("commit: check %v", msgs[1])
	}
}
