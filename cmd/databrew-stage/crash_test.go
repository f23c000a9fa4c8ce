package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/mounttest"
	"github.com/databrew/databrew-stage/publish/folder"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/sink/sinktest"
	"github.com/databrew/databrew-stage/stage"
	"github.com/databrew/databrew-stage/verdict"
)

var (
	crashTrials = flag.Int("crash-trials", 3, "trials of the kill -9 crash loop (make test-crash runs 100)")
	crashMount  = flag.Bool("crash-mount", false, "mount a tmpfs on the output root, so every run stages inside it (needs root)")
)

// pauseEnv names the publish step at which a databrew-stage subprocess of
// this test binary announces itself on stderr and waits to be killed.
const pauseEnv = "DATABREW_TEST_PAUSE_AT"

const pausedMarker = "paused at publish step "

// pauseAtPublishStep returns the stage options of a subprocess that
// pauses at step, to be killed there; none when step is empty.
func pauseAtPublishStep(step string) func(*stage.Options) {
	if step == "" {
		return nil
	}
	return func(o *stage.Options) { o.AfterPublishStep = pauseAt(step) }
}

// pauseAt is a step hook that announces itself on stderr at step and
// waits to be killed.
func pauseAt(step string) func(stage.PublishStep) error {
	return func(s stage.PublishStep) error {
		if string(s) == step {
			fmt.Fprintln(os.Stderr, pausedMarker+string(s))
			time.Sleep(time.Hour)
		}
		return nil
	}
}

// siteHistory remembers every (title, price) each item ever had, so the
// check can tell a real version from garbage.
type siteHistory struct {
	mu       sync.Mutex
	versions map[string]map[string]bool // UPC -> "title|price"
}

func (h *siteHistory) note(site *catalogsite.Site) {
	h.mu.Lock()
	defer h.mu.Unlock()
	addVersions(h.versions, site)
}

// addVersions adds the version every item of the site has now (not the
// removed ones) to versions: item -> "title|price".
func addVersions(versions map[string]map[string]bool, site *catalogsite.Site) {
	for _, it := range site.Items() {
		if it.Removed {
			continue
		}
		if versions[it.UPC] == nil {
			versions[it.UPC] = map[string]bool{}
		}
		versions[it.UPC][fmt.Sprintf("%s|%v", it.Title, it.Price)] = true
	}
}

// TestCrashLoop kills the real binary with SIGKILL at random moments —
// mid-crawl, and at every step of the publish protocol, including after
// the run folder is visible and before the state commits — and reruns it
// until a traversal completes; with -crash-mount the output root is a
// mount point, so runs stage inside it. Over every trial, the published
// exports must hold every item version at most once, the current version
// of every item, and nothing that is not a real version of an item (no
// stub page).
func TestCrashLoop(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if *crashMount {
		mounttest.Tmpfs(t, filepath.Join(dir, "out", "books"), "size=64m")
	}
	crashLoop(t, bin, dir, &folderLake{root: filepath.Join(dir, "out", "books")}, crashOptions{})
}

// TestCrashLoopRevisit is the crash loop with a [revisit] policy: within
// the loop no item page is ever due by time, so an item page is fetched
// only when the item is new, comes back, or its card changed. Every
// price change shows on the cards: the loop's checks that the exports end
// at each item's current state prove that no card-visible change is
// missed, under kill -9.
func TestCrashLoopRevisit(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res := crashLoop(t, bin, dir, &folderLake{root: filepath.Join(dir, "out", "books")}, crashOptions{
		extra: "\n[revisit]\ncard = \"article.product_pod\"\nmin_after = \"1d\"\nmax_after = \"14d\"\n"})
	if res.skipped == 0 {
		t.Fatal("no completed run skipped an item page: the revisit policy was not at work")
	}
}

// crashOptions shape a crash loop besides its output.
type crashOptions struct {
	// extra is TOML appended to the config.
	extra string
	// kills says how each run of a trial ends; randomKills when nil.
	kills killPlan
	// killWithin bounds the moment of a kill at random; 150 ms when 0.
	killWithin time.Duration
}

// killPlan says how run attempt (from 0) of a trial (from 1) ends: "killed
// at STEP" (paused at that publish step, then killed), "killed at random"
// or "completed" (not killed).
type killPlan func(rng *rand.Rand, trial, attempt int) string

