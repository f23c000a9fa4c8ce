package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/internal/testkit/schemacheck"
	"github.com/databrew/databrew-stage/verdict"
)

// tableSnapshot is a snapshot id beyond a float64's exact integers.
const tableSnapshot = int64(7340955470153711426)

// tableConfig is a config publishing into the Iceberg table shop.books of
// a SQLite catalog with a local warehouse.
func tableConfig() config.Config {
	return config.Config{Name: "books", Output: "iceberg://shop.books",
		Iceberg: &config.Iceberg{Namespace: "shop", Table: "books", Catalog: config.IcebergSQL,
			URI: "sqlite:///var/lib/databrew/catalog.db", Warehouse: "file:///var/lib/databrew/warehouse"},
		Extract: extract.Spec{Fields: []extract.FieldSpec{{Name: "title"}, {Name: "price", Type: extract.TypeFloat64}}}}
}

// tableVerdict is the verdict of a run of tableConfig that committed
// snapshot id (0: none, nothing new).
func tableVerdict(runID string, id int64) verdict.RunReport {
	at := time.Date(2026, 11, 30, 0, 23, 5, 0, time.UTC)
	r := verdict.RunReport{Config: "books", RunID: runID, SchemaVersion: verdict.SchemaVersion,
		StartedAt: at, FinishedAt: at.Add(time.Minute), Crawl: verdict.Crawl{Stop: verdict.StopQueueEmpty, Gaps: []verdict.Gap{}, Fields: map[string]verdict.FieldCounts{},
			Breaker: verdict.Breaker{Events: []verdict.BreakerEvent{}}},
		Outcome: verdict.OutcomeSuccess, Rule: 4, Started: true,
		Export: verdict.Export{Files: []string{}, Reason: "nothing new or changed to publish"}}
	if id != 0 {
		r.Productive, r.Items.New = true, 12
		r.Export = verdict.Export{Published: true, Path: "iceberg://shop.books (sqlite:///var/lib/databrew/catalog.db)", Rows: 12,
			Files: []string{"file:///var/lib/databrew/warehouse/shop.db/books/data/a.parquet"}}
	}
	r.Export.Table = &verdict.Table{Format: verdict.TableFormatIceberg, Name: "shop.books", Catalog: "sqlite:///var/lib/databrew/catalog.db",
		Location: "file:///var/lib/databrew/warehouse/shop.db/books", SnapshotID: id}
	return r
}

// TestVerdictSchemaTable: the schema takes a verdict naming a table, with
// a snapshot or without, and refuses a table object that breaks its rules.
func TestVerdictSchemaTable(t *testing.T) {
	for _, id := range []int64{tableSnapshot, 0} {
		b, err := json.Marshal(tableVerdict("R1", id))
		if err != nil {
			t.Fatal(err)
		}
		if err := schemacheck.Verdict(b); err != nil {
			t.Errorf("snapshot %d: the schema refuses %s: %v", id, b, err)
		}
	}
	for name, breakIt := range map[string]func(m map[string]any){
		"no name":            func(m map[string]any) { delete(m, "name") },
		"another format":     func(m map[string]any) { m["format"] = "delta" },
		"snapshot id 0":      func(m map[string]any) { m["snapshot_id"] = 0 },
		"snapshot id string": func(m map[string]any) { m["snapshot_id"] = "7340955470153711426" },
		"unknown key":        func(m map[string]any) { m["snapshot"] = 1 },
	} {
		var v map[string]any
		b, _ := json.Marshal(tableVerdict("R1", tableSnapshot))
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		breakIt(v["export"].(map[string]any)["table"].(map[string]any))
		b, _ = json.Marshal(v)
		if err := schemacheck.Verdict(b); err == nil {
			t.Errorf("%s: the schema takes %s", name, b)
		}
	}
}

