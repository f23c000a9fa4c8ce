package sink

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/testkit/mounttest"
)

// entries lists the names in dir; nil when dir does not exist.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	list, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	return names
}

// expectStagedIn checks that Stage chose root, and that the probe left
// nothing behind in either place.
func expectStagedIn(t *testing.T, l Layout, staging, root string) {
	t.Helper()
	if want := filepath.Join(root, "run=r1"); staging != want {
		t.Fatalf("Stage = %s, want %s", staging, want)
	}
	for _, r := range l.StagingRoots() {
		var want []string
		if r == root {
			want = []string{"run=r1"}
		}
		if got := entries(t, r); !slices.Equal(got, want) {
			t.Fatalf("%s holds %v, want %v", r, got, want)
		}
	}
}

// promoteOne publishes a staged file and checks that it arrived.
func promoteOne(t *testing.T, l Layout, staging string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(staging, "part-00000.parquet"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	runDir := l.RunDir(time.Now(), "r1")
	if err := Promote(staging, runDir); err != nil {
		t.Fatalf("promote: %v", err)
	}
	if !Exists(filepath.Join(runDir, "part-00000.parquet")) {
		t.Fatal("the staged file is not in the run folder")
	}
}

func TestStage_BesideTheOutputRootOnOneFileSystem(t *testing.T) {
	l := Layout{Output: filepath.Join(t.TempDir(), "lake", "books")}
	staging, err := l.Stage("r1")
	if err != nil {
		t.Fatal(err)
	}
	expectStagedIn(t, l, staging, l.besideRoot())
	promoteOne(t, l, staging)
}

// TestStage_InsideTheOutputRootWhenItIsAMountPoint: a folder beside the
// root is on the parent's file system, from where a rename into the root
// fails with EXDEV.
func TestStage_InsideTheOutputRootWhenItIsAMountPoint(t *testing.T) {
	l := Layout{Output: filepath.Join(t.TempDir(), "books")}
	mounttest.Tmpfs(t, l.Output, "size=1m")
	staging, err := l.Stage("r1")
	if err != nil {
		t.Fatal(err)
	}
	expectStagedIn(t, l, staging, l.insideRoot())
	promoteOne(t, l, staging)
}

// TestStage_InsideTheOutputRootWhenItsParentIsReadOnly: the output root is
// writable, the folder it is in is not.
func TestStage_InsideTheOutputRootWhenItsParentIsReadOnly(t *testing.T) {
	lake := filepath.Join(t.TempDir(), "lake")
	l := Layout{Output: filepath.Join(lake, "books")}
	mounttest.Tmpfs(t, lake, "size=1m")
	mounttest.Tmpfs(t, l.Output, "size=1m")
	mounttest.Remount(t, lake, "ro")
	staging, err := l.Stage("r1")
	if err != nil {
		t.Fatal(err)
	}
	expectStagedIn(t, l, staging, l.insideRoot())
	promoteOne(t, l, staging)
}

// TestStage_AnOutputPathThatIsAFile fails with an error that names the
// path and says why.
func TestStage_AnOutputPathThatIsAFile(t *testing.T) {
	l := Layout{Output: filepath.Join(t.TempDir(), "books")}
	if err := os.WriteFile(l.Output, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := l.Stage("r1")
	if err == nil || !strings.Contains(err.Error(), l.Output) || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("Stage under a file: %v", err)
	}
	if Exists(l.besideRoot()) {
		t.Fatal("Stage left the unused staging root beside the output")
	}
}

// TestPromote_AFailedRenameLeavesNoEmptyDateFolder: a folder staged on
// another file system cannot be renamed into the output root (EXDEV); the
// dt= folder made for it goes again.
func TestPromote_AFailedRenameLeavesNoEmptyDateFolder(t *testing.T) {
	dir := t.TempDir()
	l := Layout{Output: filepath.Join(dir, "books")}
	mounttest.Tmpfs(t, l.Output, "size=1m")
	staging := filepath.Join(dir, "elsewhere", "run=r1")
	if err := os.MkdirAll(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	runDir := l.RunDir(time.Now(), "r1")
	if err := Promote(staging, runDir); err == nil || Exists(runDir) {
		t.Fatalf("promote across file systems: %v, run folder there %v", err, Exists(runDir))
	}
	if got := entries(t, l.Output); len(got) != 0 {
		t.Fatalf("the output root holds %v after a failed promote, want nothing", got)
	}
}
