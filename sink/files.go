package sink

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"
)

// The files of a run folder and of the export root: a run folder is
// dt=YYYY-MM-DD/run=<run_id>/ holding the part files, _verdict.json,
// _manifest.json and, last, _SUCCESS; the root holds the latest
// _verdict.json. Package publish writes them.
const (
	ManifestFile = "_manifest.json"
	SuccessFile  = "_SUCCESS"
	VerdictFile  = "_verdict.json"
)

// RunPath is a run folder's path under the export root, slash-separated:
// dt=YYYY-MM-DD/run=<run_id>, the date being day's in UTC: the run's start
// day, or the partition date an orchestrator gave it.
func RunPath(day time.Time, runID string) string {
	return "dt=" + day.UTC().Format(time.DateOnly) + "/run=" + runID
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
// the new one, and the new one is durable when it returns. The new file is
// written beside path (a crash leaves it there, named after path with a
// dot in front), which saves the probe renameio otherwise makes on each
// write: two files made in the system's temporary folder and a rename.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := renameio.WriteFile(path, data, 0o644, renameio.WithTempDir(dir)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(dir) // made above: it is there
}