// TestTableReportsToPipes: the materialization of a run into a table
// names the table (also under Dagster's dagster/table_name) and the
// snapshot id, an exact 64-bit integer.
func TestTableReportsToPipes(t *testing.T) {
	messages := filepath.Join(t.TempDir(), "pipes.jsonl")
	vars := pipesEnv(t, "books", messages)
	s, err := openPipes(Env{Getenv: func(k string) string { return vars[k] }, Stdout: io.Discard, Stderr: io.Discard})
	if err != nil || s == nil {
		t.Fatalf("open pipes: %v", err)
	}
	reportToPipes(s, tableVerdict("R1", tableSnapshot), 1, slog.New(slog.DiscardHandler))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	msgs := pipesMessages(t, messages)
	if got := methods(msgs); len(got) != 4 || got[1] != "report_asset_materialization" {
		t.Fatalf("Pipes methods %v", got)
	}
	for key, want := range map[string]any{"table": "shop.books", "dagster/table_name": "shop.books", "table_format": "iceberg",
		"catalog": "sqlite:///var/lib/databrew/catalog.db", "table_location": "file:///var/lib/databrew/warehouse/shop.db/books"} {
		if got := msgs[1].get("params", "metadata", key, "raw_value"); got != want {
			t.Errorf("metadata %s = %v, want %v", key, got, want)
		}
	}
	if got := msgs[1].get("params", "metadata", "snapshot_id", "type"); got != "int" {
		t.Errorf("snapshot_id has type %v, want int", got)
	}
	if raw := readFile(t, messages); !strings.Contains(raw, `"snapshot_id":{"raw_value":7340955470153711426,"type":"int"}`) {
		t.Errorf("the messages do not hold the snapshot id in full:\n%s", raw)
	}
}

// TestTableMetricsFile: the metrics file names the table and the snapshot
// of a run into a table, beside the last success.
func TestTableMetricsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stage.prom")
	if err := writeMetricsFile(path, []verdict.RunReport{tableVerdict("R1", tableSnapshot)}); err != nil {
		t.Fatal(err)
	}
	families := textfile(t, path)
	samples := families["databrew_stage_last_run_table_info"].GetMetric()
	want := map[string]string{"config": "books", "table": "shop.books", "format": "iceberg", "snapshot_id": "7340955470153711426"}
	if len(samples) != 1 || samples[0].GetGauge().GetValue() != 1 {
		t.Fatalf("databrew_stage_last_run_table_info: %v, want one sample of 1:\n%s", samples, readFile(t, path))
	}
	got := map[string]string{}
	for _, pair := range samples[0].GetLabel() {
		got[pair.GetName()] = pair.GetValue()
	}
	if !maps.Equal(got, want) {
		t.Errorf("databrew_stage_last_run_table_info labels %v, want %v", got, want)
	}
	if _, ok := gaugeOf(families, "databrew_stage_last_success_timestamp_seconds", "books"); !ok {
		t.Errorf("no last success:\n%s", readFile(t, path))
	}
}

// TestTableLineage: the events of a run into a table name the table's
// location, with a symlink to its catalog name; the COMPLETE, of a run
// and of a commit alike, carries the snapshot id as the dataset version.
func TestTableLineage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lineage.jsonl")
	var stderr bytes.Buffer
	env := Env{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}
	logger := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	cfg := tableConfig()

	l := lineageSetup{file: file, cmd: "run"}
	l.start(ctx, env, logger, cfg, nil).finish(ctx, tableVerdict("R1", tableSnapshot))
	c := lineageSetup{file: file, cmd: "commit"}
	c.commit(ctx, env, logger, cfg, "nightly-1", tableVerdict("nightly-1", 42))
	if stderr.Len() > 0 {
		t.Fatalf("stderr: %s", stderr.String())
	}
	events := lineageLines(t, file)
	if len(events) != 3 {
		t.Fatalf("%d events, want START, COMPLETE and the commit's COMPLETE", len(events))
	}
	for i, ev := range events {
		if ns, name := ev.get("outputs", 0, "namespace"), ev.get("outputs", 0, "name"); ns != "file" || name != "/var/lib/databrew/warehouse/shop.db/books" {
			t.Errorf("event %d: output %v %v, want the table's location", i, ns, name)
		}
		link := ev.get("outputs", 0, "facets", "symlinks", "identifiers", 0)
		if !equalJSON(link, map[string]any{"namespace": "sqlite:///var/lib/databrew/catalog.db", "name": "shop.books", "type": "TABLE"}) {
			t.Errorf("event %d: symlink %v", i, link)
		}
	}
	for i, want := range []any{nil, "7340955470153711426", "42"} {
		if got := events[i].get("outputs", 0, "facets", "version", "datasetVersion"); got != want {
			t.Errorf("event %d (%v): datasetVersion %v, want %v", i, events[i].get("eventType"), got, want)
		}
	}
}

// equalJSON compares two values as JSON.
func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
