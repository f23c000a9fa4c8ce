package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/sink/sinktest"
	"github.com/databrew/databrew-stage/verdict"
)

// expectFailedExport checks a verdict of a run that stored items and could
// not publish them: partial by the outcome rules, but its export failed,
// and the reason says why.
func expectFailedExport(t *testing.T, rep verdict.RunReport) {
	t.Helper()
	if rep.Outcome != verdict.OutcomePartial || rep.Stop != verdict.StopError {
		t.Fatalf("verdict = %s (%s), want partial (error)", rep.Outcome, rep.Stop)
	}
	if !rep.Export.Failed || rep.Export.Published || !strings.Contains(rep.Export.Reason, "not a directory") {
		t.Fatalf("export = %+v, want failed, with a reason that says why", rep.Export)
	}
}

// TestRun_AFailedExportExitsOne: files stand where the staging area of
// books would be, so every run stores items and cannot publish them. The outcome
// stays partial, as the rules give it, but the exit code fails under
// --fail-when any, and all when no other run succeeded; never stays 0.
// Once the files are gone, the next run publishes every item
// once and exits 0.
func TestRun_AFailedExportExitsOne(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30, PerPage: 10})
	books := f.config("books", "", nil)
	movies := f.config("movies", "", nil)
	// Files where either place of the staging area would be: the run
	// cannot stage its export.
	output := filepath.Join(f.dir, "out", "books")
	blocks := []string{filepath.Join(f.dir, "out", ".books.databrew-staged"), filepath.Join(output, ".databrew-staged")}
	if err := os.MkdirAll(output, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if err := os.WriteFile(b, []byte("not a folder\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		flags   []string
		configs []string
		want    int
	}{
		{nil, []string{books}, ExitFailed},
		{[]string{"--fail-when", "never"}, []string{books}, ExitOK},
		{[]string{"--fail-when", "all"}, []string{books, movies}, ExitOK},
		{[]string{"--fail-when", "all"}, []string{books}, ExitFailed},
		{[]string{"--fail-when", "never", "--exit-unproductive", "99"}, []string{books}, ExitOK},
	}
	for i, tt := range tests {
		// A changed price makes every run productive: partial, not failed.
		f.site.SetPrice(1, float64(100+i))
		args := append(append([]string{"run", "--json"}, tt.flags...), tt.configs...)
		r := runMain(t, args...)
		if r.code != tt.want {
			t.Fatalf("%s: exit %d, want %d", strings.Join(args, " "), r.code, tt.want)
		}
		reps := verdictLines(t, "run --json", r.stdout, len(tt.configs))
		expectFailedExport(t, reps[0])
		expectFailedExport(t, lastRun(t, f.storage("books")))
	}

	for _, b := range blocks {
		if err := os.Remove(b); err != nil {
			t.Fatal(err)
		}
	}
	r := runMain(t, "run", "--json", books)
	rep := verdictLines(t, "run --json", r.stdout, 1)[0]
	if r.code != ExitOK || !rep.Export.Published || rep.Export.Failed {
		t.Fatalf("after the fix: exit %d, export %+v", r.code, rep.Export)
	}
	keys := map[string]int{}
	for _, name := range rep.Export.Files {
		rb := sinktest.ReadParquet(t, filepath.Join(rep.Export.Path, name))
		key := slices.IndexFunc(rb.Columns, func(c sinktest.Column) bool { return c.Name == "_key" })
		for _, row := range rb.Rows {
			keys[row[key].(string)]++
		}
	}
	for _, it := range f.site.Items() {
		if keys[it.UPC] != 1 {
			t.Fatalf("item %s published %d times, want once", it.UPC, keys[it.UPC])
		}
	}
}
