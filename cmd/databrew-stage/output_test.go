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
