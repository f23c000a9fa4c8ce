package sink

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRunPath(t *testing.T) {
	at := time.Date(2026, 11, 30, 23, 59, 0, 0, time.FixedZone("X", -3600))
	if got, want := RunPath(at, "r1"), "dt=2026-12-01/run=r1"; got != want {
		t.Fatalf("RunPath = %s, want %s (the UTC day)", got, want)
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
