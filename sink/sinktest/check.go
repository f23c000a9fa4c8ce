package sinktest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/databrew/databrew-stage/sink"
)

// checkColumns compares the columns a reader saw with the schema.
func checkColumns(t *testing.T, got []Column, s sink.Schema) {
	t.Helper()
	if len(got) != len(s.Fields) {
		t.Fatalf("%d columns, want %d: %+v", len(got), len(s.Fields), got)
	}
	for i, c := range s.Fields {
		g := got[i]
		want := Column{Name: c.Name, Type: c.Type, List: c.List, Nullable: !c.Required}
		if c.Type == "timestamp" {
			want.TimeZone, want.TimeUnit = "UTC", "us"
		}
		if g != want {
			t.Errorf("column %d = %+v, want %+v", i, g, want)
		}
	}
}

// checkRows compares the rows a reader saw with the rows written.
func checkRows(t *testing.T, got [][]any, want []sink.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d rows, want %d", len(got), len(want))
	}
	bad := 0
	for i, r := range want {
		exp := expected(r)
		if len(got[i]) != len(exp) {
			t.Fatalf("row %d has %d values, want %d", i, len(got[i]), len(exp))
		}
		for j := range exp {
			if !same(got[i][j], exp[j]) {
				t.Errorf("row %d (%s) column %d = %#v, want %#v", i, r.Key, j, got[i][j], exp[j])
				if bad++; bad > 20 {
					t.Fatal("too many differences")
				}
			}
		}
	}
}

// checkFiles checks the FileInfo against the folder: names in sequence,
// sizes and digests of the bytes on disk, and no other part files.
func checkFiles(t *testing.T, dir string, format sink.Format, infos []sink.FileInfo) {
	t.Helper()
	var names []string
	for i, info := range infos {
		want := fmt.Sprintf("part-%05d%s", i, format.Ext())
		if info.Name != want {
			t.Errorf("file %d is named %q, want %q", i, info.Name, want)
		}
		b, err := os.ReadFile(filepath.Join(dir, info.Name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if info.Bytes != int64(len(b)) || info.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: FileInfo says %d bytes sha256 %s; the file has %d bytes sha256 %x", info.Name, info.Bytes, info.SHA256, len(b), sum)
		}
		names = append(names, info.Name)
	}
	if got := listDir(t, dir); !slices.Equal(got, names) {
		t.Errorf("folder holds %q, want %q", got, names)
	}
}

// listDir returns the sorted names in dir.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
