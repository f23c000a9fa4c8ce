package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/azuritetest"
	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/verdict"
)

// TestAnUnusableOutputFailsTheRun runs the binary against outputs it
// cannot use: a missing bucket of a real S3 server is a failed verdict
// naming the output, exit 1, before any request and without a state file;
// an unknown scheme is a config error, exit 2, naming the file, line and
// key.
func TestAnUnusableOutputFailsTheRun(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	srv := s3test.Start(t)
	site := catalogsite.New(catalogsite.Options{Items: 5})
	web := httptest.NewServer(site)
	defer web.Close()
	cases := []struct {
		name, output, stderr string
		code                 int
	}{
		{"missing bucket", srv.BucketURL("missing", "exports"), `bucket "missing" does not exist`, 1},
		{"unknown scheme", "ftp://lake/exports", `books.toml:4: output: unknown scheme "ftp"`, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := strings.Replace(lockedConfig, "START", catalogsite.StartURL(web.URL), 1)
			cfg = strings.Replace(cfg, `output = "out/books"`, "output = '"+c.output+"'", 1)
			cfgPath := filepath.Join(dir, "books.toml")
			if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			before := site.Requests()
			cmd := exec.Command(bin, "run", "--json", cfgPath)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), srv.Env()...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != c.code {
				t.Fatalf("exit %v, want %d; stderr:\n%s", err, c.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.stderr) {
				t.Fatalf("stderr does not say %q:\n%s", c.stderr, stderr.String())
			}
			if n := site.Requests() - before; n != 0 {
				t.Fatalf("%d requests reached the site", n)
			}
			if _, err := os.Stat(filepath.Join(dir, "state", "books", "state.db")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a state file was created (%v)", err)
			}
			if c.code == 1 {
				var rep verdict.RunReport
				if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Outcome != verdict.OutcomeFailed ||
					!strings.Contains(rep.Detail, "output s3://missing/exports") {
					t.Fatalf("verdict %s (%v), want failed naming the output", stdout.String(), err)
				}
			}
		})
	}
}

// TestAWrongAzureKeyIsOneLine runs the binary against Azurite with a wrong
// account key: the run fails (exit 1) before the crawl with one summary
// line that names the cause and what to check, the service's full answer
// (a dozen lines of XML and rules) kept for --log-level debug.
func TestAWrongAzureKeyIsOneLine(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	srv := azuritetest.Start(t)
	web := httptest.NewServer(catalogsite.New(catalogsite.Options{Items: 5}))
	defer web.Close()
	dir := t.TempDir()
	cfg := strings.Replace(lockedConfig, "START", catalogsite.StartURL(web.URL), 1)
	cfg = strings.Replace(cfg, `output = "out/books"`, "output = '"+srv.URL("exports")+"'", 1)
	cfgPath := filepath.Join(dir, "books.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (stdout, stderr string) {
		cmd := exec.Command(bin, append([]string{"run"}, append(args, cfgPath)...)...)
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), srv.Env()...), "AZURE_STORAGE_KEY=ZGF0YWJyZXctd3Jvbmcta2V5")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("exit %v, want 1; stderr:\n%s", err, errb.String())
		}
		return out.String(), errb.String()
	}
	stdout, stderr := run()
	all := stdout + stderr
	if n := strings.Count(strings.TrimSpace(all), "\n"); n != 0 {
		t.Errorf("the run printed %d lines, want one:\n%s", n+1, all)
	}
	const cause = "Azure Blob Storage refused the credentials (403 AuthorizationFailure): check AZURE_STORAGE_KEY"
	if !strings.Contains(all, cause) {
		t.Errorf("the output does not say %q:\n%s", cause, all)
	}
	_, stderr = run("--log-level", "debug")
	if !strings.Contains(stderr, "RESPONSE 403") {
		t.Errorf("--log-level debug does not give the service's answer:\n%s", stderr)
	}
}
