package sink

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestLayout(t *testing.T) {
	l := Layout{Output: filepath.Join("lake", "books")}
	at := time.Date(2026, 11, 30, 23, 59, 0, 0, time.FixedZone("X", -3600))
	if got, want := l.RunDir(at, "r1"), filepath.Join("lake", "books", "dt=2026-12-01", "run=r1"); got != want {
		t.Fatalf("RunDir = %s, want %s (the UTC day)", got, want)
	}
	roots := []string{filepath.Join("lake", ".books.staging"), filepath.Join("lake", "books", StagingFolder)}
	if got := l.StagingRoots(); !slices.Equal(got, roots) {
		t.Fatalf("StagingRoots = %v, want %v: beside the output root, then inside it", got, roots)
	}
	if got, want := l.VerdictPath(), filepath.Join("lake", "books", "_verdict.json"); got != want {
		t.Fatalf("VerdictPath = %s", got)
	}
}

func TestPromoteAndComplete(t *testing.T) {
	root := t.TempDir()
	l := Layout{Output: filepath.Join(root, "books")}
	staging, err := l.Stage("r1")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"part-00000.parquet", "part-00001.parquet"} {
		if err := os.WriteFile(filepath.Join(staging, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runDir := l.RunDir(time.Now(), "r1")
	if err := Promote(staging, runDir); err != nil {
		t.Fatal(err)
	}
	if err := SyncPromoted(staging, runDir); err != nil {
		t.Fatal(err)
	}
	if Exists(staging) || Exists(filepath.Dir(staging)) {
		t.Fatal("the staging folder must be gone after the rename")
	}
	files, _ := filepath.Glob(filepath.Join(runDir, "*.parquet"))
	if len(files) != 2 || IsComplete(runDir) {
		t.Fatalf("promoted files = %v, complete = %v", files, IsComplete(runDir))
	}
	if err := Complete(runDir, []byte(`{"rows":2}`)); err != nil {
		t.Fatal(err)
	}
	if !IsComplete(runDir) {
		t.Fatal("Complete must write _SUCCESS")
	}
	if b, _ := os.ReadFile(filepath.Join(runDir, ManifestFile)); string(b) != `{"rows":2}` {
		t.Fatalf("manifest = %q", b)
	}
	// A second promote to the same folder must not merge runs.
	if err := os.MkdirAll(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(staging, "x.parquet"), nil, 0o644)
	if err := Promote(staging, runDir); err == nil || !Exists(staging) {
		t.Fatal("promoting onto an existing run folder must fail before renaming")
	}
}

func TestRemoveStaging(t *testing.T) {
	l := Layout{Output: filepath.Join(t.TempDir(), "books")}
	for _, root := range l.StagingRoots() {
		for _, id := range []string{"a", "b"} {
			if err := os.MkdirAll(filepath.Join(root, "run="+id), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := RemoveStaging(l, "a"); err != nil {
		t.Fatalf("remove one: %v", err)
	}
	for _, root := range l.StagingRoots() {
		if Exists(filepath.Join(root, "run=a")) || !Exists(filepath.Join(root, "run=b")) {
			t.Fatalf("remove one: %s must hold run=b only", root)
		}
	}
	if err := RemoveStaging(l, "b"); err != nil {
		t.Fatalf("remove the last one: %v", err)
	}
	for _, root := range l.StagingRoots() {
		if Exists(root) {
			t.Fatalf("remove the last one left the empty %s", root)
		}
		if err := os.MkdirAll(filepath.Join(root, "run=c"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveStaging(l, ""); err != nil {
		t.Fatalf("remove all: %v", err)
	}
	for _, root := range l.StagingRoots() {
		if Exists(root) {
			t.Fatalf("remove all left %s", root)
		}
	}
	// An output path that is a file holds no staging: nothing to remove.
	if err := os.Remove(l.Output); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Output, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RemoveStaging(l, ""); err != nil {
		t.Fatalf("remove under a file: %v", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out", "_verdict.json")
	for _, content := range []string{"first", "second"} {
		if err := WriteFileAtomic(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Fatalf("content = %q, want %q", b, content)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

func TestCreateFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "_decision.json")
	if created, err := CreateFileOnce(path, []byte("first")); err != nil || !created {
		t.Fatalf("first: %v, %v", created, err)
	}
	if created, err := CreateFileOnce(path, []byte("second")); err != nil || created {
		t.Fatalf("second: %v, %v; want not created", created, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Fatalf("the file holds %q, want the first writer's", b)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp-*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}
