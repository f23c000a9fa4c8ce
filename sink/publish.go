package sink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"
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

// RunDir is the folder a run publishes into under its partition day (see
// RunPath).
func (l Layout) RunDir(day time.Time, runID string) string {
	return filepath.Join(l.Output, filepath.FromSlash(RunPath(day, runID)))
}

// RunPath is a run folder's path under the export root, slash-separated:
// dt=YYYY-MM-DD/run=<run_id>, the date being day's in UTC: the run's start
// day, or the partition date an orchestrator gave it.
func RunPath(day time.Time, runID string) string {
	return "dt=" + day.UTC().Format(time.DateOnly) + "/run=" + runID
}

// VerdictPath is the export root's latest verdict.
func (l Layout) VerdictPath() string { return filepath.Join(l.Output, VerdictFile) }

// Promote renames a complete staging folder to its run folder, so the
// run's files appear to readers all at once. When it returns an error the
// folder did not appear (and no empty dt= folder is left); when it returns
// nil the folder is visible, and SyncPromoted makes that durable.
func Promote(staging, runDir string) error {
	parent := filepath.Dir(runDir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", parent, err)
	}
	if err := syncFolder(staging); err != nil {
		return err
	}
	if err := os.Rename(staging, runDir); err != nil {
		_ = os.Remove(parent) // only when empty: no dt= folder without a run
		return fmt.Errorf("publish %s: %w", runDir, err)
	}
	return nil
}

// SyncPromoted makes a promoted run folder durable — it syncs the folders
// that hold it — and removes the staging root when it is empty. An error
// leaves a visible folder, which must be completed, not abandoned.
func SyncPromoted(staging, runDir string) error {
	parent := filepath.Dir(runDir)
	if err := syncFolder(parent); err != nil {
		return err
	}
	if err := syncFolder(filepath.Dir(parent)); err != nil {
		return err
	}
	_ = os.Remove(filepath.Dir(staging))
	return nil
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

// CreateFileOnce creates path with data unless a file is there: the data
// is written and synced under a temporary name first, then linked into
// place, so the file appears whole or not at all and a second writer
// finds the first one's (created is false).
func CreateFileOnce(path string, data []byte) (created bool, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return false, fmt.Errorf("create %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("create %s: %w", path, err)
	}
	return true, syncDir(dir)
}
