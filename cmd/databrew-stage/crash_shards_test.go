package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/stage"
	"github.com/databrew/databrew-stage/verdict"
)

// pauseAtCommitStep returns the commit options of a subprocess that
// pauses at step, to be killed there; none when step is empty.
func pauseAtCommitStep(step string) func(*stage.CommitOptions) {
	if step == "" {
		return nil
	}
	return func(o *stage.CommitOptions) { o.AfterCommitStep = pauseAt(step) }
}

// The steps a shard and a commit pass, where the loop kills them.
var (
	shardSteps  = stepNames(publish.AttemptSteps)
	commitSteps = stepNames(publish.CommitSteps)
)

func stepNames(steps []publish.Step) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = string(s)
	}
	return out
}

// TestCrashLoopShardsS3 runs logical runs of 4 shards against the S3
// test server (versitygw), as an orchestrator does: see crashLoopShards.
func TestCrashLoopShardsS3(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	srv := s3test.Start(t)
	srv.SetEnv(t)
	lk := &shardedLake{s3Lake{srv: srv, url: srv.URL("exports/shards"), tmp: t.TempDir()}}
	if lk.t, err = objstore.Open(context.Background(), lk.url); err != nil {
		t.Fatal(err)
	}
	defer lk.t.Close()
	crashLoopShards(t, bin, lk)
}

// TestCrashLoopShardsFolder is the shards' crash loop into a local
// folder, where the commit renames the shards' staged files into the run
// folder in one step.
func TestCrashLoopShardsFolder(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	crashLoopShards(t, bin, &shardedFolder{folderLake{root: filepath.Join(t.TempDir(), "out", "books")}})
}

// crashLoopShards runs logical runs of 4 shards into lk (see
// shardTrials), while a reader lists the output: it may see a run's part
// files only once its commit decided, and once the run's _SUCCESS is
// there, exactly the files its manifest lists.
func crashLoopShards(t *testing.T, bin string, lk shardOutput) {
	r := &commitReader{lk: lk, manifests: map[string][]string{}}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		r.run(stop)
	}()
	stopReader := sync.OnceFunc(func() {
		close(stop)
		<-done
	})
	defer stopReader()
	shardTrials(t, bin, lk, shardOptions{})
	stopReader()
	r.check(t)
}

// shardOptions shape a shards' crash loop besides its output.
type shardOptions struct {
	// extra is TOML appended to the config.
	extra string
	// cleanEnd ends the loop with one more logical run that nothing
	// kills: all its shards, then its commit.
	cleanEnd bool
}

// shardResult is what a shards' crash loop did.
type shardResult struct {
	// committed lists the logical runs whose commit the loop ran to the
	// end (exit 0), in order.
	committed []string
	// saw holds, per logical run, every item version the site had while
	// its shards ran: item -> "title|price".
	saw map[string]map[string]map[string]bool
}

// commitKills are the ways the loop kills a commit: at each of its steps
// or at a random moment.
var commitKills = append(slices.Clone(commitSteps), "random")

