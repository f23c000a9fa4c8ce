package sinktest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/databrew/databrew-stage/sink"
)

func (s suite) abort(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	w, err := sink.NewFileSet(dir, testSchema(), sink.Options{Format: s.format, MaxFileRows: 5, RowGroupRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range seqRows(0, 12) {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(listDir(t, dir)); n != 3 {
		t.Fatalf("%d files before Abort, want 3", n)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("folder left after Abort: %v", err)
	}
	if err := w.Write(seqRow(13)); err == nil {
		t.Error("Write after Abort succeeded")
	}
	if err := w.Abort(); err != nil {
		t.Errorf("second Abort: %v", err)
	}
}

func (s suite) abortKeepsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "_manifest.json")
	if err := os.WriteFile(other, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := sink.NewFileSet(dir, testSchema(), sink.Options{Format: s.format, MaxFileRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range seqRows(0, 3) {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"_manifest.json"}) {
		t.Errorf("after Abort the folder holds %q, want only _manifest.json", got)
	}
}

func (s suite) rejectedRows(t *testing.T) {
	dir := t.TempDir()
	w, err := sink.NewFileSet(dir, testSchema(), sink.Options{Format: s.format})
	if err != nil {
		t.Fatal(err)
	}
	good := seqRow(0)
	bad := map[string]func(r *sink.Row){
		"wrong type":       func(r *sink.Row) { r.Values[3] = 3 },
		"float for int":    func(r *sink.Row) { r.Values[6] = 1.5 },
		"null required":    func(r *sink.Row) { r.Values[1] = nil },
		"null list":        func(r *sink.Row) { r.Values[8] = nil },
		"list for scalar":  func(r *sink.Row) { r.Values[0] = []string{"a"} },
		"scalar for list":  func(r *sink.Row) { r.Values[7] = "a" },
		"wrong list type":  func(r *sink.Row) { r.Values[9] = []int64{1} },
		"short values":     func(r *sink.Row) { r.Values = r.Values[:3] },
		"long values":      func(r *sink.Row) { r.Values = append(r.Values, "x") },
		"unknown change":   func(r *sink.Row) { r.Change = "updated" },
		"time as a string": func(r *sink.Row) { r.Values[5] = "2026-01-01T00:00:00Z" },
	}
	for name, mutate := range bad {
		r := seqRow(1)
		r.Values = slices.Clone(r.Values)
		mutate(&r)
		if err := w.Write(r); err == nil {
			t.Errorf("%s: Write accepted %v", name, r.Values)
		}
	}
	if err := w.Write(good); err != nil {
		t.Fatalf("Write after rejected rows: %v", err)
	}
	infos, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].Rows != 1 {
		t.Fatalf("FileInfo = %+v, want one file of 1 row", infos)
	}
	got := s.read(t, filepath.Join(dir, infos[0].Name))
	checkRows(t, got.Rows, []sink.Row{good})
}

func (s suite) noOverwrite(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "part-00000"+s.format.Ext())
	if err := os.WriteFile(name, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := sink.NewFileSet(dir, testSchema(), sink.Options{Format: s.format})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(seqRow(0)); err == nil {
		t.Fatal("Write over an existing part file succeeded")
	}
	if err := w.Write(seqRow(1)); err == nil {
		t.Error("Write after a failed create succeeded")
	}
	if _, err := w.Close(); err == nil {
		t.Error("Close after a failed create succeeded")
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(name); err != nil || string(b) != "keep" {
		t.Errorf("existing file = %q, %v; want it untouched", b, err)
	}
}

func (s suite) closed(t *testing.T) {
	w, err := sink.NewFileSet(t.TempDir(), testSchema(), sink.Options{Format: s.format})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(seqRow(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(seqRow(1)); err == nil {
		t.Error("Write after Close succeeded")
	}
	if _, err := w.Close(); err == nil {
		t.Error("second Close succeeded")
	}
}

func (s suite) badSchema(t *testing.T) {
	user := append([]sink.Column{}, userColumns[:2]...)
	for name, schema := range map[string]sink.Schema{
		"no system columns": {Fields: user},
		"duplicate name":    sink.NewSchema(append(user, user[0])),
		"system name":       sink.NewSchema(append(user, sink.Column{Name: sink.ColumnKey, Type: "string"})),
		"unknown type":      sink.NewSchema(append(user, sink.Column{Name: "x", Type: "decimal"})),
		"empty name":        sink.NewSchema(append(user, sink.Column{Type: "string"})),
	} {
		if _, err := sink.NewFileSet(t.TempDir(), schema, sink.Options{Format: s.format}); err == nil {
			t.Errorf("%s: NewFileSet accepted the schema", name)
		}
	}
	if _, err := sink.NewFileSet(t.TempDir(), testSchema(), sink.Options{Format: "csv"}); err == nil {
		t.Error("NewFileSet accepted format csv")
	}
}
