//go:build iceberg

package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/verdict"
)

// TestShardsIntoIceberg runs the binary built with -tags iceberg as the
// shards of logical runs and their commits into an Iceberg table (SQLite
// catalog, local warehouse): the shards add no snapshot; the commit adds
// one carrying the run id, with every item once; a commit run again adds
// nothing and exits 0; a changed price makes the next logical run's one
// snapshot hold that row alone; a commit killed with SIGKILL at each of
// its steps and run again adds exactly one snapshot.
func TestShardsIntoIceberg(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	site := catalogsite.New(catalogsite.Options{Items: 30, PerPage: 10})
	web := httptest.NewServer(site)
	defer web.Close()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "books.toml")
	cfg := fmt.Sprintf("name = \"books\"\nstart_urls = [%q]\nstorage = \"state\"\noutput = \"iceberg://shop.books\"\n%s\n[iceberg]\nuri = %q\nwarehouse = %q\n",
		catalogsite.StartURL(web.URL), catalogsite.ExtractConfig, "sqlite://"+filepath.Join(dir, "catalog.db"), "file://"+filepath.Join(dir, "warehouse"))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	exec1 := func(args ...string) (verdict.RunReport, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "GORACE="+subprocessGORACE())
		out, err := cmd.Output()
		var rep verdict.RunReport
		if jerr := json.Unmarshal(out, &rep); jerr != nil {
			t.Fatalf("%v: %v %v\n%s", args, err, jerr, out)
		}
		return rep, cmd.ProcessState.ExitCode()
	}
	shards := func(runID string) {
		t.Helper()
		for i := range 3 {
			rep, code := exec1("run", "--json", "--shard", fmt.Sprintf("%d/3", i), "--run-id", runID, cfgPath)
			if code != 0 || rep.Export.Published {
				t.Fatalf("shard %d of %s: exit %d, export %+v", i, runID, code, rep.Export)
			}
		}
	}
	commit := func(runID string) (verdict.RunReport, int) {
		t.Helper()
		return exec1("commit", "--json", "--run-id", runID, "--shards", "3", cfgPath)
	}
	shards("r1")
	if _, runs := scanIceberg(t, dir); len(runs) != 0 {
		t.Fatalf("the shards alone added snapshots: %v", runs)
	}
	rep, code := commit("r1")
	rows, runs := scanIceberg(t, dir)
	if code != 0 || !rep.Export.Published || rep.Export.Rows != 30 || len(runs) != 1 || runs[0] != "r1" || len(rows) != 30 {
		t.Fatalf("commit r1: exit %d, export %+v; snapshots %v, %d rows", code, rep.Export, runs, len(rows))
	}
	if _, code := commit("r1"); code != 0 {
		t.Fatalf("a commit run again exited %d", code)
	}
	site.SetPrice(3, 9.25)
	shards("r2")
	rep, code = commit("r2")
	rows, runs = scanIceberg(t, dir)
	if code != 0 || rep.Export.Rows != 1 || len(runs) != 2 || runs[1] != "r2" || len(rows) != 31 {
		t.Fatalf("commit r2: exit %d, export %+v; snapshots %v, %d rows", code, rep.Export, runs, len(rows))
	}
	for i, step := range publish.CommitSteps {
		runID := fmt.Sprintf("k%d", i)
		site.SetPrice(4+i, 20+float64(i))
		shards(runID)
		killCommandAt(t, bin, string(step), "commit", "--run-id", runID, "--shards", "3", cfgPath)
		if _, code := commit(runID); code != 0 {
			t.Fatalf("the commit of %s after a kill at %s exited %d", runID, step, code)
		}
		rows, runs = scanIceberg(t, dir)
		if len(rows) != 32+i || len(runs) != 3+i || runs[2+i] != runID {
			t.Fatalf("after a kill at %s and a commit: %d rows, snapshots of runs %v", step, len(rows), runs)
		}
		seen := map[string]bool{}
		for _, r := range rows {
			if seen[r] {
				t.Fatalf("after a kill at %s: row %s twice", step, r)
			}
			seen[r] = true
		}
	}
}