// shardTrials runs logical runs of 4 shards into lk, as an orchestrator
// does: the 4 shards start as parallel processes, 2 of them, chosen at
// random, are killed with SIGKILL (at a random moment or at a step of
// their attempt), and only those are run again; then the commit runs
// (killed at one of its steps or at a random moment first, every other
// trial, and run again, or, every third trial, left to the next logical
// run's shards; every other trial a completed commit runs once more).
// After each trial every item version must be published exactly once,
// and the current state of every item must be there (see checkExports).
func shardTrials(t *testing.T, bin string, lk lake, o shardOptions) shardResult {
	site := catalogsite.New(catalogsite.Options{Items: 240, PerPage: 20, Latency: time.Millisecond})
	web := httptest.NewServer(site)
	defer web.Close()
	cfgPath := writeCrashConfig(t, t.TempDir(), catalogsite.StartURL(web.URL), lk.output(), o.extra)
	hist := &siteHistory{versions: map[string]map[string]bool{}}
	hist.note(site)
	rng := rand.New(rand.NewPCG(3, 4))
	kills := map[string]int{}
	shardRuns, commits := 0, 0
	res := shardResult{saw: map[string]map[string]map[string]bool{}}
	trials := *crashTrials
	if o.cleanEnd {
		trials++
	}
	for trial := 1; trial <= trials; trial++ {
		clean := trial > *crashTrials
		if trial > 1 {
			mutate(site, rng)
			hist.note(site)
		}
		// The ids sort in the order of the runs (a table's rows carry
		// them: see icebergLake.rows).
		runID := fmt.Sprintf("trial-%03d", trial)
		victims := rng.Perm(4)[:2]
		if clean {
			victims = nil
		}
		results := make([]string, 4)
		var wg sync.WaitGroup
		for i := range 4 {
			how := "completed"
			if slices.Contains(victims, i) {
				how = "killed at random"
				if rng.IntN(2) == 0 {
					how = "killed at " + shardSteps[rng.IntN(len(shardSteps))]
				}
			}
			delay := time.Duration(rng.IntN(200)) * time.Millisecond
			wg.Go(func() { results[i] = runShardProcess(t, bin, cfgPath, lk, i, runID, how, delay) })
		}
		wg.Wait()
		shardRuns += 4
		for _, res := range results {
			kills["shard "+res]++
		}
		// The orchestrator retries what did not pass, side by side, until
		// every shard did.
		for round := 0; ; round++ {
			var again []int
			for i, res := range results {
				if res != "passed" {
					again = append(again, i)
				}
			}
			if len(again) == 0 {
				break
			}
			if round == 5 {
				t.Fatalf("trial %d: shards %v did not pass after 5 retries: %v", trial, again, results)
			}
			var wg sync.WaitGroup
			for _, i := range again {
				wg.Go(func() { results[i] = runShardProcess(t, bin, cfgPath, lk, i, runID, "completed", 0) })
			}
			wg.Wait()
			shardRuns += len(again)
		}
		res.saw[runID] = map[string]map[string]bool{}
		addVersions(res.saw[runID], site)
		if !clean && rng.IntN(2) == 0 {
			kill := commitKills[rng.IntN(len(commitKills))]
			code, _ := runCommitProcess(t, bin, cfgPath, lk, runID, kill)
			switch {
			case code != -1:
				kills["commit done before a kill at random"]++
			case kill == "random":
				kills["commit killed at random"]++
			default:
				kills["commit killed at "+kill]++
			}
			commits++
			if code == -1 && kill != string(stage.StepCompleted) && trial%3 == 0 && trial < trials {
				// Nobody runs the commit again: the next run's shards
				// finish it, or give it up when it did not decide,
				// before they go on. The checks wait for the next trial.
				kills["commit left to the next run's shards"]++
				continue
			}
		}
		code, out := runCommitProcess(t, bin, cfgPath, lk, runID, "")
		commits++
		if code != 0 {
			t.Fatalf("trial %d: commit exited %d:\n%s", trial, code, out)
		}
		res.committed = append(res.committed, runID)
		if trial%2 == 1 {
			// Every other trial, the commit runs once more: it adds
			// nothing.
			if code, out := runCommitProcess(t, bin, cfgPath, lk, runID, ""); code != 0 || !strings.Contains(out, "committed already") && !strings.Contains(out, "nothing new") {
				t.Fatalf("trial %d: a second commit exited %d:\n%s", trial, code, out)
			}
			commits++
		}
		checkExports(t, lk, site, hist, trial)
	}
	t.Logf("%d trials: %d shard runs, %d commits: %v", trials, shardRuns, commits, kills)
	return res
}

// runShardProcess runs shard i of runID after delay, killing it as how
// says, and returns "passed", "failed" or how it was killed.
func runShardProcess(t *testing.T, bin, cfgPath string, lk lake, i int, runID, how string, delay time.Duration) string {
	time.Sleep(delay)
	cmd := exec.Command(bin, "run", "--json", "--shard", fmt.Sprintf("%d/4", i), "--run-id", runID, cfgPath)
	cmd.Env = append(append(os.Environ(), lk.env()...), "GORACE="+subprocessGORACE())
	step, atStep := strings.CutPrefix(how, "killed at ")
	if atStep && how != "killed at random" {
		cmd.Env = append(cmd.Env, pauseEnv+"="+step)
	}
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return "failed"
	}
	paused := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), pausedMarker) {
				paused <- true
			}
		}
		close(paused)
	}()
	out := make(chan []byte, 1)
	go func() {
		var b []byte
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			b = append(b, sc.Bytes()...)
		}
		out <- b
	}()
	switch {
	case how == "killed at random":
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		_ = cmd.Process.Kill()
	case atStep:
		if <-paused {
			_ = cmd.Process.Kill()
		}
	}
	line := <-out
	_ = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return how
	}
	var rep verdict.RunReport
	if err := json.Unmarshal(line, &rep); err != nil || rep.FailsDownstream() {
		return "failed"
	}
	return "passed"
}

