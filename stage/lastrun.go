package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/verdict"
)

// LastRunFile is the name of the verdict file in a storage path.
const LastRunFile = ".last_run.json"

// ErrNoLastRun is returned by ReadLastRun for a storage path that no run
// has started in.
var ErrNoLastRun = errors.New("no run has started yet")

// writeVerdicts atomically replaces the storage path's .last_run.json and
// the export root's _verdict.json, so sensors see every run that started,
// failed ones too.
func writeVerdicts(ctx context.Context, cfg config.Config, x *exporter, b []byte) error {
	if err := sink.WriteFileAtomic(filepath.Join(cfg.Storage, LastRunFile), b); err != nil {
		return err
	}
	// The verdict is written whatever ended the run, a signal included.
	return x.writeVerdict(context.WithoutCancel(ctx), b)
}

// writeLastRun writes the storage path's .last_run.json alone, creating
// the folder, for a run that could not use its output.
func writeLastRun(cfg config.Config, b []byte) error {
	if err := os.MkdirAll(cfg.Storage, 0o755); err != nil {
		return fmt.Errorf("create storage %s: %w", cfg.Storage, err)
	}
	return sink.WriteFileAtomic(filepath.Join(cfg.Storage, LastRunFile), b)
}

// ReadLastRun reads the verdict of the last run that started in storage. A
// file without a valid stop and outcome is an error: such a report could
// not be printed again.
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
	if err := r.Validate(); err != nil {
		return verdict.RunReport{}, fmt.Errorf("read %s: not a verdict: %w", path, err)
	}
	if r.Fields == nil {
		r.Fields = map[string]verdict.FieldCounts{} // written before fields were counted
	}
	return r, nil
}
