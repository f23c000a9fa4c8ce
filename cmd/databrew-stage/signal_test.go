package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// TestSignalsStopTheRunAndKeepTheQueue sends SIGINT and SIGTERM to the
// real binary mid-crawl: the run ends interrupted with the signal named,
// writes its verdict, and leaves the rest of the queue for the next run,
// which finishes the traversal.
func TestSignalsStopTheRunAndKeepTheQueue(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			site := catalogsite.New(catalogsite.Options{Items: 400, Latency: 5 * time.Millisecond})
			srv := httptest.NewServer(site)
			defer srv.Close()
			dir := t.TempDir()
			cfgPath := filepath.Join(dir, "books.toml")
			cfg := fmt.Sprintf("name = \"books\"\nstart_urls = [%q]\n[policy]\nconcurrency = 2\n%s", catalogsite.StartURL(srv.URL), catalogsite.ExtractConfig)
			if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "run", "--json", cfgPath)
			cmd.Env = append(os.Environ(), "GORACE="+subprocessGORACE())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for site.Requests() < 40 {
				time.Sleep(5 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			var rep verdict.RunReport
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("no verdict after %s: %v\n%s", sig, err, stderr.String())
			}
			name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
			if rep.Stop != verdict.StopInterrupted || rep.Detail != "Interrupted by "+name || rep.Outcome != verdict.OutcomePartial {
				t.Fatalf("verdict = %s (%s): %q", rep.Outcome, rep.Stop, rep.Detail)
			}
			if code := cmd.ProcessState.ExitCode(); code != 0 {
				t.Fatalf("a partial run exits 0, got %d", code)
			}
			if !strings.Contains(stderr.String(), "books: partial (interrupted)") {
				t.Fatalf("stderr = %s", stderr.String())
			}
			if rep.Traversal.Queued == 0 || rep.Traversal.Completed {
				t.Fatalf("the queue must be kept: %+v", rep.Traversal)
			}
			// The next run resumes and stores the rest: nothing lost.
			next := exec.Command(bin, "run", "--json", cfgPath)
			next.Env = cmd.Env
			out, err := next.Output()
			if err != nil {
				t.Fatalf("next run: %v", err)
			}
			var rep2 verdict.RunReport
			if err := json.Unmarshal(out, &rep2); err != nil {
				t.Fatal(err)
			}
			if rep2.Traversal.Started || rep.Items.New+rep2.Items.New != 400 || !rep2.Traversal.Completed {
				t.Fatalf("resume: %d + %d items, traversal %+v", rep.Items.New, rep2.Items.New, rep2.Traversal)
			}
		})
	}
}
