package stage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"

	"github.com/databrew/databrew-stage/verdict"
)

// LastRunFile is the name of the verdict file in a storage path.
const LastRunFile = ".last_run.json"

// ErrNoLastRun is returned by ReadLastRun for a storage path that no run
// has started in.
var ErrNoLastRun = errors.New("no run has started yet")

// writeLastRun atomically replaces the storage path's .last_run.json.
func writeLastRun(storage string, r verdict.RunReport) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", LastRunFile, err)
	}
	path := filepath.Join(storage, LastRunFile)
	if err := renameio.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadLastRun reads the verdict of the last run that started in storage.
func ReadLastRun(storage string) (verdict.RunReport, error) {
	path := filepath.Join(storage, LastRunFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return verdict.RunReport{}, fmt.Errorf("%s: %w", path, ErrNoLastRun)
	}
	if err != nil {
		return verdict.RunReport{}, fmt.Errorf("read %s: %w", path, err)
	}
	var r verdict.RunReport
	if err := json.Unmarshal(b, &r); err != nil {
		return verdict.RunReport{}, fmt.Errorf("read %s: %w", path, err)
	}
	return r, nil
}
