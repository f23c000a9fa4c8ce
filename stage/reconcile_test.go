package stage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/publish/folder"
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
			if step == StepDecided || step == StepVisible || step == StepCompleted {
				// The crashed run's folder was completed, not republished.
				if rep2.Export.Published || filepath.Base(dirs[0]) != "run="+rep.RunID {
					t.Fatalf("run 2 export %+v, folders %v", rep2.Export, dirs)
				}
			} else if !rep2.Export.Published || filepath.Base(dirs[0]) != "run="+rep2.RunID {
				t.Fatalf("run 2 must publish what run 1 could not: %+v", rep2.Export)
			}
			expectNoStagedDebris(t, cfg.Output)
		})
	}
}

// expectNoStagedDebris checks the output's staging area holds no part,
// and that no staging folder of an earlier release is left.
func expectNoStagedDebris(t testing.TB, output string) {
	t.Helper()
	for _, root := range folder.LegacyStagingRoots(output) {
		if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("staging folder %s left behind: %v", root, err)
		}
	}
	s, err := folder.Open(output)
	if err != nil {
		t.Fatal(err)
	}
	if staged, err := s.ListStaged(t.Context(), ""); err != nil || len(staged) > 0 {
		t.Fatalf("staged parts left in %s: %v (%v)", output, staged, err)
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
