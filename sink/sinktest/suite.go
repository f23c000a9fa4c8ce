package sinktest

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/sink"
)

// Run checks that files a sink.FileSet writes in format read back, through
// read, exactly as written.
func Run(t *testing.T, format sink.Format, read Reader) {
	s := suite{format: format, read: read}
	t.Run("Types", s.types)
	t.Run("PartsAndGroups", s.partsAndGroups)
	t.Run("ManyPages", s.manyPages)
	t.Run("ExactlyMaxFileRows", s.exactlyMaxFileRows)
	t.Run("Defaults", s.defaults)
	t.Run("NothingWritten", s.nothingWritten)
	t.Run("Abort", s.abort)
	t.Run("AbortKeepsOtherFiles", s.abortKeepsOtherFiles)
	t.Run("RejectedRows", s.rejectedRows)
	t.Run("NoOverwrite", s.noOverwrite)
	t.Run("Closed", s.closed)
	t.Run("BadSchema", s.badSchema)
}

type suite struct {
	format sink.Format
	read   Reader
}

// write writes rows into a new FileSet in dir and closes it.
func (s suite) write(t *testing.T, dir string, schema sink.Schema, opts sink.Options, rows []sink.Row) []sink.FileInfo {
	t.Helper()
	opts.Format = s.format
	w, err := sink.NewFileSet(dir, schema, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatalf("Write(%s): %v", r.Key, err)
		}
	}
	infos, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return infos
}

func (s suite) types(t *testing.T) {
	dir := t.TempDir()
	meta := map[string]string{"run_id": "run-1", "config": "shop 🛒", "empty": ""}
	rows := typeRows()
	infos := s.write(t, dir, testSchema(), sink.Options{RowGroupRows: 3, Metadata: meta}, rows)
	if len(infos) != 1 || infos[0].Rows != int64(len(rows)) {
		t.Fatalf("FileInfo = %+v, want one file of %d rows", infos, len(rows))
	}
	checkFiles(t, dir, s.format, infos)
	got := s.read(t, filepath.Join(dir, infos[0].Name))
	checkColumns(t, got.Columns, testSchema())
	checkRows(t, got.Rows, rows)
	if !maps.Equal(got.Metadata, meta) {
		t.Errorf("metadata = %q, want %q", got.Metadata, meta)
	}
	if !slices.Equal(got.Groups, []int64{3, 1}) {
		t.Errorf("row groups = %v, want [3 1]", got.Groups)
	}
}

func (s suite) partsAndGroups(t *testing.T) {
	dir := t.TempDir()
	rows := seqRows(0, 20)
	infos := s.write(t, dir, testSchema(), sink.Options{RowGroupRows: 3, MaxFileRows: 7}, rows)
	checkFiles(t, dir, s.format, infos)
	wantRows := []int64{7, 7, 6}
	wantGroups := [][]int64{{3, 3, 1}, {3, 3, 1}, {3, 3}}
	if len(infos) != len(wantRows) {
		t.Fatalf("%d files, want %d: %+v", len(infos), len(wantRows), infos)
	}
	var all [][]any
	for i, info := range infos {
		if info.Rows != wantRows[i] {
			t.Errorf("%s: FileInfo.Rows = %d, want %d", info.Name, info.Rows, wantRows[i])
		}
		got := s.read(t, filepath.Join(dir, info.Name))
		checkColumns(t, got.Columns, testSchema())
		if !slices.Equal(got.Groups, wantGroups[i]) {
			t.Errorf("%s: row groups = %v, want %v", info.Name, got.Groups, wantGroups[i])
		}
		if int64(len(got.Rows)) != info.Rows {
			t.Errorf("%s: read %d rows, FileInfo says %d", info.Name, len(got.Rows), info.Rows)
		}
		all = append(all, got.Rows...)
	}
	checkRows(t, all, rows)
}

func (s suite) manyPages(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	rows := seqRows(0, 6000)
	for i := range rows {
		rows[i].Values[0] = strings.Repeat(fmt.Sprint(i), 60) // ~1.5 MB of titles: several pages
	}
	infos := s.write(t, dir, testSchema(), sink.Options{RowGroupRows: 2500}, rows)
	checkFiles(t, dir, s.format, infos)
	if len(infos) != 1 {
		t.Fatalf("%d files, want 1", len(infos))
	}
	got := s.read(t, filepath.Join(dir, infos[0].Name))
	if !slices.Equal(got.Groups, []int64{2500, 2500, 1000}) {
		t.Errorf("row groups = %v, want [2500 2500 1000]", got.Groups)
	}
	checkRows(t, got.Rows, rows)
}

func (s suite) exactlyMaxFileRows(t *testing.T) {
	dir := t.TempDir()
	infos := s.write(t, dir, testSchema(), sink.Options{MaxFileRows: 5}, seqRows(0, 5))
	checkFiles(t, dir, s.format, infos)
	if len(infos) != 1 || infos[0].Rows != 5 {
		t.Fatalf("FileInfo = %+v, want one file of 5 rows", infos)
	}
}

func (s suite) defaults(t *testing.T) {
	dir := t.TempDir()
	rows := seqRows(0, 100)
	infos := s.write(t, dir, testSchema(), sink.Options{}, rows)
	checkFiles(t, dir, s.format, infos)
	if len(infos) != 1 {
		t.Fatalf("%d files, want 1", len(infos))
	}
	got := s.read(t, filepath.Join(dir, infos[0].Name))
	if !slices.Equal(got.Groups, []int64{100}) {
		t.Errorf("row groups = %v, want [100]", got.Groups)
	}
	checkRows(t, got.Rows, rows)
	if len(got.Metadata) != 0 {
		t.Errorf("metadata = %q, want none", got.Metadata)
	}
}

func (s suite) nothingWritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	infos := s.write(t, dir, testSchema(), sink.Options{}, nil)
	if len(infos) != 0 {
		t.Errorf("FileInfo = %+v, want none", infos)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("folder exists after writing nothing: %v", err)
	}
}
