package stage

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/mounttest"
	"github.com/databrew/databrew-stage/verdict"
)

// runFailingExport runs cfg once where its export cannot be written and
// checks what the verdict says: stop error, the outcome the run's facts
// give (it stored items: partial), export.failed with the error as its
// reason, and no folder published.
func runFailingExport(t *testing.T, cfg config.Config, why string) verdict.RunReport {
	t.Helper()
	rep, err := Run(t.Context(), cfg, Options{})
	t.Logf("%s (err: %v)", rep.Summary(), err)
	if err == nil {
		t.Fatal("Run returned no error")
	}
	expect(t, rep, verdict.StopError, verdict.OutcomePartial, 3)
	if !rep.Export.Failed || rep.Export.Published || !strings.Contains(rep.Export.Reason, why) {
		t.Fatalf("export = %+v, want failed with a reason that says %q", rep.Export, why)
	}
	if dirs, _ := filepath.Glob(filepath.Join(cfg.Output, "dt=*")); len(dirs) != 0 {
		t.Fatalf("a failed export left %v", dirs)
	}
	return rep
}

// expectRecovered checks the run after the cause was fixed: it publishes
// every item the site has, each exactly once over all runs.
func expectRecovered(t *testing.T, f *fixture, cfg config.Config) {
	t.Helper()
	rep := f.run(cfg, Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if !rep.Export.Published || rep.Export.Failed || rep.Export.Reason != "" {
		t.Fatalf("export after the fix = %+v", rep.Export)
	}
	expectEachItemOnce(t, f, cfg.Output)
}

// TestExportFail_TheOutputFileSystemIsFull: a tmpfs output with no space
// left. The part files cannot be written.
func TestExportFail_TheOutputFileSystemIsFull(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	cfg := f.config(nil, "")
	mounttest.Tmpfs(t, cfg.Output, "size=1m")
	filler := mounttest.Fill(t, cfg.Output)
	runFailingExport(t, cfg, "no space left on device")
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	expectRecovered(t, f, cfg)
}

// TestExportFail_TheStorageFileSystemIsFull: a tmpfs storage path too
// small for the crawl's state. The run stores what fits, then cannot
// write its state: nothing is published, since the export must be
// recorded in that state first.
func TestExportFail_TheStorageFileSystemIsFull(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 600, PerPage: 50})
	cfg := f.config(nil, "")
	mounttest.Tmpfs(t, cfg.Storage, "size=384k") // about 40% of the state the crawl makes
	runFailingExport(t, cfg, "no space left on device")
	mounttest.Remount(t, cfg.Storage, "size=16m")
	expectRecovered(t, f, cfg)
}

// TestExportFail_TheOutputPathIsAFile: the output root is a regular file.
// The run fails before its first request, as for an unusable object
// store, naming the cause, and crawls nothing it could not publish.
func TestExportFail_TheOutputPathIsAFile(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	cfg := f.config(nil, "")
	if err := writeFile(cfg.Output, "not a folder\n"); err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) { requests.Add(1); next.ServeHTTP(w, r) })
	rep, err := Run(t.Context(), cfg, Options{})
	if !errors.Is(err, ErrOutput) || rep.Started || rep.Outcome != verdict.OutcomeFailed || !strings.Contains(rep.Detail, "not a directory") {
		t.Fatalf("run into a file: %v, %s", err, rep.Summary())
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d requests sent before the output failed", n)
	}
	if err := os.Remove(cfg.Output); err != nil {
		t.Fatal(err)
	}
	expectRecovered(t, f, cfg)
}

// TestExportFail_TheOutputFolderIsNotWritable: a read-only mount as the
// output root (permissions would not stop a test that runs as root).
func TestExportFail_TheOutputFolderIsNotWritable(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	cfg := f.config(nil, "")
	mounttest.Tmpfs(t, cfg.Output, "size=4m", "ro")
	runFailingExport(t, cfg, "read-only file system")
	mounttest.Remount(t, cfg.Output, "rw")
	expectRecovered(t, f, cfg)
}

func TestInterrupted_ASignalDuringTheExportPublishesNothingAndLosesNothing(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 1500, PerPage: 100})
	cfg := f.config(nil, "")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	opts := Options{AfterPublishStep: func(step PublishStep) error {
		if step == StepIntent {
			cancel(errors.New("Interrupted by SIGTERM"))
		}
		return nil
	}}
	rep := f.runCtx(ctx, cfg, opts)
	expect(t, rep, verdict.StopInterrupted, verdict.OutcomePartial, 3)
	if rep.Export.Published || !rep.Export.Failed || !strings.HasPrefix(rep.Export.Reason, "Interrupted by SIGTERM during the export") {
		t.Fatalf("export = %+v, want nothing published and the export failed by the signal", rep.Export)
	}
	if dirs, _ := filepath.Glob(filepath.Join(cfg.Output, "dt=*", "run=*")); len(dirs) != 0 {
		t.Fatalf("published %v", dirs)
	}
	// The next run publishes every item once.
	rep = f.run(cfg, Options{})
	if !rep.Export.Published || rep.Export.Rows != 1500 {
		t.Fatalf("next run's export = %+v, want all 1500 items", rep.Export)
	}
	assertItemsMatchSite(t, f, 1500)
}