// runCommitProcess runs the commit of runID, killed as kill says when it
// is not empty (at that commit step, or "random": at a random moment),
// and returns its exit code (-1 when killed) and stderr.
func runCommitProcess(t *testing.T, bin, cfgPath string, lk lake, runID, kill string) (int, string) {
	cmd := exec.Command(bin, "commit", cfgPath, "--run-id", runID, "--shards", "4")
	cmd.Env = append(append(os.Environ(), lk.env()...), "GORACE="+subprocessGORACE())
	step := kill
	if kill == "random" {
		step = ""
	}
	if step != "" {
		cmd.Env = append(cmd.Env, pauseEnv+"="+step)
	}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if kill == "random" {
		timer := time.AfterFunc(time.Duration(rand.IntN(300))*time.Millisecond, func() { _ = cmd.Process.Kill() })
		defer timer.Stop()
	}
	var lines []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if step != "" && strings.HasPrefix(sc.Text(), pausedMarker) {
			_ = cmd.Process.Kill()
		}
	}
	_ = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, strings.Join(lines, "\n")
	}
	return cmd.ProcessState.ExitCode(), strings.Join(lines, "\n")
}

// shardedLake is an S3 output holding logical runs of shards: a run's
// part files are one level down, in its shards' folders.
type shardedLake struct{ s3Lake }

// runOf is the run folder (dt=D/run=ID) a key under the output is in,
// or "".
func runOf(key string) string {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) < 3 || !strings.HasPrefix(parts[0], "dt=") || !strings.HasPrefix(parts[1], "run=") {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

func (l *shardedLake) runs(t *testing.T) []publishedRun          { return l.runsIn(t, runOf) }
func (l *shardedLake) rows(t *testing.T) ([]publishedRow, error) { return folderRows(t, l.runs(t)) }

// debris names the uploads left open and the run folders without
// _SUCCESS after a trial's commit.
func (l *shardedLake) debris(t *testing.T) string {
	// A preflight probe's upload that a kill left is aborted only once it
	// is older than a preflight lasts (minutes): shards run side by side
	// must not abort one another's probes. It is no data.
	return l.debrisIn(t, l.runs(t), func(k string) bool { return strings.Contains(k, "/.databrew-probe-") })
}

// shardOutput is an export root the shards' crash loop publishes into.
type shardOutput interface {
	lake
	// list gives the part files of each run folder (relative to it) and
	// the run folders holding _SUCCESS.
	list() (parts map[string][]string, success map[string]bool, err error)
	// decision reads a logical run's _decision.json; "" when none.
	decision(runID string) (string, error)
	// manifestFiles lists the files a run folder's manifest names.
	manifestFiles(dir string) ([]string, error)
}

// commitReader lists the output over and over, as a reader of the lake
// would. A run's part files may become visible only after its commit
// decided (its _decision.json says commit); once a listing shows the
// run's _SUCCESS, it must show exactly the files its manifest lists.
type commitReader struct {
	lk        shardOutput
	mu        sync.Mutex
	manifests map[string][]string // run folder -> the files its manifest lists
	listings  int
	early     int // listings that showed parts of a decided run before its _SUCCESS
	errs      []string
}

func (r *commitReader) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(2 * time.Millisecond):
		}
		parts, success, err := r.lk.list()
		if err != nil {
			r.fail("list: %v", err)
			return
		}
		r.mu.Lock()
		r.listings++
		r.mu.Unlock()
		for dir, names := range parts {
			if !success[dir] {
				d, err := r.lk.decision(strings.TrimPrefix(path.Base(dir), "run="))
				if err != nil || !strings.Contains(d, `"commit"`) {
					r.fail("parts %v of run %s visible before its commit decided (%v %s)", names, dir, err, d)
				}
				r.mu.Lock()
				r.early++
				r.mu.Unlock()
				continue
			}
			want := r.manifestFiles(dir)
			slices.Sort(names)
			if !slices.Equal(names, want) {
				r.fail("run %s listed with _SUCCESS and parts %v; its manifest lists %v", dir, names, want)
			}
		}
	}
}

// manifestFiles reads the files a committed run's manifest lists, once.
func (r *commitReader) manifestFiles(dir string) []string {
	r.mu.Lock()
	files, ok := r.manifests[dir]
	r.mu.Unlock()
	if ok {
		return files
	}
	files, err := r.lk.manifestFiles(dir)
	if err != nil {
		r.fail("run %s has _SUCCESS but its manifest cannot be read: %v", dir, err)
		return nil
	}
	slices.Sort(files)
	r.mu.Lock()
	r.manifests[dir] = files
	r.mu.Unlock()
	return files
}

