//go:build iceberg

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/icebergtest"
)

// TestDemoIceberg runs demo --iceberg with the binary built with -tags
// iceberg (make demo-iceberg): its two crawls publish into the table
// shop.books of a SQLite catalog in the demo's folder, one snapshot each,
// which iceberg-go's own scan reads as the 60 first items and the 9 rows
// of the change; the demo ends saying how to read the table.
func TestDemoIceberg(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	out, err := exec.Command("databrew-stage", "demo", "--iceberg", "--dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("demo --iceberg: %v\n%s", err, out)
	}
	for _, want := range []string{"published 60 rows to iceberg://shop.books", "published 9 rows to iceberg://shop.books", "iceberg_scan('"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out)
		}
	}
	tbl := icebergtest.Read(t, filepath.Join(dir, "catalog.db"), "file://"+filepath.Join(dir, "warehouse"), "shop", "books")
	if len(tbl.Runs) != 2 || len(tbl.Rows) != 69 {
		t.Fatalf("the demo's table: snapshots of runs %v, %d rows; want 2 snapshots, 69 rows", tbl.Runs, len(tbl.Rows))
	}
	changes := map[any]int{}
	for _, r := range tbl.Rows {
		changes[r["_change"]]++
	}
	if changes["new"] != 64 || changes["changed"] != 3 || changes["removed"] != 2 {
		t.Errorf("the table's changes %v, want 64 new, 3 changed, 2 removed", changes)
	}
}
