package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"

	"github.com/databrew/databrew-stage/verdict"
)

// parsePartitionDate parses --partition-date: empty is none (the zero
// time), otherwise a date as YYYY-MM-DD.
func parsePartitionDate(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--partition-date %q is not a date as YYYY-MM-DD", s)
	}
	return d, nil
}

// writeXCom writes the verdicts where an orchestrator reads a task's
// result (KubernetesPodOperator's sidecar reads /airflow/xcom/return.json):
// one JSON value, the verdict object for one config and an array of them
// for several, replaced atomically. It creates the file's folder, as the
// sidecar's volume may start empty.
func writeXCom(path string, reports []verdict.RunReport) error {
	var value any = reports
	if len(reports) == 1 {
		value = reports[0]
	}
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("encode verdicts: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create the folder of %s: %w", path, err)
	}
	if err := renameio.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
