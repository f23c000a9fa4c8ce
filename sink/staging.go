package sink

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// StagingFolder is the staging root inside an output root, used when
// staging cannot live beside it. The leading "." hides it from the file
// discovery of pyarrow datasets, Spark and Hive, and from Python's and
// bash's ** globs.
const StagingFolder = ".databrew-staging"

// besideRoot is the staging root beside the output root: a hidden sibling,
// outside every listing of the root.
func (l Layout) besideRoot() string {
	return filepath.Join(filepath.Dir(l.Output), "."+filepath.Base(l.Output)+".staging")
}

// insideRoot is the staging root inside the output root, on its file
// system.
func (l Layout) insideRoot() string { return filepath.Join(l.Output, StagingFolder) }

// StagingRoots lists the places a run may be staged in: beside the output
// root and inside it. Debris of a run that never published is in either.
func (l Layout) StagingRoots() []string { return []string{l.besideRoot(), l.insideRoot()} }

// Stage creates the folder a run's files are written to before they are
// published, and returns it. The folder must be on the output root's file
// system, for only a rename publishes all of a run's files at once. It is
// beside the output root when a folder renamed from there lands in the
// root: no reader of the root ever lists it. It is inside the root, in
// StagingFolder, when the root is a mount point (the rename would fail
// with EXDEV) or its parent cannot be written to.
func (l Layout) Stage(runID string) (string, error) {
	root := l.besideRoot()
	if !renames(root, l.insideRoot()) {
		root = l.insideRoot()
	}
	dir := filepath.Join(root, "run="+runID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	return dir, nil
}

// renames reports whether a folder created in from can be renamed into
// to. It cannot across file systems, nor between two mounts of one file
// system, nor when either folder cannot be created. It removes what it
// created, except from when the answer is yes.
func renames(from, to string) bool {
	if os.MkdirAll(from, 0o755) != nil {
		return false
	}
	ok := false
	if probe, err := os.MkdirTemp(from, "probe-"); err == nil {
		if os.MkdirAll(to, 0o755) == nil {
			dest := filepath.Join(to, filepath.Base(probe))
			if os.Rename(probe, dest) == nil {
				ok, probe = true, dest
			}
		}
		_ = os.Remove(probe)
		_ = os.Remove(to) // only when empty
	}
	if !ok {
		_ = os.Remove(from) // only when empty
	}
	return ok
}

// RemoveStaging deletes a run's staging folder, and its staging root if
// that is left empty, or every staging root when runID is empty: debris
// of runs that never published, in either place a run may be staged in.
func RemoveStaging(l Layout, runID string) error {
	var errs []error
	for _, root := range l.StagingRoots() {
		dir := root
		if runID != "" {
			dir = filepath.Join(root, "run="+runID)
		}
		// A path that is not there needs no removal, and asking to remove
		// it would fail on a read-only file system or under a file.
		_, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err == nil {
			err = os.RemoveAll(dir)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove staging %s: %w", dir, err))
			continue
		}
		_ = os.Remove(root) // only when empty
	}
	return errors.Join(errs...)
}
