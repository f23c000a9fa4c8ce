package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// damagedSite is a site with enough items that the state's buckets span
// several pages.
var damagedSite = catalogsite.Options{Items: 60, PerPage: 20}

// stage runs the databrew-stage binary on one config in a temporary
// folder, as a scheduler would.
type stageBin struct {
	t                       *testing.T
	bin, dir, cfg           string
	stateFile, lastRun, out string
	site                    *catalogsite.Site
	hist                    *siteHistory
}

func newStageBin(t *testing.T) *stageBin {
	t.Helper()
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	site := catalogsite.New(damagedSite)
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	s := &stageBin{t: t, bin: bin, dir: dir, cfg: filepath.Join(dir, "books.toml"),
		stateFile: filepath.Join(dir, "state", "books", "state.db"),
		lastRun:   filepath.Join(dir, "state", "books", ".last_run.json"),
		out:       filepath.Join(dir, "out", "books"),
		site:      site, hist: &siteHistory{versions: map[string]map[string]bool{}}}
	s.hist.note(site)
	cfg := strings.Replace(lockedConfig, "START", catalogsite.StartURL(srv.URL), 1)
	if err := os.WriteFile(s.cfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// exec runs the binary with args (the config last) and returns its exit
// code, stdout and stderr. A crash (a Go panic or fatal error) fails the
// test.
func (s *stageBin) exec(env []string, args ...string) (int, string, string) {
	s.t.Helper()
	cmd := exec.Command(s.bin, append(args, s.cfg)...)
	cmd.Env = append(append(os.Environ(), "GORACE="+subprocessGORACE()), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "fatal error:") || strings.Contains(stderr.String(), "panic:") {
		s.t.Fatalf("databrew-stage %s crashed (exit %d):\n%s", strings.Join(args, " "), code, stderr.String())
	}
	return code, stdout.String(), stderr.String()
}

// run runs the stage with --json and returns its exit code and verdict.
func (s *stageBin) run(flags ...string) (int, verdict.RunReport, string) {
	s.t.Helper()
	code, stdout, stderr := s.exec(nil, append([]string{"run", "--json"}, flags...)...)
	var rep verdict.RunReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		s.t.Fatalf("run %v printed no verdict (exit %d): %v\nstdout %q\nstderr:\n%s", flags, code, err, stdout, stderr)
	}
	return code, rep, stderr
}

// refused checks a run refused for its damaged state file: exit 1, a
// verdict with stop error whose detail names the file and says what is
// wrong, and nothing written to the storage path or published.
func (s *stageBin) refused(about string) {
	s.t.Helper()
	lastRun, _ := os.ReadFile(s.lastRun)
	folders := runFolders(s.out)
	code, rep, stderr := s.run()
	if code != 1 || rep.Stop != verdict.StopError || rep.Outcome != verdict.OutcomeFailed || rep.Started ||
		!strings.Contains(rep.Detail, s.stateFile) || !strings.Contains(rep.Detail, about) ||
		!strings.Contains(rep.Detail, "state repair") || !strings.Contains(rep.Detail, "--reset-state") {
		s.t.Fatalf("run on the damaged state: exit %d, verdict %s (%s) started %v, detail %q\n%s", code, rep.Outcome, rep.Stop, rep.Started, rep.Detail, stderr)
	}
	if now, _ := os.ReadFile(s.lastRun); !bytes.Equal(now, lastRun) {
		s.t.Error(".last_run.json was written")
	}
	if now := runFolders(s.out); !slices.Equal(now, folders) {
		s.t.Errorf("run folders %v, want %v", now, folders)
	}
}

// check runs state check and returns its exit code and output.
func (s *stageBin) check() (int, string) {
	s.t.Helper()
	code, stdout, stderr := s.exec(nil, "state", "check")
	return code, stdout + stderr
}

// resetRecovers runs with --reset-state: the damaged file is kept aside
// and the run starts over, exporting every item again as new.
func (s *stageBin) resetRecovers() {
	s.t.Helper()
	damaged, _ := os.ReadFile(s.stateFile)
	code, rep, stderr := s.run("--reset-state")
	if code != 0 || rep.Outcome != verdict.OutcomeSuccess || rep.Items.New != damagedSite.Items || !rep.Export.Published {
		s.t.Fatalf("run --reset-state: exit %d, %s (%s) %q, items %+v\n%s", code, rep.Outcome, rep.Stop, rep.Detail, rep.Items, stderr)
	}
	aside, _ := filepath.Glob(s.stateFile + ".broken-*")
	if len(aside) != 1 || !strings.Contains(stderr, "WARN") || !strings.Contains(stderr, aside[0]) {
		s.t.Fatalf("kept aside: %v; stderr:\n%s", aside, stderr)
	}
	if kept, _ := os.ReadFile(aside[0]); !bytes.Equal(kept, damaged) {
		s.t.Error("the file kept aside is not the damaged file")
	}
}

func runFolders(output string) []string {
	dirs, _ := filepath.Glob(filepath.Join(output, "dt=*", "run=*"))
	return dirs
}

// boltMeta reads the page size, high-water mark, root and free list page
// of a bbolt file's newer meta page (see state/boltfile.go for the
// layout).
func boltMeta(t *testing.T, path string) (pageSize, pgid, root, freelist uint64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	meta := func(page []byte) (root, freelist, pgid, txid uint64) {
		m := page[16:]
		return binary.LittleEndian.Uint64(m[16:]), binary.LittleEndian.Uint64(m[32:]), binary.LittleEndian.Uint64(m[40:]), binary.LittleEndian.Uint64(m[48:])
	}
	pageSize = uint64(binary.LittleEndian.Uint32(b[16+8:]))
	root, freelist, pgid, tx0 := meta(b)
	if r1, f1, p1, tx1 := meta(b[pageSize:]); tx1 > tx0 {
		root, freelist, pgid = r1, f1, p1
	}
	return pageSize, pgid, root, freelist
}

// garblePages writes garbage over the given pages.
func garblePages(t *testing.T, path string, pageSize uint64, pages []uint64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := bytes.Repeat([]byte{0x5A, 0xC3, 0x96, 0x0F, 0xE1}, int(pageSize)/5+1)[:pageSize]
	for _, p := range pages {
		if _, err := f.WriteAt(junk, int64(p*pageSize)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTruncatedStateFailsTheRun: a state file cut to half its pages made
// every run die of SIGBUS in bbolt's free list read (exit 2, no verdict).
// Now the run fails with stop error naming the file, state check says it
// is truncated, and --reset-state starts over.
func TestTruncatedStateFailsTheRun(t *testing.T) {
	s := newStageBin(t)
	if code, rep, stderr := s.run(); code != 0 || rep.Items.New != damagedSite.Items {
		t.Fatalf("first run: exit %d, %+v\n%s", code, rep.Items, stderr)
	}
	pageSize, pgid, _, _ := boltMeta(t, s.stateFile)
	if err := os.Truncate(s.stateFile, int64(pgid/2*pageSize)); err != nil {
		t.Fatal(err)
	}
	s.refused("truncated")
	s.refused("truncated") // and every later run
	if code, out := s.check(); code != 1 || !strings.Contains(out, "truncated") {
		t.Errorf("state check: exit %d\n%s", code, out)
	}
	s.resetRecovers()
	if code, out := s.check(); code != 0 {
		t.Errorf("state check after the reset: exit %d\n%s", code, out)
	}
}

// TestGarbledStateFailsTheRun: garbage over the state's pages (all but
// the meta, root and free list pages) made bbolt panic on every run ("Page
// expected to be ..."). Now the run that reads them fails with stop error
// naming the file, every later one before it starts, and --reset-state
// starts over.
func TestGarbledStateFailsTheRun(t *testing.T) {
	s := newStageBin(t)
	if code, _, stderr := s.run(); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	pageSize, pgid, root, freelist := boltMeta(t, s.stateFile)
	var pages []uint64
	for p := uint64(2); p < pgid; p++ {
		if p != root && p != freelist {
			pages = append(pages, p)
		}
	}
	garblePages(t, s.stateFile, pageSize, pages)
	folders := runFolders(s.out)
	code, rep, stderr := s.run()
	if code != 1 || rep.Stop != verdict.StopError || rep.Outcome != verdict.OutcomeFailed || !strings.Contains(rep.Detail, s.stateFile) || rep.Export.Published {
		t.Fatalf("run on the garbled state: exit %d, verdict %s (%s) %q\n%s", code, rep.Outcome, rep.Stop, rep.Detail, stderr)
	}
	// Found in the middle of the run or before it, the damage comes with
	// the way out.
	if !strings.Contains(rep.Detail, "databrew-stage state repair") || !strings.Contains(rep.Detail, "--reset-state") {
		t.Fatalf("the detail %q does not say the way out", rep.Detail)
	}
	if now := runFolders(s.out); !slices.Equal(now, folders) {
		t.Errorf("run folders %v, want %v", now, folders)
	}
	s.refused("damaged")
	if code, out := s.check(); code != 1 || !strings.Contains(out, "has problems") {
		t.Errorf("state check: exit %d\n%s", code, out)
	}
	s.resetRecovers()
}

// TestRepairedStateLosesNoPendingItem: a run changed every item's price
// and was killed while publishing, so every change waits in the state,
// with the publish recorded; then the version log's pages were garbled.
// The run fails naming the file; state check finds the damage; state
// repair salvages the file; the next run publishes, and the exports end
// with every item's current price, none published twice.
func TestRepairedStateLosesNoPendingItem(t *testing.T) {
	s := newStageBin(t)
	if code, _, stderr := s.run(); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	for _, it := range s.site.Items() {
		s.site.SetPrice(it.ID, float64(int(it.Price*100)+100)/100)
	}
	s.hist.note(s.site)
	s.killAtPublishStep("staged")
	pageSize, _, _, _ := boltMeta(t, s.stateFile)
	garblePages(t, s.stateFile, pageSize, []uint64{bucketRoot(t, s.stateFile, "versions")})

	s.refused("damaged")
	if code, out := s.check(); code != 1 || !strings.Contains(out, "versions:") {
		t.Fatalf("state check: exit %d\n%s", code, out)
	}
	code, out, stderr := s.exec(nil, "state", "repair")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("%d items whose pending version was lost are exported again", damagedSite.Items)) {
		t.Fatalf("state repair: exit %d\n%s%s", code, out, stderr)
	}
	if aside, _ := filepath.Glob(s.stateFile + ".broken-*"); len(aside) != 1 {
		t.Errorf("kept aside: %v", aside)
	}
	if code, out := s.check(); code != 0 {
		t.Fatalf("state check after the repair: exit %d\n%s", code, out)
	}
	code, rep, stderr := s.run()
	if code != 0 || !rep.Export.Published || rep.Export.Rows != damagedSite.Items {
		t.Fatalf("run after the repair: exit %d, export %+v\n%s", code, rep.Export, stderr)
	}
	checkExports(t, &folderLake{root: s.out}, s.site, s.hist, 1)
}

// killAtPublishStep runs the stage until it pauses at a publish step, and
// kills it there.
func (s *stageBin) killAtPublishStep(step string) {
	s.t.Helper()
	killAt(s.t, s.bin, s.cfg, step)
}

// killAt runs the binary on cfgPath until it pauses at a publish step,
// and kills it there with SIGKILL.
func killAt(t *testing.T, bin, cfgPath, step string) {
	t.Helper()
	killCommandAt(t, bin, step, "run", cfgPath)
}

// killCommandAt runs the binary with args, pausing it at the publish
// step step, and kills it there with SIGKILL.
func killCommandAt(t *testing.T, bin, step string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GORACE="+subprocessGORACE(), pauseEnv+"="+step)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), pausedMarker) {
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if cmd.ProcessState.Success() {
		t.Fatalf("the run did not pause at %s", step)
	}
}

// bucketRoot is the root page of a bucket that has one.
func bucketRoot(t *testing.T, path, bucket string) uint64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var root uint64
	_ = db.View(func(tx *bolt.Tx) error { root = uint64(tx.Bucket([]byte(bucket)).Root()); return nil })
	if root == 0 {
		t.Fatalf("bucket %s is inline", bucket)
	}
	return root
}
