package sink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"

	"github.com/databrew/databrew-stage/internal/testhook"
)

// The files of a run folder and of the export root.
const (
	ManifestFile = "_manifest.json"
	SuccessFile  = "_SUCCESS"
	VerdictFile  = "_verdict.json"
)

// Layout names the folders of one config's export root:
//
//	<output>/dt=YYYY-MM-DD/run=<run_id>/part-00000.parquet
//	<output>/dt=YYYY-MM-DD/run=<run_id>/_manifest.json
//	<output>/dt=YYYY-MM-DD/run=<run_id>/_SUCCESS
//	<output>/_verdict.json
//
// Files are first written to a staging folder on the output root's file
// system (see Stage), so a reader globbing <output>/**/*.parquet never
// sees a run being written.
type Layout struct {
	Output string
}

// RunDir is the folder a run publishes into; the date is the run's UTC
// start day.
func (l Layout) RunDir(startedAt time.Time, runID string) string {
	return filepath.Join(l.Output, "dt="+startedAt.UTC().Format(time.DateOnly), "run="+runID)
}

// VerdictPath is the export root's latest verdict.
func (l Layout) VerdictPath() string { return filepath.Join(l.Output, VerdictFile) }

// Promote renames a complete staging folder to its run folder and syncs
// both parents, so the run's files appear to readers all at once. renamed
// reports whether the folder is in place: an error after the rename leaves
// a visible folder, which must be completed, not abandoned.
func Promote(staging, runDir string) (renamed bool, err error) {
	parent := filepath.Dir(runDir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", parent, err)
	}
	if err := syncFolder(staging); err != nil {
		return false, err
	}
	if err := os.Rename(staging, runDir); err != nil {
		_ = os.Remove(parent) // only when empty: no dt= folder without a run
		return false, fmt.Errorf("publish %s: %w", runDir, err)
	}
	if err := testhook.Reached("renamed"); err != nil {
		return true, err
	}
	if err := syncFolder(parent); err != nil {
		return true, err
	}
	if err := syncFolder(filepath.Dir(parent)); err != nil {
		return true, err
	}
	// The staging root goes when it is empty.
	_ = os.Remove(filepath.Dir(staging))
	return true, nil
}

// Complete writes a published run folder's _manifest.json and then its
// _SUCCESS marker, each durable before the next step.
func Complete(runDir string, manifest []byte) error {
	if err := WriteFileAtomic(filepath.Join(runDir, ManifestFile), manifest); err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(runDir, SuccessFile), nil)
}

// IsComplete reports whether a run folder has its _SUCCESS marker.
func IsComplete(runDir string) bool {
	_, err := os.Stat(filepath.Join(runDir, SuccessFile))
	return err == nil
}

// Exists reports whether path exists.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// WriteFileAtomic replaces path with data: a reader sees the old file or
// the new one, and the new one is durable when it returns.
func WriteFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := renameio.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncFolder(filepath.Dir(path))
}

// syncFolder makes a folder's entries durable.
func syncFolder(dir string) error {
	d, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
