//go:build iceberg

package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/icebergtest"
	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/verdict"
)

// TestPublishIntoIceberg runs the binary built with -tags iceberg (this
// test binary, as databrew-stage) with output = "iceberg://shop.books" on
// a SQLite catalog and a local warehouse. The first run creates the table
// and one snapshot carrying its run id; a rerun of the unchanged site adds
// none; after a price changes, the next run adds one snapshot with that
// row alone. Then a run killed with SIGKILL at each step of the publish
// is followed by a run that leaves every version in the table once. The
// table is read with iceberg-go's catalog and scan, not the stage's code.
func TestPublishIntoIceberg(t *testing.T) {
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
	run := func(env ...string) verdict.RunReport {
		t.Helper()
		cmd := exec.Command(bin, "run", "--json", cfgPath)
		cmd.Env = append(append(os.Environ(), "GORACE="+subprocessGORACE()), env...)
		out, err := cmd.Output()
		var rep verdict.RunReport
		if jerr := json.Unmarshal(out, &rep); err != nil || jerr != nil {
			t.Fatalf("run: %v %v\n%s", err, jerr, out)
		}
		return rep
	}
	first := run()
	if !first.Export.Published || first.Export.Rows != 30 || !strings.HasPrefix(first.Export.Path, "iceberg://shop.books") {
		t.Fatalf("first run: %+v", first.Export)
	}
	if again := run(); again.Export.Published {
		t.Fatalf("a rerun with nothing new published %+v", again.Export)
	}
	site.SetPrice(3, 9.25)
	third := run()
	rows, runs := scanIceberg(t, dir)
	if !third.Export.Published || third.Export.Rows != 1 || len(runs) != 2 || runs[0] != first.RunID || runs[1] != third.RunID || len(rows) != 31 {
		t.Fatalf("after a change: export %+v; snapshots of runs %v; %d rows", third.Export, runs, len(rows))
	}
	for i, step := range publish.Steps {
		site.SetPrice(4+i, 20+float64(i))
		killAt(t, bin, cfgPath, string(step))
		run()
		rows, runs = scanIceberg(t, dir)
		if len(rows) != 32+i || len(runs) != 3+i {
			t.Fatalf("after a kill at %s and a run: %d rows, snapshots of runs %v", step, len(rows), runs)
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

// scanIceberg reads the table shop.books with iceberg-go (see
// icebergtest): each row as key|change|price, and the run id of each
// snapshot, oldest first.
func scanIceberg(t *testing.T, dir string) (rows []string, runs []string) {
	t.Helper()
	tbl := icebergtest.Read(t, filepath.Join(dir, "catalog.db"), "file://"+filepath.Join(dir, "warehouse"), "shop", "books")
	for _, r := range tbl.Rows {
		rows = append(rows, fmt.Sprintf("%s|%s|%v", r["_key"], r["_change"], r["price"]))
	}
	return rows, tbl.Runs
}
