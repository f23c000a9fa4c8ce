package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/internal/testkit/stallproxy"
	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/sink/sinktest"
	"github.com/databrew/databrew-stage/stage"
	"github.com/databrew/databrew-stage/verdict"
)

// TestSIGTERMDuringAFrozenPublish runs the real binary publishing into
// S3 through a proxy that stops answering during the publish, before it
// is recorded (at the part's first request) or after (at the commit's):
// one SIGTERM then ends the process with its verdict written — on stdout
// and in .last_run.json — its export failed: interrupted by the signal
// before, or, after, the store's time limit naming the endpoint, since a
// recorded publish goes on. Once the store answers, the next run
// publishes every item exactly once.
func TestSIGTERMDuringAFrozenPublish(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, request string
		stop          verdict.Stop
		detail        string
	}{
		{"before the publish is recorded", `part-00000\.parquet`, verdict.StopInterrupted, "Interrupted by SIGTERM during the export"},
		{"after the publish is recorded", `^GET \S*part-00000\.parquet\?uploadId=`, verdict.StopError, "did not answer within 2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := s3test.Start(t)
			srv.SetEnv(t) // the test's own client reads the lake
			proxy := stallproxy.Start(t, strings.TrimPrefix(srv.Endpoint(), "http://"))
			site := httptest.NewServer(catalogsite.New(catalogsite.Options{Items: 30}))
			defer site.Close()
			dir := t.TempDir()
			cfgPath := filepath.Join(dir, "books.toml")
			cfg := fmt.Sprintf("name = \"books\"\nstart_urls = [%q]\nstorage = \"state\"\noutput = %q\n%s",
				catalogsite.StartURL(site.URL), proxy.Via(srv.URL("exports/books")), catalogsite.ExtractConfig)
			if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			env := append(append(os.Environ(), srv.Env()...), "GORACE="+subprocessGORACE())

			proxy.FreezeOn(tc.request)
			cmd := exec.Command(bin, "run", "--json", "--store-timeout", "2s", cfgPath)
			cmd.Env = env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case <-proxy.Stalls():
			case <-exited:
				t.Fatalf("the run ended before the store stopped answering\n%s", stderr.String())
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				<-exited
				t.Fatalf("the run never reached the publish\n%s", stderr.String())
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				<-exited
				t.Fatalf("no answer to one SIGTERM after a minute\n%s", stderr.String())
			}
			var rep verdict.RunReport
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("no verdict after SIGTERM: %v\n%s", err, stderr.String())
			}
			t.Logf("exit %d: %s", cmd.ProcessState.ExitCode(), rep.Summary())
			if rep.Stop != tc.stop || !strings.Contains(rep.Detail, tc.detail) || !rep.Export.Failed || rep.Export.Published {
				t.Fatalf("verdict %s (%s): %q, export %+v; want %s, the detail saying %q", rep.Outcome, rep.Stop, rep.Detail, rep.Export, tc.stop, tc.detail)
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("exit %d; want 1, a failed export", code)
			}
			if last, err := stage.ReadLastRun(filepath.Join(dir, "state")); err != nil || last.RunID != rep.RunID {
				t.Fatalf(".last_run.json: %v, run %q; want run %q", err, last.RunID, rep.RunID)
			}

			proxy.Thaw()
			next := exec.Command(bin, "run", "--json", cfgPath)
			next.Env = env
			if out, err := next.Output(); err != nil {
				t.Fatalf("next run: %v\n%s", err, out)
			}
			expectEachItemOnceInS3(t, srv, "exports/books", 30)
		})
	}
}

// expectEachItemOnceInS3 reads every committed run's part files under
// prefix straight from the server and checks that n items are there, each
// once, and that no upload is left.
func expectEachItemOnceInS3(t *testing.T, srv *s3test.Server, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	tg, err := objstore.Open(ctx, srv.URL(prefix))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if ups, err := tg.ListUploads(ctx, tg.Key("")); err != nil || len(ups) != 0 {
		t.Fatalf("uploads left: %q, %v", ups, err)
	}
	ks, err := tg.ListKeys(ctx, tg.Key(""))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, k := range ks {
		if !strings.HasSuffix(k, ".parquet") {
			continue
		}
		runDir := k[:strings.LastIndex(k, "/")+1]
		if !slices.Contains(ks, runDir+sink.SuccessFile) {
			t.Fatalf("%s is visible without its run's _SUCCESS", k)
		}
		data, err := tg.Read(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		local := filepath.Join(t.TempDir(), "part.parquet")
		if err := os.WriteFile(local, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rb := sinktest.ReadParquet(t, local)
		key := slices.IndexFunc(rb.Columns, func(c sinktest.Column) bool { return c.Name == "_key" })
		for _, row := range rb.Rows {
			seen[fmt.Sprint(row[key])]++
		}
	}
	if len(seen) != n {
		t.Fatalf("%d items published, want %d", len(seen), n)
	}
	for k, c := range seen {
		if c != 1 {
			t.Fatalf("item %s published %d times", k, c)
		}
	}
}
