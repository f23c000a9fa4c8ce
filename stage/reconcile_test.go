package stage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/mounttest"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
)

var errCrash = errors.New("simulated crash")

// TestReconcile_APublishCutAtAnyStepReachesTheExportExactlyOnce abandons a
// publish after each step of the protocol, as a crash would, then runs
// again: every item reaches exactly one complete run folder, and no
// staging debris or incomplete folder is left.
func TestReconcile_APublishCutAtAnyStepReachesTheExportExactlyOnce(t *testing.T) {
	for _, step := range PublishSteps {
		t.Run(string(step), func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 50})
			cfg := f.config(nil, "")
			rep, err := Run(t.Context(), cfg, Options{AfterPublishStep: crashAt(step)})
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
			for _, root := range (sink.Layout{Output: cfg.Output}).StagingRoots() {
				if _, err := os.Stat(root); !os.IsNotExist(err) {
					t.Fatalf("staging debris left in %s: %v", root, err)
				}
			}
		})
	}
}

// TestReconcile_APublishStagedBesideARootThatBecameAMountPoint: a publish
// is staged beside the output root, as every publish was before staging
// could live inside it, and cut short once its files are staged or once
// it is recorded in state with that staging path. Then the output root
// becomes a mount point, so the next run stages inside it: it still
// forgets the cut publish, removes its staging beside the root, and
// publishes every item exactly once.
func TestReconcile_APublishStagedBesideARootThatBecameAMountPoint(t *testing.T) {
	for _, step := range []PublishStep{StepStaged, StepRecorded} {
		t.Run(string(step), func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 50})
			cfg := f.config(nil, "")
			rep, err := Run(t.Context(), cfg, Options{AfterPublishStep: crashAt(step)})
			if !errors.Is(err, errCrash) {
				t.Fatalf("run 1: %v", err)
			}
			beside := filepath.Join(sink.Layout{Output: cfg.Output}.StagingRoots()[0], "run="+rep.RunID)
			if files := parquetFiles(t, beside, false); len(files) != 1 {
				t.Fatalf("run 1 staged %v beside the output root, want its part file", files)
			}
			if step == "recorded" {
				db, err := state.Open(cfg.Storage, state.Options{})
				if err != nil {
					t.Fatal(err)
				}
				pubs, err := db.Publishing()
				db.Close()
				if err != nil || len(pubs) != 1 || pubs[0].Staging != beside {
					t.Fatalf("recorded publishes = %+v (%v), want one staged in %s", pubs, err, beside)
				}
			}
			mounttest.Tmpfs(t, cfg.Output, "size=8m")
			rep2 := f.run(cfg, Options{})
			if !rep2.Export.Published || filepath.Base(rep2.Export.Path) != "run="+rep2.RunID {
				t.Fatalf("run 2 must publish what run 1 could not: %+v", rep2.Export)
			}
			expectEachItemOnce(t, f, cfg.Output)
		})
	}
}

// crashAt abandons a publish right after step, as a crash there would.
func crashAt(step PublishStep) func(PublishStep) error {
	return func(s PublishStep) error {
		if s == step {
			return errCrash
		}
		return nil
	}
}
