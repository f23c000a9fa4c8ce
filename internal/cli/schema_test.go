package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/schemacheck"
	"github.com/databrew/databrew-stage/schemas"
	"github.com/databrew/databrew-stage/stage"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// verdictLines validates JSON Lines of verdicts against the verdict schema
// and decodes them; there must be want lines.
func verdictLines(t *testing.T, what, out string, want int) []verdict.RunReport {
	t.Helper()
	n, err := schemacheck.Lines([]byte(out), schemacheck.Verdict)
	if err != nil {
		t.Fatalf("%s does not match the verdict schema: %v\n%s", what, err, out)
	}
	if n != want {
		t.Fatalf("%s has %d verdict lines, want %d\n%s", what, n, want, out)
	}
	var reps []verdict.RunReport
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r verdict.RunReport
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		reps = append(reps, r)
	}
	return reps
}

// reportLines validates report --json output against the report schema
// and decodes it; there must be want lines.
func reportLines(t *testing.T, out string, want int) []ReportEntry {
	t.Helper()
	n, err := schemacheck.Lines([]byte(out), schemacheck.Report)
	if err != nil {
		t.Fatalf("report --json does not match the report schema: %v\n%s", err, out)
	}
	if n != want {
		t.Fatalf("report --json has %d lines, want %d\n%s", n, want, out)
	}
	var entries []ReportEntry
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e ReportEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	return entries
}

// lastRun validates and decodes the .last_run.json of a storage path.
func lastRun(t *testing.T, storage string) verdict.RunReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(storage, stage.LastRunFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := schemacheck.Verdict(b); err != nil {
		t.Fatalf("%s does not match the verdict schema: %v\n%s", stage.LastRunFile, err, b)
	}
	var r verdict.RunReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func noFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s exists (%v), want nothing there", path, err)
	}
}

// TestSchemaSuccessAndFailed validates a success and a failed verdict in
// every place they are written, and report --json before and after.
func TestSchemaSuccessAndFailed(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20, PerPage: 10})
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 503, PathPrefix: "/catalogue/page-9.html"})
	books := f.config("books", "", nil)
	down := f.config("down", f.srv.URL+"/catalogue/page-9.html", nil)
	fresh := f.config("fresh", "", nil)
	vf := filepath.Join(f.dir, "verdicts.jsonl")

	// Before any run: last_run is null.
	r := runMain(t, "report", "--json", books, down)
	if r.code != ExitOK {
		t.Fatalf("report exited %d", r.code)
	}
	for _, e := range reportLines(t, r.stdout, 2) {
		if e.LastRun != nil || e.Stale || e.EmptyRunStreak != 0 {
			t.Errorf("report before any run: %+v", e)
		}
	}

	r = runMain(t, "run", "--json", "--verdict-file", vf, books, down)
	if r.code != ExitFailed {
		t.Fatalf("run exited %d, want 1", r.code)
	}
	reps := verdictLines(t, "run --json", r.stdout, 2)
	if got := readFile(t, vf); got != r.stdout {
		t.Errorf("--verdict-file holds\n%s\nwant the --json output\n%s", got, r.stdout)
	}
	verdictLines(t, "--verdict-file", readFile(t, vf), 2)
	ok, failed := reps[0], reps[1]
	if ok.Config != "books" || ok.Outcome != verdict.OutcomeSuccess || ok.Stop != verdict.StopQueueEmpty ||
		!ok.Productive || !ok.Started || ok.Items.New != 20 || ok.Requests.Total != 22 || ok.Rule != 2 {
		t.Errorf("books verdict = %+v", ok)
	}
	if failed.Config != "down" || failed.Outcome != verdict.OutcomeFailed || failed.Stop != verdict.StopQueueEmpty ||
		failed.Rule != 1 || failed.Requests.OK != 0 || failed.CoverageGaps != 1 || len(failed.Gaps) != 1 ||
		failed.Gaps[0].Reason != "HTTP 503" {
		t.Errorf("down verdict = %+v", failed)
	}
	if want := "books: success (queue_empty) · 22 requests · 20 new · 0 changed · 0 coverage gaps · "; !strings.HasPrefix(r.stderr, want) {
		t.Errorf("stderr starts %q, want %q", r.stderr, want)
	}
	if !strings.Contains(r.stderr, "\ndown: failed (queue_empty) · ") {
		t.Errorf("stderr has no failed summary for down:\n%s", r.stderr)
	}
	if lr := lastRun(t, f.storage("books")); lr.RunID != ok.RunID || lr.Outcome != ok.Outcome {
		t.Errorf(".last_run.json of books = %+v, want run %s", lr, ok.RunID)
	}
	if lr := lastRun(t, f.storage("down")); lr.RunID != failed.RunID || lr.Outcome != verdict.OutcomeFailed {
		t.Errorf(".last_run.json of down = %+v, want run %s", lr, failed.RunID)
	}

	// A second run: books unproductive, down failed again; with the fresh
	// config that never ran, every entry is stale after 1.
	r = runMain(t, "run", "--json", "--fail-when", "never", books, down)
	if r.code != ExitOK {
		t.Fatalf("run --fail-when never exited %d", r.code)
	}
	reps = verdictLines(t, "run --json", r.stdout, 2)
	if reps[0].Productive || reps[0].EmptyRunStreak != 1 || reps[1].EmptyRunStreak != 2 {
		t.Errorf("second run verdicts: %+v", reps)
	}
	r = runMain(t, "report", "--json", "--stale-after", "1", books, down, fresh)
	if r.code != ExitFailed {
		t.Errorf("report --stale-after 1 exited %d, want 1", r.code)
	}
	entries := reportLines(t, r.stdout, 3)
	for i, want := range []struct {
		config string
		streak int
		ran    bool
	}{{"books", 1, true}, {"down", 2, true}, {"fresh", 0, false}} {
		e := entries[i]
		if e.Config != want.config || e.EmptyRunStreak != want.streak || (e.LastRun != nil) != want.ran ||
			!e.Stale || e.StaleAfter != 1 || e.ConfigFile == "" || e.Storage != f.storage(want.config) {
			t.Errorf("report entry %d = %+v", i, e)
		}
	}
	r = runMain(t, "report", "--json", "--stale-after", "3", books, down)
	if r.code != ExitOK {
		t.Errorf("report --stale-after 3 exited %d, want 0", r.code)
	}
	for _, e := range reportLines(t, r.stdout, 2) {
		if e.Stale {
			t.Errorf("stale after 3: %+v", e)
		}
	}
}

