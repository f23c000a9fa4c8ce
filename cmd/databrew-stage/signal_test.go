package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// TestSignalsStopTheRunAndKeepTheQueue sends SIGINT and SIGTERM to the
// real binary mid-crawl: the run ends interrupted with the signal named,
// writes its verdict, publishes nothing (a signal stops the export as it
// stops the crawl), and leaves the rest of the queue and the stored items
// for the next run, which finishes the traversal.
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
			cfgPath, cmd, stdout, stderr := startRun(t, bin, catalogsite.StartURL(srv.URL), "")
			await(t, "40 requests to the site", func() bool { return site.Requests() >= 40 }, stderr)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			var rep verdict.RunReport
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("no verdict after %s: %v\n%s", sig, err, stderr.String())
			}
			name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
			if rep.Stop != verdict.StopInterrupted || !strings.HasPrefix(rep.Detail, "Interrupted by "+name) || rep.Outcome != verdict.OutcomePartial {
				t.Fatalf("verdict = %s (%s): %q", rep.Outcome, rep.Stop, rep.Detail)
			}
			// The signal stops the export too (nothing is published, the
			// items stay pending): an export that did not happen fails
			// the run under the default --fail-when any.
			if code := cmd.ProcessState.ExitCode(); code != 1 || !rep.Export.Failed || rep.Export.Published {
				t.Fatalf("exit %d, export %+v; want 1 and the export failed", code, rep.Export)
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

// TestSIGTERMRightAfterAListingPageOf100000Links sends SIGTERM while the
// run reads a listing page of 100,000 links, with the default
// max_links_per_page and with none: the binary must answer it as
// interrupted, not after minutes (its commit of the links was quadratic).
// The bound below is generous on purpose: it only catches a run that does
// not answer at all; the test logs how long the answer took.
func TestSIGTERMRightAfterAListingPageOf100000Links(t *testing.T) {
	for name, limit := range map[string]string{"default max_links_per_page": "", "no max_links_per_page": "max_links_per_page = 0\n"} {
		t.Run(name, func(t *testing.T) { sigtermAfterAHugeListing(t, limit) })
	}
}

func sigtermAfterAHugeListing(t *testing.T, limit string) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	site := catalogsite.New(catalogsite.Options{Items: 50})
	var page bytes.Buffer
	page.WriteString("<html><body>")
	for i := 1; i <= 100_000; i++ {
		fmt.Fprintf(&page, `<article class="product_pod"><h3><a href="item-%d.html">%d</a></h3></article>`+"\n", i, i)
	}
	page.WriteString("</body></html>")
	served := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/catalogue/big.html" {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write(page.Bytes())
			once.Do(func() { close(served) })
			return
		}
		site.ServeHTTP(w, r)
	}))
	defer srv.Close()
	_, cmd, stdout, stderr := startRun(t, bin, srv.URL+"/catalogue/big.html", limit)
	select {
	case <-served:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("the run never asked for the listing page\n%s", stderr.String())
	}
	time.Sleep(200 * time.Millisecond) // the page is being parsed or committed
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
		t.Logf("answered SIGTERM in %s", time.Since(signalled).Round(time.Millisecond))
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("no answer to SIGTERM after a minute\n%s", stderr.String())
	}
	var rep verdict.RunReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("no verdict after SIGTERM: %v\n%s", err, stderr.String())
	}
	if rep.Stop != verdict.StopInterrupted || rep.Detail != "Interrupted by SIGTERM" {
		t.Fatalf("verdict = %s (%s): %q", rep.Outcome, rep.Stop, rep.Detail)
	}
}

// startRun writes a config crawling start at concurrency 2, with policy
// lines added, and starts "databrew-stage run --json" on it.
func startRun(t *testing.T, bin, start, policy string) (cfgPath string, cmd *exec.Cmd, stdout, stderr *bytes.Buffer) {
	t.Helper()
	cfgPath = filepath.Join(t.TempDir(), "books.toml")
	cfg := fmt.Sprintf("name = \"books\"\nstart_urls = [%q]\n[policy]\nconcurrency = 2\n%s%s", start, policy, catalogsite.ExtractConfig)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(bin, "run", "--json", cfgPath)
	cmd.Env = append(os.Environ(), "GORACE="+subprocessGORACE())
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cfgPath, cmd, stdout, stderr
}

// await polls cond until it holds. It gives up after a minute, failing
// with the child's stderr so far, so a child that died or hung fails the
// test rather than holding it until go test's timeout.
func await(t *testing.T, what string, cond func() bool, stderr *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s after a minute; the run's stderr:\n%s", what, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
