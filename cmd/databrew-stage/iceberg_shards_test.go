//go:build iceberg

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/icebergtest"
	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/publish/iceberg"
	"github.com/databrew/databrew-stage/verdict"
)

// TestShardsIntoIceberg runs the binary built with -tags iceberg as the
// shards of logical runs and their commits into an Iceberg table (SQLite
// catalog, local warehouse): see shardRuns; then a commit killed with
// SIGKILL at each of its steps and run again adds exactly one snapshot.
func TestShardsIntoIceberg(t *testing.T) {
	dir := t.TempDir()
	catalog, warehouse := filepath.Join(dir, "catalog.db"), "file://"+filepath.Join(dir, "warehouse")
	b := newIcebergBin(t, icebergTarget{uri: "sqlite://" + catalog, warehouse: warehouse,
		read: func(t *testing.T) icebergtest.Table { return icebergtest.Read(t, catalog, warehouse, "shop", "books") }})
	b.shardRuns()
	for i, step := range publish.CommitSteps {
		runID := fmt.Sprintf("k%d", i)
		b.site.SetPrice(4+i, 20+float64(i))
		b.shards(runID)
		killCommandAt(t, b.bin, string(step), "commit", "--run-id", runID, "--shards", "3", b.cfgPath)
		if _, code := b.commit(runID); code != 0 {
			t.Fatalf("the commit of %s after a kill at %s exited %d", runID, step, code)
		}
		rows, runs := b.scan()
		if len(rows) != 32+i || len(runs) != 3+i || runs[2+i] != runID {
			t.Fatalf("after a kill at %s and a commit: %d rows, snapshots of runs %v", step, len(rows), runs)
		}
		b.expectVersionsOnce(rows)
	}
}

// TestShardsIntoIcebergOnS3 is shardRuns on a SQLite catalog whose
// warehouse is a prefix of an S3 bucket (versitygw): the control files of
// the logical runs are in the bucket, under the table's location.
func TestShardsIntoIcebergOnS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	catalog, warehouse := filepath.Join(t.TempDir(), "catalog.db"), srv.URL("warehouse")
	b := newIcebergBin(t, icebergTarget{uri: "sqlite://" + catalog, warehouse: warehouse,
		read: func(t *testing.T) icebergtest.Table { return icebergtest.Read(t, catalog, warehouse, "shop", "books") }})
	b.shardRuns()
	if entries, err := os.ReadDir(filepath.Join(srv.Dir(), s3test.Bucket, "warehouse", "shop.db", "books", iceberg.ControlFolder)); err != nil || len(entries) == 0 {
		t.Errorf("no control files in the bucket under warehouse/shop.db/books/%s: %v", iceberg.ControlFolder, err)
	}
}

// shards runs the 3 shards of the logical run runID, each staging into
// the table and publishing nothing.
func (b *icebergBin) shards(runID string) {
	b.t.Helper()
	for i := range 3 {
		rep, code := b.exec("run", "--json", "--shard", fmt.Sprintf("%d/3", i), "--run-id", runID, b.cfgPath)
		if code != 0 || rep.Export.Published {
			b.t.Fatalf("shard %d of %s: exit %d, export %+v", i, runID, code, rep.Export)
		}
	}
}

// commit commits the logical run runID of 3 shards.
func (b *icebergBin) commit(runID string) (verdict.RunReport, int) {
	b.t.Helper()
	return b.exec("commit", "--json", "--run-id", runID, "--shards", "3", b.cfgPath)
}

// exec runs the binary with args and returns its verdict and exit code.
func (b *icebergBin) exec(args ...string) (verdict.RunReport, int) {
	b.t.Helper()
	cmd := exec.Command(b.bin, args...)
	cmd.Env = append(os.Environ(), "GORACE="+subprocessGORACE())
	out, err := cmd.Output()
	var rep verdict.RunReport
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		b.t.Fatalf("%v: %v %v\n%s", args, err, jerr, out)
	}
	return rep, cmd.ProcessState.ExitCode()
}

// shardRuns: the shards of a logical run add no snapshot; its commit adds
// one carrying the run id, with every item once; a commit run again adds
// nothing and exits 0; after a price changes, the next logical run's one
// snapshot holds that row alone.
func (b *icebergBin) shardRuns() {
	t := b.t
	t.Helper()
	b.shards("r1")
	if _, runs := b.scan(); len(runs) != 0 {
		t.Fatalf("the shards alone added snapshots: %v", runs)
	}
	rep, code := b.commit("r1")
	rows, runs := b.scan()
	if code != 0 || !rep.Export.Published || rep.Export.Rows != 30 || len(runs) != 1 || runs[0] != "r1" || len(rows) != 30 {
		t.Fatalf("commit r1: exit %d, export %+v; snapshots %v, %d rows", code, rep.Export, runs, len(rows))
	}
	if _, code := b.commit("r1"); code != 0 {
		t.Fatalf("a commit run again exited %d", code)
	}
	b.site.SetPrice(3, 9.25)
	b.shards("r2")
	rep, code = b.commit("r2")
	rows, runs = b.scan()
	if code != 0 || rep.Export.Rows != 1 || len(runs) != 2 || runs[1] != "r2" || len(rows) != 31 {
		t.Fatalf("commit r2: exit %d, export %+v; snapshots %v, %d rows", code, rep.Export, runs, len(rows))
	}
	b.expectVersionsOnce(rows)
}
