package stage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/state"
)

// TestResumedStateBytes: huge pages are asked for on the size of the
// largest state the configs resume, and not when one of them has no state
// yet (a first crawl).
func TestResumedStateBytes(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	cfg := f.config(nil, "")
	if got := resumedStateBytes([]*config.Config{&cfg}); got != 0 {
		t.Errorf("before the first run: %d bytes, want 0", got)
	}
	f.run(cfg, Options{})
	fi, err := os.Stat(filepath.Join(cfg.Storage, state.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if got := resumedStateBytes([]*config.Config{&cfg}); got != fi.Size() || got == 0 {
		t.Errorf("a rerun: %d bytes, want the state file's %d", got, fi.Size())
	}

	small := cfg
	small.Storage = t.TempDir()
	if err := os.WriteFile(filepath.Join(small.Storage, state.FileName), make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := resumedStateBytes([]*config.Config{&small, &cfg}); got != fi.Size() {
		t.Errorf("two reruns: %d bytes, want the larger state's %d", got, fi.Size())
	}
	fresh := cfg
	fresh.Storage = t.TempDir()
	if got := resumedStateBytes([]*config.Config{&cfg, &fresh}); got != 0 {
		t.Errorf("a rerun and a first crawl: %d bytes, want 0", got)
	}
}