// TestSchemaNotStarted: a deadline stops the first config on a hanging
// site and leaves the second not started; both verdicts and the report
// match the schemas, and the second config's storage is never created.
func TestSchemaNotStarted(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20, PerPage: 10})
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultHang})
	// A request the deadline did not cancel would hang for the 20s timeout.
	slow := map[string]string{"timeout": `"20s"`}
	first := f.config("first", "", slow)
	second := f.config("second", "", slow)
	vf := filepath.Join(f.dir, "verdicts.jsonl")

	start := time.Now()
	r := runMain(t, "run", "--json", "--verdict-file", vf, "--deadline", "300ms", first, second)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("run took %s after a 300ms deadline: in-flight requests were not cancelled", took)
	}
	if r.code != ExitFailed {
		t.Fatalf("run exited %d, want 1", r.code)
	}
	reps := verdictLines(t, "run --json", r.stdout, 2)
	verdictLines(t, "--verdict-file", readFile(t, vf), 2)
	if got := readFile(t, vf); got != r.stdout {
		t.Errorf("--verdict-file differs from --json output")
	}
	a, b := reps[0], reps[1]
	if a.Stop != verdict.StopInterrupted || a.Detail != "Deadline reached" || !a.Started || a.Outcome != verdict.OutcomeFailed || a.RunID == "" {
		t.Errorf("first verdict = %+v", a)
	}
	if b.Config != "second" || b.Stop != verdict.StopInterrupted || b.Detail != verdict.DetailNotStarted || b.Started ||
		b.Outcome != verdict.OutcomeFailed || b.Rule != 0 || b.RunID != "" || b.Requests.Total != 0 {
		t.Errorf("second verdict = %+v", b)
	}
	if !strings.Contains(r.stderr, "\nsecond: failed (interrupted) · Not started\n") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if lr := lastRun(t, f.storage("first")); lr.RunID != a.RunID {
		t.Errorf(".last_run.json of first is run %s, want %s", lr.RunID, a.RunID)
	}
	noFile(t, f.storage("second"))

	r = runMain(t, "report", "--json", first, second)
	if r.code != ExitOK {
		t.Errorf("report exited %d", r.code)
	}
	entries := reportLines(t, r.stdout, 2)
	if entries[0].LastRun == nil || entries[0].LastRun.Stop != verdict.StopInterrupted {
		t.Errorf("report of first = %+v", entries[0])
	}
	if entries[1].LastRun != nil {
		t.Errorf("report of second = %+v, want no last run", entries[1])
	}
}

