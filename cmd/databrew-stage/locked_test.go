package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/cli"
	"github.com/databrew/databrew-stage/internal/testkit/schemacheck"
	"github.com/databrew/databrew-stage/verdict"
)

const lockedConfig = `name = "books"
start_urls = ["START"]
storage = "state/books"
output = "out/books"

[policy]
concurrency = 4
timeout = "20s"
retries = 0
backoff = "1ms"
max_backoff = "5ms"
retry_pass_delay = "10ms"
pause = "0s"

` + catalogsite.ExtractConfig

// TestLockedStorage runs databrew-stage as a second process that holds the
// storage path (its crawl hangs on the site), then runs the same config:
// that run fails with the error stop and a detail naming the path, exits
// 1, and leaves the storage path as it was.
func TestLockedStorage(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatalf("the databrew-stage command is not on PATH: %v", err)
	}
	site := catalogsite.New(catalogsite.Options{Items: 12, PerPage: 6})
	srv := httptest.NewServer(site)
	defer srv.Close()

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "books.toml")
	cfg := strings.Replace(lockedConfig, "START", catalogsite.StartURL(srv.URL), 1)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	storage := filepath.Join(dir, "state", "books")
	lastRun := filepath.Join(storage, ".last_run.json")

	// A completed run first, so there is a .last_run.json to keep.
	var stdout, stderr bytes.Buffer
	if code := cli.Main([]string{"run", cfgPath}, cli.Env{Stdout: &stdout, Stderr: &stderr}); code != 0 {
		t.Fatalf("first run exited %d: %s", code, stderr.String())
	}
	before, err := os.ReadFile(lastRun)
	if err != nil {
		t.Fatal(err)
	}
	beforeInfo, err := os.Stat(lastRun)
	if err != nil {
		t.Fatal(err)
	}
	beforeEntries := dirEntries(t, storage)

	// The holder's crawl hangs on its first page until it is killed.
	site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultHang})
	served := site.Served(catalogsite.FaultHang)
	var holderErr bytes.Buffer
	holder := exec.Command(bin, "run", cfgPath)
	holder.Env = append(os.Environ(), "GORACE="+subprocessGORACE())
	holder.Stderr = &holderErr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	holderDone := make(chan error, 1)
	go func() { holderDone <- holder.Wait() }()
	defer func() {
		_ = holder.Process.Kill()
		<-holderDone
	}()
	// The holder opens the storage path before it sends a request, so a
	// hanging request means it holds the lock.
	deadline := time.Now().Add(15 * time.Second)
	for site.Served(catalogsite.FaultHang) == served {
		select {
		case err := <-holderDone:
			holderDone <- err
			t.Fatalf("the holder exited early (%v): %s", err, holderErr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder sent no request")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// In-process: the verdict of the locked run.
	stdout.Reset()
	stderr.Reset()
	code := cli.Main([]string{"run", "--json", cfgPath}, cli.Env{Stdout: &stdout, Stderr: &stderr})
	if code != cli.ExitFailed {
		t.Errorf("locked run exited %d, want 1; stderr:\n%s", code, stderr.String())
	}
	wantSummary := "books: failed (error) · storage " + storage + " is in use by another process\n"
	if stderr.String() != wantSummary {
		t.Errorf("stderr = %q, want %q", stderr.String(), wantSummary)
	}
	if err := schemacheck.Verdict(bytes.TrimSpace(stdout.Bytes())); err != nil {
		t.Errorf("locked verdict does not match the schema: %v\n%s", err, stdout.String())
	}
	var rep verdict.RunReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("stdout is not one verdict: %v\n%s", err, stdout.String())
	}
	if rep.Stop != verdict.StopError || rep.Outcome != verdict.OutcomeFailed || rep.Started || rep.RunID != "" ||
		!strings.Contains(rep.Detail, storage) || rep.Requests.Total != 0 {
		t.Errorf("locked verdict = %+v", rep)
	}

	// As a process: the exit code the scheduler sees.
	second := exec.Command(bin, "run", cfgPath)
	second.Env = append(os.Environ(), "GORACE="+subprocessGORACE())
	out, err := second.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("locked run as a process: %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "books: failed (error) · storage "+storage) {
		t.Errorf("locked run as a process printed %q", out)
	}

	// Nothing was written to the storage path by the locked runs.
	after, err := os.ReadFile(lastRun)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf(".last_run.json changed:\nbefore %s\nafter %s", before, after)
	}
	if afterInfo, err := os.Stat(lastRun); err != nil || !afterInfo.ModTime().Equal(beforeInfo.ModTime()) {
		t.Errorf(".last_run.json was rewritten (%v)", err)
	}
	if got := dirEntries(t, storage); !slices.Equal(got, beforeEntries) {
		t.Errorf("storage holds %q, want %q", got, beforeEntries)
	}

	// report still describes the completed run, while the holder runs.
	stdout.Reset()
	stderr.Reset()
	if code := cli.Main([]string{"report", "--json", cfgPath}, cli.Env{Stdout: &stdout, Stderr: &stderr}); code != 0 {
		t.Fatalf("report exited %d: %s", code, stderr.String())
	}
	var entry cli.ReportEntry
	if err := json.Unmarshal(stdout.Bytes(), &entry); err != nil {
		t.Fatal(err)
	}
	if entry.LastRun == nil || entry.LastRun.Outcome != verdict.OutcomeSuccess || entry.LastRun.Items.New != 12 {
		t.Errorf("report during the lock = %s", stdout.String())
	}
}

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
