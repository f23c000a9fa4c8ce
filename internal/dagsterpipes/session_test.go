package dagsterpipes

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func env(t *testing.T, ctx, msgs any) func(string) string {
	t.Helper()
	vars := map[string]string{}
	for k, v := range map[string]any{ContextEnv: ctx, MessagesEnv: msgs} {
		if v == nil {
			continue
		}
		s, err := EncodeParam(v)
		if err != nil {
			t.Fatal(err)
		}
		vars[k] = s
	}
	return func(k string) string { return vars[k] }
}

func TestOpenOutsideDagsterIsNoSession(t *testing.T) {
	s, err := Open(func(string) string { return "" }, nil, nil)
	if s != nil || err != nil {
		t.Fatalf("Open = %v, %v; want nil, nil", s, err)
	}
}

func TestASessionWritesEnvelopedLinesToItsChannel(t *testing.T) {
	dir := t.TempDir()
	ctxFile := filepath.Join(dir, "context.json")
	if err := os.WriteFile(ctxFile, []byte(`{"asset_keys":["a"],"partition_key":"2024-05-01","run_id":"r1","extras":{"k":1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	s, err := Open(env(t, map[string]any{"path": ctxFile}, map[string]any{"stdio": "stderr"}), &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if s.Context.RunID != "r1" || *s.Context.PartitionKey != "2024-05-01" || s.Context.AssetKeys[0] != "a" {
		t.Fatalf("context = %+v", s.Context)
	}
	s.Log("WARNING", "tripped")
	s.ReportMaterialization("a", "v1", Metadata{"rows": Int(3)})
	s.ReportCheck("a", "verdict", false, SeverityError, nil)
	s.ReportCustomMessage(map[string]any{"shard": "1-of-2"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.Log("INFO", "after close") // dropped
	if stdout.Len() != 0 {
		t.Fatalf("stdout got %q", stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	want := []string{"opened", "log", "report_asset_materialization", "report_asset_check", "report_custom_message", "closed"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %s", len(lines), len(want), stderr.String())
	}
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m["__dagster_pipes_version"] != "0.1" || m["method"] != want[i] {
			t.Fatalf("line %d = %s, want method %s at version 0.1", i+1, line, want[i])
		}
	}
	if !strings.Contains(lines[2], `"data_version":"v1"`) || !strings.Contains(lines[2], `"rows":{"raw_value":3,"type":"int"}`) {
		t.Fatalf("materialization = %s", lines[2])
	}
	if !strings.Contains(lines[4], `"params":{"payload":{"shard":"1-of-2"}}`) {
		t.Fatalf("custom message = %s", lines[4])
	}
}

func TestOpenRefusesBrokenParameters(t *testing.T) {
	for name, getenv := range map[string]func(string) string{
		"only the context": env(t, map[string]any{"data": map[string]any{}}, nil),
		"not base64":       func(k string) string { return "%%%" },
		"no path or data":  env(t, map[string]any{"other": 1}, map[string]any{"stdio": "stdout"}),
		"a bad stream":     env(t, map[string]any{"data": map[string]any{}}, map[string]any{"stdio": "stdlog"}),
	} {
		if s, err := Open(getenv, nil, nil); err == nil || s != nil {
			t.Errorf("%s: Open = %v, %v; want an error", name, s, err)
		}
	}
}