// randomKills kills a trial's first 3 runs and 8 in 10 of the others,
// half of those at a random publish step, half at a random moment.
func randomKills(rng *rand.Rand, _, attempt int) string {
	steps := stage.PublishSteps
	r := rng.IntN(10)
	if attempt < 3 {
		r = rng.IntN(8)
	}
	switch {
	case r < 4:
		return "killed at " + string(steps[rng.IntN(len(steps))])
	case r < 8:
		return "killed at random"
	default:
		return "completed"
	}
}

// crashResult is what a crash loop did.
type crashResult struct {
	// skipped counts the item pages the completed runs skipped.
	skipped int
	// published lists the run ids of the completed runs that published.
	published []string
	// saw holds every item version the site had when a trial's traversal
	// completed: item -> "title|price".
	saw map[string]map[string]bool
}

// crashLoop runs the crash loop's trials against one kind of export root
// and returns what the completed runs did.
func crashLoop(t *testing.T, bin, dir string, lk lake, o crashOptions) crashResult {
	if o.kills == nil {
		o.kills = randomKills
	}
	if o.killWithin == 0 {
		o.killWithin = 150 * time.Millisecond
	}
	site := catalogsite.New(catalogsite.Options{Items: 240, PerPage: 20, Latency: time.Millisecond})
	srv := httptest.NewServer(site)
	defer srv.Close()
	cfgPath := writeCrashConfig(t, dir, catalogsite.StartURL(srv.URL), lk.output(), o.extra)
	hist := &siteHistory{versions: map[string]map[string]bool{}}
	hist.note(site)
	rng := rand.New(rand.NewPCG(1, 2))
	kills := map[string]int{}
	runs := 0
	res := crashResult{saw: map[string]map[string]bool{}}
	var trace []string // the runs of the current trial, logged if it fails
	defer func() {
		if t.Failed() {
			t.Logf("runs of the failed trial:\n%s", strings.Join(trace, "\n"))
		}
	}()
	for trial := 1; trial <= *crashTrials; trial++ {
		trace = trace[:0]
		if trial > 1 {
			mutate(site, rng)
			hist.note(site)
		}
		if trial%4 == 0 {
			// A stretch of 200-byte stub pages: never an item.
			from := int64(site.Requests()) + int64(rng.IntN(150))
			site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStub, From: from, To: from + 40})
		}
		for attempt := 0; ; attempt++ {
			if attempt == 40 {
				t.Fatalf("trial %d: no clean traversal after 40 runs", trial)
			}
			runs++
			how, rep := runOnce(t, bin, cfgPath, lk, rng, o.kills(rng, trial, attempt), o.killWithin)
			kills[how]++
			res.skipped += rep.Items.Skipped
			if rep.Export.Published {
				res.published = append(res.published, rep.RunID)
			}
			trace = append(trace, fmt.Sprintf("%s: stop %q outcome %q gaps %d traversal %+v items %+v export %+v",
				how, rep.Stop, rep.Outcome, rep.CoverageGaps, rep.Traversal, rep.Items, rep.Export))
			// Done when a traversal completed without a gap in any of its
			// runs: only then are removed items judged removed.
			if how == "completed" && rep.Stop == verdict.StopQueueEmpty && rep.Traversal.Gaps == 0 {
				break
			}
		}
		site.ClearFaults()
		checkExports(t, lk, site, hist, trial)
		addVersions(res.saw, site)
	}
	t.Logf("%d trials, %d runs: %v; %d items skipped", *crashTrials, runs, kills, res.skipped)
	return res
}

// writeCrashConfig writes the crash loops' config into dir, with extra
// TOML appended, and returns its path.
func writeCrashConfig(t *testing.T, dir, startURL, output, extra string) string {
	t.Helper()
	cfgPath := filepath.Join(dir, "books.toml")
	cfg := fmt.Sprintf(`name = "books"
start_urls = [%q]
output = %q
[policy]
concurrency = 4
retries = 1
backoff = "1ms"
max_backoff = "5ms"
retry_pass_delay = "10ms"
timeout = "2s"
pause = "0s"
%s
[export]
tombstones = true
max_file_rows = 50
row_group_rows = 16
%s`, startURL, output, catalogsite.ExtractConfig, extra)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfgPath
}

