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
	for _, it := range site.Items() {
		if it.Removed {
			continue
		}
		if h.versions[it.UPC] == nil {
			h.versions[it.UPC] = map[string]bool{}
		}
		h.versions[it.UPC][fmt.Sprintf("%s|%v", it.Title, it.Price)] = true
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
	crashLoop(t, bin, dir, &folderLake{root: filepath.Join(dir, "out", "books")}, "")
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
	skipped := crashLoop(t, bin, dir, &folderLake{root: filepath.Join(dir, "out", "books")},
		"\n[revisit]\ncard = \"article.product_pod\"\nmin_after = \"1d\"\nmax_after = \"14d\"\n")
	if skipped == 0 {
		t.Fatal("no completed run skipped an item page: the revisit policy was not at work")
	}
}

// crashLoop runs the crash loop's trials against one kind of export root,
// with extra TOML appended to its config, and returns the items the
// completed runs skipped.
func crashLoop(t *testing.T, bin, dir string, lk lake, extra string) (skipped int) {
	site := catalogsite.New(catalogsite.Options{Items: 240, PerPage: 20, Latency: time.Millisecond})
	srv := httptest.NewServer(site)
	defer srv.Close()
	cfgPath := writeCrashConfig(t, dir, catalogsite.StartURL(srv.URL), lk.output(), extra)
	hist := &siteHistory{versions: map[string]map[string]bool{}}
	hist.note(site)
	rng := rand.New(rand.NewPCG(1, 2))
	kills := map[string]int{}
	runs := 0
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
			// The first runs of a trial are always killed.
			how, rep := runOnce(t, bin, cfgPath, lk, rng, attempt < 3)
			kills[how]++
			skipped += rep.Items.Skipped
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
	}
	t.Logf("%d trials, %d runs: %v; %d items skipped", *crashTrials, runs, kills, skipped)
	return skipped
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

// runOnce runs the binary and kills it with SIGKILL: at a random moment,
// at a publish step, or not at all. It returns how the run ended and, when
// it completed, its verdict.
func runOnce(t *testing.T, bin, cfgPath string, lk lake, rng *rand.Rand, kill bool) (string, verdict.RunReport) {
	t.Helper()
	cmd := exec.Command(bin, "run", "--json", cfgPath)
	cmd.Env = append(append(os.Environ(), lk.env()...), "GORACE="+subprocessGORACE())
	steps := stage.PublishSteps
	var how string
	r := rng.IntN(10)
	if kill {
		r = rng.IntN(8)
	}
	switch {
	case r < 4:
		how = "killed at " + string(steps[rng.IntN(len(steps))])
		cmd.Env = append(cmd.Env, pauseEnv+"="+strings.TrimPrefix(how, "killed at "))
	case r < 8:
		how = "killed at random"
	default:
		how = "completed"
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
	case strings.HasPrefix(how, "killed at random"):
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
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

// checkExports reads every published file with arrow-go and checks the
// exactly-once promise over all trials so far: per item, the published
// rows in run order never repeat a version without a removal between them
// (a version published twice would be a duplicate), every version is one
// the site really had (nothing from a stub page), and the last row is the
// item's current state.
func checkExports(t *testing.T, lk lake, site *catalogsite.Site, hist *siteHistory, trial int) {
	t.Helper()
	if debris := lk.debris(t); debris != "" {
		t.Fatalf("trial %d: after a completed run: %s", trial, debris)
	}
	type published struct{ order, dir, change, value string }
	rows := map[string][]published{}
	for _, run := range lk.runs(t) {
		d, m := run.dir, run.manifest
		if !run.complete {
			t.Fatalf("trial %d: %s has no _SUCCESS after a completed run", trial, d)
		}
		// Runs started in the same second are ordered by their manifests.
		order := m.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000000")
		if len(run.parts) != len(m.Files) {
			t.Fatalf("trial %d: %s holds %d files, its manifest %d", trial, d, len(run.parts), len(m.Files))
		}
		for _, f := range run.parts {
			rb := sinktest.ReadParquet(t, f)
			idx := map[string]int{}
			for i, c := range rb.Columns {
				idx[c.Name] = i
			}
			for _, row := range rb.Rows {
				key, change := row[idx["_key"]].(string), row[idx["_change"]].(string)
				value := "removed"
				if change != "removed" {
					value = fmt.Sprintf("%s|%v", row[idx["title"]], row[idx["price"]])
					if !hist.versions[key][value] {
						t.Fatalf("trial %d: %s holds %q for item %s, which the site never had", trial, d, value, key)
					}
				}
				rows[key] = append(rows[key], published{order, d, change, value})
			}
		}
	}
	for key, list := range rows {
		slices.SortFunc(list, func(a, b published) int { return strings.Compare(a.order, b.order) })
		for i := 1; i < len(list); i++ {
			if list[i].value == list[i-1].value {
				t.Fatalf("trial %d: item %s published %q twice in a row (%s, %s)", trial, key, list[i].value, list[i-1].dir, list[i].dir)
			}
		}
		if list[0].change != "new" {
			t.Fatalf("trial %d: item %s first published as %q", trial, key, list[0].change)
		}
	}
	for _, it := range site.Items() {
		var got string
		if list := rows[it.UPC]; len(list) > 0 {
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

// lake is an export root the crash loop publishes into.
type lake interface {
	// output is the config's output.
	output() string
	// env is what the binary's environment needs besides the test's.
	env() []string
	// runs lists the run folders, each with its parts readable as local
	// files.
	runs(t *testing.T) []publishedRun
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
