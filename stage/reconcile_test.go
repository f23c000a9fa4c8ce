package stage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testhook"
	"github.com/databrew/databrew-stage/sink"
)

var errCrash = errors.New("simulated crash")

// TestReconcile_APublishCutAtAnyStepReachesTheExportExactlyOnce abandons a
// publish after each step of the protocol, as a crash would, then runs
// again: every item reaches exactly one complete run folder, and no
// staging debris or incomplete folder is left.
func TestReconcile_APublishCutAtAnyStepReachesTheExportExactlyOnce(t *testing.T) {
	for _, step := range []string{"staged", "recorded", "renamed", "promoted", "completed"} {
		t.Run(step, func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 50})
			cfg := f.config(nil, "")
			testhook.PublishStep = func(s string) error {
				if s == step {
					return errCrash
				}
				return nil
			}
			rep, err := Run(t.Context(), cfg, Options{})
			testhook.PublishStep = nil
			if !errors.Is(err, errCrash) {
				t.Fatalf("run 1: %v", err)
			}
			t.Log(rep.Summary())
			// Run 2 reconciles, then crawls an unchanged site.
			rep2 := f.run(cfg, Options{})
			published := map[string]int{}
			dirs, _ := filepath.Glob(filepath.Join(cfg.Output, "dt=*", "run=*"))
			for _, dir := range dirs {
				for _, r := range readRun(t, dir) {
					published[r.key]++
				}
			}
			if len(published) != 50 {
				t.Fatalf("%d items published across %v, want 50", len(published), dirs)
			}
			for k, n := range published {
				if n != 1 {
					t.Fatalf("item %s published %d times", k, n)
				}
			}
			wantDirs := 1
			if len(dirs) != wantDirs {
				t.Fatalf("run folders %v", dirs)
			}
			if step == "renamed" || step == "promoted" || step == "completed" {
				// The crashed run's folder was completed, not republished.
				if rep2.Export.Published || filepath.Base(dirs[0]) != "run="+rep.RunID {
					t.Fatalf("run 2 export %+v, folders %v", rep2.Export, dirs)
				}
			} else if !rep2.Export.Published || filepath.Base(dirs[0]) != "run="+rep2.RunID {
				t.Fatalf("run 2 must publish what run 1 could not: %+v", rep2.Export)
			}
			if _, err := os.Stat(sink.Layout{Output: cfg.Output}.StagingRoot()); !os.IsNotExist(err) {
				t.Fatalf("staging debris left: %v", err)
			}
		})
	}
}