// mutate reprices a dozen items, removes three and adds or restores some.
func mutate(site *catalogsite.Site, rng *rand.Rand) {
	items := site.Items()
	for range 12 {
		it := items[rng.IntN(len(items))]
		site.SetPrice(it.ID, float64(int(it.Price*100)+1+rng.IntN(500))/100)
	}
	for range 3 {
		site.Remove(items[rng.IntN(len(items))].ID)
	}
	for range 2 {
		site.Restore(items[rng.IntN(len(items))].ID)
	}
	site.Add(2)
}

// runOnce runs the binary and ends it as how says (see killPlan): killed
// with SIGKILL at a random moment within killWithin, paused at a publish
// step and killed there, or not at all. It returns how the run ended and,
// when it completed, its verdict.
func runOnce(t *testing.T, bin, cfgPath string, lk lake, rng *rand.Rand, how string, killWithin time.Duration) (string, verdict.RunReport) {
	t.Helper()
	cmd := exec.Command(bin, "run", "--json", cfgPath)
	cmd.Env = append(append(os.Environ(), lk.env()...), "GORACE="+subprocessGORACE())
	if step, ok := strings.CutPrefix(how, "killed at "); ok && how != "killed at random" {
		cmd.Env = append(cmd.Env, pauseEnv+"="+step)
	}
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	paused := make(chan bool, 1)
	logs := make(chan []string, 1)
	go func() {
		var lines []string
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), pausedMarker) {
				paused <- true
			}
			lines = append(lines, sc.Text())
		}
		close(paused)
		logs <- lines
	}()
	out := make(chan []byte, 1)
	go func() {
		var b []byte
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			b = append(b, sc.Bytes()...)
		}
		out <- b
	}()
	switch {
	case how == "killed at random":
		time.Sleep(time.Duration(rng.Int64N(int64(killWithin))))
		_ = cmd.Process.Kill()
	case strings.HasPrefix(how, "killed at "):
		if <-paused { // the run paused inside its publish
			_ = cmd.Process.Kill()
		} else {
			how = "completed" // nothing to publish: it never reached the step
		}
	}
	line := <-out
	stderrLines := <-logs
	_ = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return how, verdict.RunReport{}
	}
	var rep verdict.RunReport
	if err := json.Unmarshal(line, &rep); err != nil {
		t.Fatalf("a run that was not killed printed no verdict: %v: %q; stderr:\n%s", err, line, strings.Join(stderrLines, "\n"))
	}
	return "completed", rep
}

// checkExports reads every published row and checks the exactly-once
// promise over all trials so far (see checkVersions).
func checkExports(t *testing.T, lk lake, site *catalogsite.Site, hist *siteHistory, trial int) {
	t.Helper()
	if debris := lk.debris(t); debris != "" {
		t.Fatalf("trial %d: after a completed run: %s", trial, debris)
	}
	rows, err := lk.rows(t)
	if err != nil {
		t.Fatalf("trial %d: %v", trial, err)
	}
	checkVersions(t, rows, site, hist, trial)
}

// publishedRow is one row an export holds: a version of an item (or its
// removal) that a run published.
type publishedRow struct {
	// order sorts the runs in the order they were published.
	order string
	// run names the run (its folder, or its run id).
	run string
	// key and change are the row's _key and _change.
	key, change string
	// value is "title|price", or "removed".
	value string
}

// checkVersions checks the rows an export holds: per item, the rows in
// run order never repeat a version without a removal between them (a
// version published twice would be a duplicate), the first is new, every
// version is one the site really had (nothing from a stub page), and the
// last row is the item's current state.
func checkVersions(t *testing.T, rows []publishedRow, site *catalogsite.Site, hist *siteHistory, trial int) {
	t.Helper()
	byKey := map[string][]publishedRow{}
	for _, r := range rows {
		if r.change != "removed" && !hist.versions[r.key][r.value] {
			t.Fatalf("trial %d: %s holds %q for item %s, which the site never had", trial, r.run, r.value, r.key)
		}
		byKey[r.key] = append(byKey[r.key], r)
	}
	for key, list := range byKey {
		slices.SortStableFunc(list, func(a, b publishedRow) int { return strings.Compare(a.order, b.order) })
		for i := 1; i < len(list); i++ {
			if list[i].value == list[i-1].value {
				t.Fatalf("trial %d: item %s published %q twice in a row (%s, %s)", trial, key, list[i].value, list[i-1].run, list[i].run)
			}
		}
		if list[0].change != "new" {
			t.Fatalf("trial %d: item %s first published as %q (%s)", trial, key, list[0].change, list[0].run)
		}
	}
	for _, it := range site.Items() {
		var got string
		if list := byKey[it.UPC]; len(list) > 0 {
			got = list[len(list)-1].value
		}
		switch want := fmt.Sprintf("%s|%v", it.Title, it.Price); {
		case it.Removed && got != "removed" && got != "":
			// An item removed before any export held it never appears.
			t.Fatalf("trial %d: item %s was removed, the export still says %q", trial, it.UPC, got)
		case !it.Removed && got != want:
			t.Fatalf("trial %d: item %s is %q on the site, the export says %q", trial, it.UPC, want, got)
		}
	}
}

