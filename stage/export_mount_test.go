package stage

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/mounttest"
)

// parquetFiles walks root and lists its .parquet files. With hidden, it
// skips what pyarrow datasets, Spark and Hive skip when they discover
// files, and what Python's and bash's ** globs skip: every file and
// folder whose name starts with "." or "_".
func parquetFiles(t testing.TB, root string, hidden bool) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name := d.Name(); hidden && path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(path, ".parquet") {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// publishedKeys reads every run folder under output back and counts the
// rows of each item.
func publishedKeys(t testing.TB, output string) map[string]int {
	t.Helper()
	keys := map[string]int{}
	dirs, _ := filepath.Glob(filepath.Join(output, "dt=*", "run=*"))
	for _, dir := range dirs {
		for _, r := range readRun(t, dir) {
			keys[r.key]++
		}
	}
	return keys
}

// expectEachItemOnce checks that every item of the site was published
// exactly once, and that no staging folder is left in either place.
func expectEachItemOnce(t testing.TB, f *fixture, output string) {
	t.Helper()
	keys := publishedKeys(t, output)
	for _, it := range f.site.Items() {
		if keys[it.UPC] != 1 {
			t.Fatalf("item %s published %d times, want once (%d items published)", it.UPC, keys[it.UPC], len(keys))
		}
	}
	if n := len(f.site.Items()); len(keys) != n {
		t.Fatalf("%d items published, the site has %d", len(keys), n)
	}
	expectNoStagedDebris(t, output)
}

// TestExport_AnOutputRootThatIsAMountPointPublishes mounts a file system
// on the output folder. Staging beside it would be on the parent's file
// system, where a rename into the root fails with EXDEV: the run must
// stage on the output's own file system, where a reader that skips hidden
// folders never sees the files before they are published.
func TestExport_AnOutputRootThatIsAMountPointPublishes(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 40})
	cfg := f.config(nil, "\n[export]\nmax_file_rows = 15\n")
	mounttest.Tmpfs(t, cfg.Output, "size=8m")
	steps := 0
	opts := Options{AfterPublishStep: func(step PublishStep) error {
		if step != StepStaged && step != StepDecided {
			return nil
		}
		steps++
		// The run's three part files are written, on the output's file
		// system, and a reader of <output>/**/*.parquet sees none of them.
		if all := parquetFiles(t, cfg.Output, false); len(all) != 3 {
			t.Errorf("at %s: %d part files under the output root, want the run's 3 staged there: %v", step, len(all), all)
		}
		if seen := parquetFiles(t, cfg.Output, true); len(seen) != 0 {
			t.Errorf("at %s: a reader sees staged files %v", step, seen)
		}
		return nil
	}}
	rep := f.run(cfg, opts)
	if !rep.Export.Published || rep.Export.Failed || len(rep.Export.Files) != 3 || steps != 2 {
		t.Fatalf("export = %+v after %d publish steps, want 3 files published", rep.Export, steps)
	}
	if seen := parquetFiles(t, cfg.Output, true); len(seen) != 3 {
		t.Fatalf("a reader sees %v after the publish, want the run's 3 files", seen)
	}
	expectEachItemOnce(t, f, cfg.Output)
}
