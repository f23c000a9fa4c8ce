package examples

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// dagsterRun is what testdata/dagster_stub.py prints: how the example
// declares its asset, what the asset yielded, the Failure it raised and
// what it logged.
type dagsterRun struct {
	Declared struct {
		Generator      bool `json:"generator"`
		OutputRequired bool `json:"output_required"`
		Checks         []struct {
			Name     string `json:"name"`
			Asset    string `json:"asset"`
			Blocking bool   `json:"blocking"`
		} `json:"checks"`
		Partitioned bool `json:"partitioned"`
	} `json:"declared"`
	Results []struct {
		Type        string `json:"type"`
		AssetKey    string `json:"asset_key"`
		DataVersion string `json:"data_version"`
		CheckName   string `json:"check_name"`
		Passed      bool   `json:"passed"`
		Severity    string `json:"severity"`
		Metadata    map[string]struct {
			Type  string `json:"type"`
			Value any    `json:"value"`
		} `json:"metadata"`
	} `json:"results"`
	Failure *struct {
		Description string         `json:"description"`
		Metadata    map[string]any `json:"metadata"`
	} `json:"failure"`
	Logs [][2]string `json:"logs"`
}

// types lists the types of what the asset yielded, in order.
func (r dagsterRun) types() []string {
	var out []string
	for _, x := range r.Results {
		out = append(out, x.Type)
	}
	return out
}

// The Dagster example runs the real stage under Pipes (Dagster stubbed
// out) and yields what Dagster is to record: a published night yields the
// materialization and the passing verdict check; a night with nothing new
// the check alone, no materialization; a failed crawl the failing check
// and then a Failure; a config error (exit 2) and a killed stage no check
// and a Failure.
func TestDagsterAssetYieldsTheVerdict(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on this machine")
	}
	stub, err := filepath.Abs(filepath.Join("testdata", "dagster_stub.py"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := filepath.Abs(filepath.Join("dagster", "databrew_asset.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := buildStage(t)
	site, config := booksSite(t, dir)
	toml, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	// The example runs configs/books.toml from its working folder.
	if err := os.MkdirAll(filepath.Join(dir, "configs"), 0o755); err != nil {
		t.Fatal(err)
	}
	setConfig := func(b []byte) {
		if err := os.WriteFile(filepath.Join(dir, "configs", "books.toml"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setConfig(toml)

	run := func(binDir string, partition ...string) dagsterRun {
		t.Helper()
		cmd := exec.Command(python, append([]string{stub, example}, partition...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("the asset under the Dagster stub: %v\n%s", err, stderr)
		}
		var r dagsterRun
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return r
	}
	check := func(r dagsterRun, i int, passed bool, outcome string) {
		t.Helper()
		c := r.Results[i]
		if c.Type != "check" || c.AssetKey != "books" || c.CheckName != "verdict" || c.Passed != passed || c.Severity != "ERROR" {
			t.Fatalf("result %d = %+v, want the verdict check of books, passed %v, severity ERROR", i, c, passed)
		}
		if m := c.Metadata["outcome"]; m.Type != "text" || m.Value != outcome {
			t.Fatalf("the check's outcome = %+v, want text %q", m, outcome)
		}
		if m := c.Metadata["summary"]; m.Type != "text" || !strings.HasPrefix(m.Value.(string), "books: "+outcome) {
			t.Fatalf("the check's summary = %+v", m)
		}
	}

	// A published night, a daily partition: the materialization, then the
	// passing check; the partition key becomes the export's dt=.
	r := run(filepath.Dir(bin), "2024-05-01")
	d := r.Declared
	if !d.Generator || d.OutputRequired || !d.Partitioned || len(d.Checks) != 1 ||
		d.Checks[0].Name != "verdict" || d.Checks[0].Asset != "books" || !d.Checks[0].Blocking {
		t.Fatalf("the asset is declared %+v, want a generator, output_required=False, partitioned, one blocking check verdict on books", d)
	}
	if got := strings.Join(r.types(), " "); got != "materialization check" || r.Failure != nil {
		t.Fatalf("published: yielded %q, failure %+v; want a materialization and a check, no failure", got, r.Failure)
	}
	m := r.Results[0]
	last, err := os.ReadFile(filepath.Join(dir, "state", ".last_run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var verdict struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal(last, &verdict); err != nil {
		t.Fatal(err)
	}
	if m.AssetKey != "books" || m.DataVersion == "" || m.DataVersion != verdict.RunID {
		t.Fatalf("the materialization = %+v, want asset books, data version the run id %q", m, verdict.RunID)
	}
	for name, typ := range map[string]string{"rows": "int", "new": "int", "changed": "int", "removed": "int", "path": "path", "run_id": "text", "files": "json"} {
		if m.Metadata[name].Type != typ {
			t.Errorf("materialization metadata %s = %+v, want type %s", name, m.Metadata[name], typ)
		}
	}
	if rows := m.Metadata["rows"].Value; rows != float64(30) {
		t.Errorf("rows = %v, want 30", rows)
	}
	if p, _ := m.Metadata["path"].Value.(string); !strings.Contains(p, "dt=2024-05-01") {
		t.Errorf("path = %q, want the run folder under dt=2024-05-01", p)
	}
	check(r, 1, true, "success")

	// Nothing new: the passing check alone, no materialization.
	r = run(filepath.Dir(bin))
	if got := strings.Join(r.types(), " "); got != "check" || r.Failure != nil {
		t.Fatalf("nothing new: yielded %q, failure %+v; want the check alone, no failure", got, r.Failure)
	}
	check(r, 0, true, "success")

	// A failed crawl: the failing check reaches Dagster, then the step
	// fails with the summary.
	site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, PathPrefix: "/catalogue/page-1.html", Status: 500})
	r = run(filepath.Dir(bin))
	if got := strings.Join(r.types(), " "); got != "check" || r.Failure == nil {
		t.Fatalf("failed: yielded %q, failure %+v; want the check, then a Failure", got, r.Failure)
	}
	check(r, 0, false, "failed")
	if !strings.HasPrefix(r.Failure.Description, "databrew-stage exited 1: books: failed") || r.Failure.Metadata["exit_code"] != float64(1) {
		t.Fatalf("failed: Failure %+v", r.Failure)
	}
	site.ClearFaults()

	// A config error: nothing ran, nothing reported, a Failure.
	setConfig([]byte("name = \n"))
	r = run(filepath.Dir(bin))
	if len(r.Results) != 0 || r.Failure == nil || !strings.HasPrefix(r.Failure.Description, "databrew-stage exited 2") {
		t.Fatalf("config error: yielded %q, failure %+v; want nothing, a Failure for exit 2", r.types(), r.Failure)
	}
	setConfig(toml)

	// A stage killed before it reported: no check, a Failure naming the
	// signal.
	killed := filepath.Join(t.TempDir(), "databrew-stage")
	if err := os.WriteFile(killed, []byte("#!/bin/sh\nkill -KILL $$\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = run(filepath.Dir(killed))
	if len(r.Results) != 0 || r.Failure == nil || r.Failure.Description != "databrew-stage was killed by signal 9" {
		t.Fatalf("killed: yielded %q, failure %+v; want nothing, a Failure naming signal 9", r.types(), r.Failure)
	}
}
