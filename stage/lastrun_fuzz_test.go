package stage

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// FuzzReadLastRun reads arbitrary bytes as .last_run.json, as `report`
// does: a report it returns has a valid verdict and encodes again (as
// `report --json` prints it) to JSON that reads back the same; anything
// else is an error naming the file.
func FuzzReadLastRun(f *testing.F) {
	site := newFixture(f, catalogsite.Options{Items: 10, PerPage: 5})
	for _, start := range []string{site.startURL(), site.srv.URL + "/catalogue/missing.html"} {
		cfg := site.config(nil, "", start)
		site.run(cfg, Options{})
		b, err := os.ReadFile(filepath.Join(cfg.Storage, LastRunFile))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		// The next seed's run starts afresh: no state, no published run.
		if err := errors.Join(os.RemoveAll(cfg.Storage), os.RemoveAll(cfg.Output)); err != nil {
			f.Fatal(err)
		}
	}
	f.Add([]byte(`{"stop":"queue_empty","outcome":"success","started_at":"2026-11-30T00:23:05+01:00"}`))
	f.Add([]byte(`{"stop":"queue_empty","outcome":"done"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, LastRunFile)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReadLastRun(dir)
		if err != nil {
			if errors.Is(err, ErrNoLastRun) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not say what is wrong with %s", err, path)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("read a report without a verdict: %v\n%s", err, data)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("a report read from %s does not encode: %v\n%s", LastRunFile, err, data)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		again, err := ReadLastRun(dir)
		if err != nil {
			t.Fatalf("a report's own JSON does not read back: %v\n%s", err, b)
		}
		if b2, err := json.Marshal(again); err != nil || string(b2) != string(b) {
			t.Fatalf("report changed on a round trip:\n%s\n%s (%v)", b, b2, err)
		}
	})
}