// list gives the S3 output's part files by run folder.
func (l *shardedLake) list() (map[string][]string, map[string]bool, error) {
	keys, err := l.t.ListKeys(context.Background(), l.t.Key(""))
	if err != nil {
		return nil, nil, err
	}
	parts, success := map[string][]string{}, map[string]bool{}
	for _, k := range keys {
		k = strings.TrimPrefix(k, l.t.Prefix())
		dir := runOf(k)
		switch {
		case dir == "":
		case strings.HasSuffix(k, ".parquet"):
			parts[dir] = append(parts[dir], strings.TrimPrefix(k, dir+"/"))
		case path.Base(k) == sink.SuccessFile:
			success[dir] = true
		}
	}
	return parts, success, nil
}

func (l *shardedLake) decision(runID string) (string, error) {
	b, err := l.t.Read(context.Background(), l.t.Key(stage.ShardsFolder+"/run="+runID+"/_decision.json"))
	return string(b), err
}

func (l *shardedLake) manifestFiles(dir string) ([]string, error) {
	b, err := l.t.Read(context.Background(), l.t.Key(dir+"/"+sink.ManifestFile))
	if err != nil {
		return nil, err
	}
	return manifestNames(b)
}

// manifestNames lists the files a _manifest.json names.
func manifestNames(b []byte) ([]string, error) {
	var m sink.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	var files []string
	for _, f := range m.Files {
		files = append(files, f.Name)
	}
	return files, nil
}

// shardedFolder is a local output holding logical runs of shards.
type shardedFolder struct{ folderLake }

func (f *shardedFolder) list() (map[string][]string, map[string]bool, error) {
	parts, success := map[string][]string{}, map[string]bool{}
	dirs, err := filepath.Glob(filepath.Join(f.root, "dt=*", "run=*"))
	if err != nil {
		return nil, nil, err
	}
	for _, d := range dirs {
		rel, _ := filepath.Rel(f.root, d)
		rel = filepath.ToSlash(rel)
		files, _ := filepath.Glob(filepath.Join(d, "shard=*", "*.parquet"))
		for _, p := range files {
			name, _ := filepath.Rel(d, p)
			parts[rel] = append(parts[rel], filepath.ToSlash(name))
		}
		success[rel] = sink.IsComplete(d)
	}
	return parts, success, nil
}

func (f *shardedFolder) decision(runID string) (string, error) {
	b, err := os.ReadFile(filepath.Join(f.root, stage.ShardsFolder, "run="+runID, "_decision.json"))
	return string(b), err
}

func (f *shardedFolder) manifestFiles(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(dir), sink.ManifestFile))
	if err != nil {
		return nil, err
	}
	return manifestNames(b)
}

func (f *shardedFolder) rows(t *testing.T) ([]publishedRow, error) { return folderRows(t, f.runs(t)) }

// runs lists the run folders with their parts, in the shards' folders.
func (f *shardedFolder) runs(t *testing.T) []publishedRun {
	out := f.folderLake.runs(t)
	for i := range out {
		out[i].parts, _ = filepath.Glob(filepath.Join(out[i].dir, "shard=*", "*.parquet"))
	}
	return out
}

// debris names what a committed logical run left: staged files of a
// shard, or a run folder without _SUCCESS.
func (f *shardedFolder) debris(t *testing.T) string {
	var problems []string
	if left := f.folderLake.debris(t); left != "" {
		problems = append(problems, left)
	}
	for _, run := range f.runs(t) {
		if !run.complete {
			problems = append(problems, "a run folder without _SUCCESS: "+run.dir)
		}
	}
	return strings.Join(problems, "; ")
}

func (r *commitReader) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *commitReader) check(t *testing.T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) > 0 {
		t.Fatalf("the reader: %s", strings.Join(r.errs[:min(len(r.errs), 5)], "; "))
	}
	if r.listings < 10 || len(r.manifests) == 0 {
		t.Fatalf("the reader listed %d times and saw %d committed runs: it did not watch the loop", r.listings, len(r.manifests))
	}
	t.Logf("the reader listed the output %d times: %d committed runs, each whole once its _SUCCESS was there; "+
		"%d listings showed parts of a run whose commit had decided, before its _SUCCESS", r.listings, len(r.manifests), r.early)
}
