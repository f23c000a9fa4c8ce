package folder_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/publish/folder"
	"github.com/databrew/databrew-stage/publish/storagetest"
)

func open(t *testing.T) *folder.Storage {
	t.Helper()
	s, err := folder.Open(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) publish.Storage { return open(t) })
}

// files lists every file under dir, as slash-separated paths relative to
// it.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStagedPartsAreHiddenInTheRoot: a staged part is a file in the
// hidden staging folder beside the root, which no reader of the root
// lists; completed, it is at its key.
func TestStagedPartsAreHiddenInTheRoot(t *testing.T) {
	s := open(t)
	if s.Staging() != folder.BesideStaging(s.Root()) {
		t.Fatalf("staging in %s, want beside the root: %s", s.Staging(), folder.BesideStaging(s.Root()))
	}
	p := storagetest.Stage(t, s, "dt=2024-05-01/run=R/part-00000.parquet", []byte("data"))
	if got := files(t, s.Root()); len(got) != 0 {
		t.Fatalf("files in the root after StagePart: %q", got)
	}
	want := []string{"parts/" + p.Token + "/dt=2024-05-01/run=R/part-00000.parquet"}
	if got := files(t, s.Staging()); !slices.Equal(got, want) {
		t.Fatalf("files staged: %q; want %q", got, want)
	}
	if err := s.CompletePart(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got := files(t, s.Root()); !slices.Equal(got, []string{"dt=2024-05-01/run=R/part-00000.parquet"}) {
		t.Fatalf("files after CompletePart: %q", got)
	}
}

// TestStagingAreaIsNoKey: no key or prefix reaches into the staging area.
func TestStagingAreaIsNoKey(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	storagetest.Stage(t, s, "run/part", []byte("x"))
	for _, k := range []string{folder.StagingDir, folder.StagingDir + "/parts/x"} {
		if err := s.Put(ctx, k, nil); !errors.Is(err, publish.ErrBadKey) {
			t.Errorf("Put(%q) = %v; want ErrBadKey", k, err)
		}
		if _, err := s.Read(ctx, k); !errors.Is(err, publish.ErrBadKey) {
			t.Errorf("Read(%q) = %v; want ErrBadKey", k, err)
		}
	}
	if _, err := s.List(ctx, folder.StagingDir+"/"); !errors.Is(err, publish.ErrBadKey) {
		t.Errorf("List in the staging area = %v; want ErrBadKey", err)
	}
	if _, err := s.DeletePrefix(ctx, folder.StagingDir+"/parts"); !errors.Is(err, publish.ErrBadKey) {
		t.Errorf("DeletePrefix in the staging area = %v; want ErrBadKey", err)
	}
	for _, prefix := range []string{"", ".d", ".databrew", folder.StagingDir} {
		if keys, err := s.List(ctx, prefix); err != nil || len(keys) != 0 {
			t.Errorf("List(%q) = %q, %v; want nothing: the staging area is not listed", prefix, keys, err)
		}
	}
	if n, err := s.DeletePrefix(ctx, ".d"); err != nil || n != 0 {
		t.Errorf("DeletePrefix(%q) = %d, %v; want 0", ".d", n, err)
	}
	if st, _ := s.ListStaged(ctx, ""); len(st) != 1 {
		t.Errorf("the staged part went: %v", st)
	}
}

// TestNothingLeavesTheRoot: the suite's bad keys write nothing beside the
// root.
func TestNothingLeavesTheRoot(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	s, err := folder.Open(filepath.Join(parent, "a", "out"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"../x", "../../x", "a/../../x", "/x", "..", "../out2/x"} {
		_ = s.Put(ctx, k, []byte("escaped"))
		_, _ = s.PutIfAbsent(ctx, k, []byte("escaped"))
		if w, err := s.StagePart(ctx, k); err == nil {
			_, _ = w.Finish()
		}
		_, _ = s.DeletePrefix(ctx, k)
	}
	if got := files(t, parent); len(got) != 0 {
		t.Fatalf("files under the root's parent: %q", got)
	}
}

// TestCompletePartAfterACrashAtTheLink: a crash after the link and before
// the staged part went is rolled forward by completing again.
func TestCompletePartAfterACrashAtTheLink(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	p := storagetest.Stage(t, s, "run/part", []byte("data"))
	staged := filepath.Join(s.Staging(), "parts", p.Token, "run", "part")
	if err := os.MkdirAll(filepath.Join(s.Root(), "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(staged, filepath.Join(s.Root(), "run", "part")); err != nil {
		t.Fatal(err)
	}
	if err := s.CompletePart(ctx, p); err != nil {
		t.Fatalf("CompletePart after a crash at the link: %v", err)
	}
	if st, _ := s.ListStaged(ctx, ""); len(st) != 0 {
		t.Fatalf("still staged: %v", st)
	}
	// An object of the same size that is not the part's is another's.
	q := storagetest.Stage(t, s, "run/other", []byte("ours"))
	if err := os.WriteFile(filepath.Join(s.Root(), "run", "other"), []byte("them"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.CompletePart(ctx, q); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CompletePart over a file of the same size = %v; want fs.ErrExist", err)
	}
}

// TestCompleteFolderAfterACrashAtTheRename: a crash after the rename and
// before the staged parts went is rolled forward by completing again.
func TestCompleteFolderAfterACrashAtTheRename(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	parts := []publish.Part{storagetest.Stage(t, s, "run/a", []byte("a")), storagetest.Stage(t, s, "run/sub/b", []byte("bb"))}
	for _, p := range parts {
		dst := filepath.Join(s.Root(), filepath.FromSlash(p.Key))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		staged := filepath.Join(s.Staging(), "parts", p.Token, filepath.FromSlash(p.Key))
		if err := os.Link(staged, dst); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CompleteFolder(ctx, "run/", parts); err != nil {
		t.Fatalf("CompleteFolder after a crash at the rename: %v", err)
	}
	if st, _ := s.ListStaged(ctx, ""); len(st) != 0 {
		t.Fatalf("still staged: %v", st)
	}
}

// TestCompleteFolderOverEmptyFolders: folders without a file (left by a
// deletion, or a crash) do not stop a folder from appearing.
func TestCompleteFolderOverEmptyFolders(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	if err := os.MkdirAll(filepath.Join(s.Root(), "run", "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	parts := []publish.Part{storagetest.Stage(t, s, "run/a", []byte("a"))}
	if err := s.CompleteFolder(ctx, "run/", parts); err != nil {
		t.Fatal(err)
	}
	if got := files(t, filepath.Join(s.Root(), "run")); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("run holds %q", got)
	}
}

// TestDeletePrefixRemovesEmptiedFolders: no empty dt= folder stays.
func TestDeletePrefixRemovesEmptiedFolders(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	for _, k := range []string{"dt=1/run=A/part", "dt=1/run=A/_SUCCESS", "dt=1/run=B/part"} {
		if err := s.Put(ctx, k, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.DeletePrefix(ctx, "dt=1/run=A/"); err != nil || n != 2 {
		t.Fatalf("DeletePrefix = %d, %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "dt=1", "run=A")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("run=A is still there: %v", err)
	}
	if n, err := s.DeletePrefix(ctx, "dt=1/"); err != nil || n != 1 {
		t.Fatalf("DeletePrefix = %d, %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "dt=1")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("dt=1 is still there: %v", err)
	}
	if _, err := os.Stat(s.Root()); err != nil {
		t.Fatalf("the root went: %v", err)
	}
}

// TestAbortStagedRemovesOldDebris: what crashes left that no part owns
// goes once older than DebrisAge; younger, a process may still work on
// it.
func TestAbortStagedRemovesOldDebris(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	staging := s.Staging()
	old := time.Now().Add(-2 * folder.DebrisAge)
	mk := func(rel string, isDir bool, at time.Time) string {
		t.Helper()
		p := filepath.Join(staging, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if isDir {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	oldTmp := mk("tmp/put-1", false, old)
	newTmp := mk("tmp/put-2", false, time.Now())
	oldFolder := mk("complete/folder-1", true, old)
	keyless := mk("parts/0123456789abcdef0123456789abcdef", true, old)
	young := mk("parts/fedcba9876543210fedcba9876543210", true, time.Now())
	p := storagetest.Stage(t, s, "run/part", []byte("kept"))
	if n, err := s.AbortStaged(ctx, "", func(publish.Staged) bool { return false }); err != nil || n != 0 {
		t.Fatalf("AbortStaged = %d, %v; want 0", n, err)
	}
	for _, gone := range []string{oldTmp, oldFolder, keyless} {
		if _, err := os.Stat(gone); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("old debris %s stayed", gone)
		}
	}
	for _, kept := range []string{newTmp, young} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("young debris %s went: %v", kept, err)
		}
	}
	if err := s.CompletePart(ctx, p); err != nil {
		t.Fatalf("the staged part went with the debris: %v", err)
	}
}