// rowValue is what checkVersions compares of a row: "title|price", or
// "removed" for a removal.
func rowValue(change string, title, price any) string {
	if change == "removed" {
		return "removed"
	}
	return fmt.Sprintf("%s|%v", title, price)
}

// folderRows reads the part files of run folders with arrow-go, each run
// whole (its _SUCCESS there, as many parts as its manifest lists).
func folderRows(t *testing.T, runs []publishedRun) ([]publishedRow, error) {
	var rows []publishedRow
	for _, run := range runs {
		d, m := run.dir, run.manifest
		if !run.complete {
			return nil, fmt.Errorf("%s has no _SUCCESS after a completed run", d)
		}
		// Runs started in the same second are ordered by their manifests.
		order := m.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000000")
		if len(run.parts) != len(m.Files) {
			return nil, fmt.Errorf("%s holds %d files, its manifest %d", d, len(run.parts), len(m.Files))
		}
		for _, f := range run.parts {
			rb := sinktest.ReadParquet(t, f)
			idx := map[string]int{}
			for i, c := range rb.Columns {
				idx[c.Name] = i
			}
			for _, row := range rb.Rows {
				key, change := row[idx["_key"]].(string), row[idx["_change"]].(string)
				rows = append(rows, publishedRow{order: order, run: d, key: key, change: change,
					value: rowValue(change, row[idx["title"]], row[idx["price"]])})
			}
		}
	}
	return rows, nil
}

// lake is an export root the crash loop publishes into.
type lake interface {
	// output is the config's output.
	output() string
	// env is what the binary's environment needs besides the test's.
	env() []string
	// rows reads every row the output holds; an error when a run is not
	// whole.
	rows(t *testing.T) ([]publishedRow, error)
	// debris says what a completed run left that it must not have left;
	// empty when nothing.
	debris(t *testing.T) string
}

// publishedRun is one run folder of an export root.
type publishedRun struct {
	dir      string
	complete bool
	manifest sink.Manifest
	// parts are the run's part files, as local paths.
	parts []string
}

// folderLake is a local export root.
type folderLake struct{ root string }

func (f *folderLake) output() string { return f.root }
func (f *folderLake) env() []string  { return nil }

func (f *folderLake) rows(t *testing.T) ([]publishedRow, error) { return folderRows(t, f.runs(t)) }

// runs lists the run folders, each with its parts.
func (f *folderLake) runs(t *testing.T) []publishedRun {
	var out []publishedRun
	dirs, _ := filepath.Glob(filepath.Join(f.root, "dt=*", "run=*"))
	for _, d := range dirs {
		run := publishedRun{dir: d, complete: sink.IsComplete(d)}
		if raw, err := os.ReadFile(filepath.Join(d, sink.ManifestFile)); err == nil {
			if err := json.Unmarshal(raw, &run.manifest); err != nil {
				t.Fatalf("%s: %v", d, err)
			}
		}
		run.parts, _ = filepath.Glob(filepath.Join(d, "*.parquet"))
		out = append(out, run)
	}
	return out
}

func (f *folderLake) debris(t *testing.T) string {
	for _, root := range folder.LegacyStagingRoots(f.root) {
		if _, err := os.Stat(root); !os.IsNotExist(err) {
			return "staging debris in " + root
		}
	}
	s, err := folder.Open(f.root)
	if err != nil {
		t.Fatal(err)
	}
	if staged, err := s.ListStaged(context.Background(), ""); err != nil || len(staged) > 0 {
		return fmt.Sprintf("staged parts left in %s: %v (%v)", f.root, staged, err)
	}
	return ""
}
