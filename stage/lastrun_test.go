package stage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadLastRunWithoutVerdict: a .last_run.json that is JSON but holds no
// stop or outcome is refused with the path, not returned as a report that
// `report --json` then cannot print.
func TestReadLastRunWithoutVerdict(t *testing.T) {
	for _, doc := range []string{`{}`, `{"stop":null,"outcome":"failed"}`, `{"config":"books","stop":"queue_empty"}`} {
		dir := t.TempDir()
		path := filepath.Join(dir, LastRunFile)
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReadLastRun(dir)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a verdict") {
			t.Errorf("ReadLastRun of %s = %+v, %v; want an error naming the file", doc, r, err)
		}
	}
}