// TestSchemaLocked: a storage path held by another opener yields a failed
// verdict with the error stop naming the path, valid against the schema,
// and leaves .last_run.json alone.
func TestSchemaLocked(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 10, PerPage: 10})
	books := f.config("books", "", nil)
	if r := runMain(t, "run", books); r.code != ExitOK {
		t.Fatalf("first run exited %d", r.code)
	}
	lastPath := filepath.Join(f.storage("books"), stage.LastRunFile)
	before := readFile(t, lastPath)

	db, err := state.Open(f.storage("books"), state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	requests := f.site.Requests()
	vf := filepath.Join(f.dir, "verdicts.jsonl")
	r := runMain(t, "run", "--json", "--verdict-file", vf, books)
	if r.code != ExitFailed {
		t.Errorf("locked run exited %d, want 1", r.code)
	}
	rep := verdictLines(t, "run --json", r.stdout, 1)[0]
	verdictLines(t, "--verdict-file", readFile(t, vf), 1)
	if rep.Stop != verdict.StopError || rep.Outcome != verdict.OutcomeFailed || rep.Started ||
		!strings.Contains(rep.Detail, f.storage("books")) {
		t.Errorf("locked verdict = %+v", rep)
	}
	if want := "books: failed (error) · storage " + f.storage("books") + " is in use by another process\n"; r.stderr != want {
		t.Errorf("stderr = %q, want %q", r.stderr, want)
	}
	if got := readFile(t, lastPath); got != before {
		t.Errorf(".last_run.json changed under a locked run")
	}
	if n := f.site.Requests(); n != requests {
		t.Errorf("the locked run sent %d requests", n-requests)
	}
}

// TestVerdictFileErrors: --verdict-file is not written when the configs are
// bad, and a --verdict-file that cannot be written fails the invocation.
func TestVerdictFileErrors(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 10, PerPage: 10})
	books := f.config("books", "", nil)
	bad := f.config("bad", "", map[string]string{"delay": `"soon"`})
	vf := filepath.Join(f.dir, "verdicts.jsonl")

	r := runMain(t, "run", "--verdict-file", vf, books, bad)
	if r.code != ExitUsage {
		t.Errorf("run with a bad config exited %d, want 2", r.code)
	}
	if !strings.Contains(r.stderr, "bad.toml:") || !strings.Contains(r.stderr, ": policy.delay: invalid duration \"soon\"") {
		t.Errorf("stderr does not name the file, line and key:\n%s", r.stderr)
	}
	noFile(t, vf)
	noFile(t, f.storage("books"))
	noFile(t, f.storage("bad"))

	r = runMain(t, "run", "--verdict-file", filepath.Join(f.dir, "missing", "v.jsonl"), books)
	if r.code != ExitFailed {
		t.Errorf("run with an unwritable --verdict-file exited %d, want 1", r.code)
	}
	if !strings.Contains(r.stderr, "write --verdict-file") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if lr := lastRun(t, f.storage("books")); lr.Outcome != verdict.OutcomeSuccess {
		t.Errorf("the run before the failed --verdict-file: %+v", lr)
	}
}

// TestSchemaCommand: schema prints the published schemas byte for byte.
func TestSchemaCommand(t *testing.T) {
	for name, want := range map[string][]byte{"verdict": schemas.Verdict, "report": schemas.Report} {
		r := runMain(t, "schema", name)
		if r.code != ExitOK || r.stdout != string(want) || r.stderr != "" {
			t.Errorf("schema %s: exit %d, stdout differs: %v", name, r.code, r.stdout != string(want))
		}
	}
	if r := runMain(t, "schema"); r.code != ExitUsage {
		t.Errorf("schema without a name exited %d, want 2", r.code)
	}
}
