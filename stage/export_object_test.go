package stage

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// lakeServer is a test's object store server (versitygw, Azurite): it
// gives the output URL of a prefix in its bucket.
type lakeServer interface {
	URL(prefix string) string
}

// lake is an object store server and the output prefix a config
// publishes into.
type lake struct {
	srv    lakeServer
	t      *objstore.Target
	prefix string
}

// newLake starts versitygw and opens the prefix "exports" of its bucket
// with the test's own client.
func newLake(t *testing.T) *lake {
	t.Helper()
	srv := s3test.Start(t)
	srv.SetEnv(t)
	return openLake(t, srv, "exports")
}

// openLake opens the prefix of the server's bucket with the test's own
// client; the server's environment must be set.
func openLake(t *testing.T, srv lakeServer, prefix string) *lake {
	t.Helper()
	tg, err := objstore.Open(context.Background(), srv.URL(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Close() })
	return &lake{srv: srv, t: tg, prefix: prefix}
}

// url is the output URL of the lake's prefix.
func (l *lake) url() string { return l.srv.URL(l.prefix) }

// configIn is the fixture's config publishing into the lake.
func (l *lake) configIn(f *fixture, extra string) config.Config {
	cfg := f.config(nil, extra)
	cfg.Output = l.url()
	return cfg
}

// keys lists the objects under the output, relative to it.
func (l *lake) keys(t testing.TB) []string {
	t.Helper()
	ks, err := l.t.ListKeys(context.Background(), l.t.Key(""))
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range ks {
		ks[i] = strings.TrimPrefix(k, l.t.Prefix())
	}
	return ks
}

// uploads lists the multipart uploads in progress under the output (none
// but on S3).
func (l *lake) uploads(t testing.TB) []string {
	t.Helper()
	us, err := l.t.ListUploads(context.Background(), l.t.Key(""))
	if err != nil {
		t.Fatal(err)
	}
	return us
}

// download copies every object under the output into a new local folder,
// through the store, so the local readers can read the runs back.
func (l *lake) download(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, k := range l.keys(t) {
		data, err := l.t.Read(context.Background(), l.t.Key(k))
		if err != nil {
			t.Fatal(err)
		}
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(k)), string(data)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runPrefixes lists the run prefixes (dt=.../run=...) holding any object,
// at any depth (a run of shards holds its parts in shard folders), and
// which of them hold _SUCCESS.
func (l *lake) runPrefixes(t testing.TB) (all, committed []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, k := range l.keys(t) {
		parts := strings.SplitN(k, "/", 3)
		if len(parts) < 3 || !strings.HasPrefix(parts[0], "dt=") {
			continue
		}
		dir := parts[0] + "/" + parts[1]
		if !seen[dir] {
			seen[dir] = true
			all = append(all, dir)
		}
		if k == dir+"/"+sink.SuccessFile {
			committed = append(committed, dir)
		}
	}
	return all, committed
}

// expectEachItemOnceInLake checks that every item of the site is in
// exactly one committed run, that no run prefix holds objects without its
// _SUCCESS, and that no multipart upload is left.
func expectEachItemOnceInLake(t *testing.T, f *fixture, l *lake) {
	t.Helper()
	all, committed := l.runPrefixes(t)
	if !slices.Equal(all, committed) {
		t.Fatalf("run prefixes %v, committed (with _SUCCESS) %v", all, committed)
	}
	if us := l.uploads(t); len(us) > 0 {
		t.Fatalf("multipart uploads left: %v", us)
	}
	expectEachItemOnce(t, f, l.download(t))
}

// TestObjectStore_ARunPublishesIntoS3 publishes 50 items into versitygw:
// see aRunPublishes.
func TestObjectStore_ARunPublishesIntoS3(t *testing.T) {
	aRunPublishes(t, newLake(t), "s3://lake/exports/")
}

// aRunPublishes publishes 50 items into the lake: one run prefix holding
// one part file, _verdict.json, _manifest.json and _SUCCESS, the output's
// _verdict.json, nothing else, and the verdict names the run as
// wantBase + dt=.../run=.../; an unchanged site publishes nothing more; a
// changed item publishes one row.
func aRunPublishes(t *testing.T, l *lake, wantBase string) {
	t.Helper()
	f := newFixture(t, catalogsite.Options{Items: 50})
	// max_file_rows applies to local folders: a run in object storage is
	// one part file, completed atomically.
	cfg := l.configIn(f, "\n[export]\nmax_file_rows = 10\n")
	rep := f.run(cfg, Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	runDir := "dt=" + rep.StartedAt.Format("2006-01-02") + "/run=" + rep.RunID
	want := []string{sink.VerdictFile, runDir + "/" + sink.SuccessFile, runDir + "/" + sink.ManifestFile,
		runDir + "/" + sink.VerdictFile, runDir + "/part-00000.parquet"}
	slices.Sort(want)
	if got := l.keys(t); !slices.Equal(got, want) {
		t.Fatalf("objects %q, want %q", got, want)
	}
	// The run's path has no trailing slash, as a run folder's has none.
	if !rep.Export.Published || rep.Export.Rows != 50 || rep.Export.Path != wantBase+runDir {
		t.Fatalf("export %+v; want 50 rows at %s", rep.Export, wantBase+runDir)
	}
	expectEachItemOnceInLake(t, f, l)
	root, err := l.t.Read(context.Background(), l.t.Key(sink.VerdictFile))
	if err != nil || !strings.Contains(string(root), rep.RunID) {
		t.Fatalf("the output's _verdict.json (%v) is not run 1's: %s", err, root)
	}

	rep2 := f.run(cfg, Options{})
	if rep2.Export.Published {
		t.Fatalf("an unchanged site published again: %+v", rep2.Export)
	}
	f.site.SetPrice(3, 99.5)
	rep3 := f.run(cfg, Options{})
	if !rep3.Export.Published || rep3.Export.Rows != 1 {
		t.Fatalf("a changed item: export %+v, want one row", rep3.Export)
	}
	if _, committed := l.runPrefixes(t); len(committed) != 2 {
		t.Fatalf("committed runs %v, want 2", committed)
	}
}

// TestObjectStore_APublishCutAtAnyStepReachesTheLakeExactlyOnce abandons
// a publish into S3 after each step of its protocol, as a crash would,
// then runs again: every item reaches exactly one committed run, no run
// prefix holds objects without _SUCCESS, and no upload is left.
func TestObjectStore_APublishCutAtAnyStepReachesTheLakeExactlyOnce(t *testing.T) {
	for _, step := range PublishSteps {
		t.Run(string(step), func(t *testing.T) {
			publishCutAt(t, newLake(t), step)
		})
	}
}

// publishCutAt abandons a publish into the lake after step, as a crash
// would, checks what the lake holds then, and runs again: every item
// reaches exactly one committed run, no run prefix holds objects without
// _SUCCESS, and no upload is left. A publish cut once its manifest is
// recorded (ready, visible, completed) is rolled forward; one cut sooner
// is rolled back and published again.
func publishCutAt(t *testing.T, l *lake, step PublishStep) {
	t.Helper()
	f := newFixture(t, catalogsite.Options{Items: 30})
	cfg := l.configIn(f, "")
	rep, err := Run(t.Context(), cfg, Options{AfterPublishStep: crashAt(step)})
	if !errors.Is(err, errCrash) {
		t.Fatalf("run 1: %v", err)
	}
	if step == StepStaged || step == StepDecided {
		parts := slices.DeleteFunc(l.keys(t), func(k string) bool { return !strings.HasSuffix(k, ".parquet") })
		if l.t.HidesParts() {
			// The part is uploaded and hidden: listed as an upload,
			// not as an object.
			if us := l.uploads(t); len(us) != 1 || !strings.HasSuffix(us[0], "/part-00000.parquet") {
				t.Fatalf("uploads after %s: %v, want the part", step, us)
			}
			if len(parts) > 0 {
				t.Fatalf("parts visible after %s: %v", step, parts)
			}
		} else {
			// The part is written whole and visible, but its run has
			// no _SUCCESS: readers skip it.
			if len(parts) != 1 || !strings.HasSuffix(parts[0], "/part-00000.parquet") {
				t.Fatalf("parts after %s: %v, want the part, visible", step, parts)
			}
			if _, committed := l.runPrefixes(t); len(committed) > 0 {
				t.Fatalf("runs committed after %s: %v", step, committed)
			}
		}
	}
	rep2 := f.run(cfg, Options{})
	expectEachItemOnceInLake(t, f, l)
	_, committed := l.runPrefixes(t)
	rolledForward := step == StepDecided || step == StepVisible || step == StepCompleted
	switch {
	case len(committed) != 1:
		t.Fatalf("committed runs %v, want one", committed)
	case rolledForward && (rep2.Export.Published || path.Base(committed[0]) != "run="+rep.RunID):
		t.Fatalf("after %s run 1 must be completed, not published again: run 2 export %+v, runs %v", step, rep2.Export, committed)
	case !rolledForward && (!rep2.Export.Published || path.Base(committed[0]) != "run="+rep2.RunID):
		t.Fatalf("after %s run 2 must publish what run 1 could not: %+v, runs %v", step, rep2.Export, committed)
	}
}

// TestObjectStore_AZombiePublisherNeverOverwrites: run 1 is cut once its
// publish is ready; a copy of its state is kept, as a publisher that hung
// there would hold it. Run 2 commits run 1. Then the copy resumes the
// same publish: every write it makes is refused or finds the run already
// committed, and no object changes.
func TestObjectStore_AZombiePublisherNeverOverwrites(t *testing.T) {
	l := newLake(t)
	f := newFixture(t, catalogsite.Options{Items: 20})
	cfg := l.configIn(f, "")
	if _, err := Run(t.Context(), cfg, Options{AfterPublishStep: crashAt(StepDecided)}); !errors.Is(err, errCrash) {
		t.Fatalf("run 1: %v", err)
	}
	zombie := cfg
	zombie.Storage = filepath.Join(f.dir, "zombie-state")
	copyDir(t, cfg.Storage, zombie.Storage)

	f.run(cfg, Options{})
	before := snapshot(t, l)
	rep := f.run(zombie, Options{})
	if rep.Outcome != verdict.OutcomeSuccess || rep.Export.Published {
		t.Fatalf("zombie run: %s, export %+v", rep.Summary(), rep.Export)
	}
	after := snapshot(t, l)
	for k, v := range before {
		if k != sink.VerdictFile && after[k] != v {
			t.Fatalf("object %s changed under the zombie publisher", k)
		}
	}
	expectEachItemOnceInLake(t, f, l)
}

// snapshot reads every object under the lake's output.
func snapshot(t *testing.T, l *lake) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range l.keys(t) {
		data, err := l.t.Read(context.Background(), l.t.Key(k))
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(data)
	}
	return out
}

// copyDir copies the files of a folder (not its subfolders).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := writeFile(filepath.Join(to, e.Name()), string(data)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestObjectStore_ABadOutputFailsBeforeAnyRequest: a missing bucket, a
// wrong secret, no credentials and an unreachable endpoint each fail the
// run before a single request reaches the site and before the state is
// created, with a failed verdict naming the output; the bucket holds
// nothing afterwards, and .last_run.json tells a sensor.
func TestObjectStore_ABadOutputFailsBeforeAnyRequest(t *testing.T) {
	l := newLake(t)
	srv := l.srv.(*s3test.Server)
	srv.AddUser(t, "reader", "reader-secret")
	cases := []struct {
		name   string
		output string
		env    map[string]string
		kind   error
		want   string
	}{
		{"missing bucket", srv.BucketURL("no-such-bucket", "exports"), nil, objstore.ErrNoBucket, `bucket "no-such-bucket" does not exist`},
		{"wrong secret", l.url(), map[string]string{"AWS_SECRET_ACCESS_KEY": "wrong"}, objstore.ErrCredentials, "SignatureDoesNotMatch"},
		{"access denied", l.url(), map[string]string{"AWS_ACCESS_KEY_ID": "reader", "AWS_SECRET_ACCESS_KEY": "reader-secret"},
			objstore.ErrDenied, `access denied (AccessDenied): the credentials lack a permission on bucket "lake"`},
		{"no credentials", l.url(), map[string]string{"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""}, objstore.ErrCredentials, "no credentials found"},
		{"unreachable", strings.Replace(l.url(), url.QueryEscape(srv.Endpoint()), url.QueryEscape(s3test.ClosedEndpoint(t)), 1),
			nil, objstore.ErrUnreachable, "cannot reach the endpoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			f := newFixture(t, catalogsite.Options{Items: 5})
			var requests int
			f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
				requests++
				next.ServeHTTP(w, r)
			})
			cfg := f.config(nil, "")
			cfg.Output = c.output
			rep, err := Run(t.Context(), cfg, Options{})
			t.Log(rep.Summary())
			if !errors.Is(err, ErrOutput) || !errors.Is(err, c.kind) {
				t.Fatalf("Run error = %v; want ErrOutput and %v", err, c.kind)
			}
			if rep.Outcome != verdict.OutcomeFailed || rep.Stop != verdict.StopError ||
				!strings.Contains(rep.Detail, c.want) || !strings.Contains(rep.Detail, "output s3://") {
				t.Fatalf("verdict %s, detail %q; want failed naming the output and %q", rep.Summary(), rep.Detail, c.want)
			}
			if requests != 0 {
				t.Fatalf("%d requests reached the site", requests)
			}
			if _, err := os.Stat(filepath.Join(cfg.Storage, state.FileName)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the state file was created (%v)", err)
			}
			last, err := ReadLastRun(cfg.Storage)
			if err != nil || last.Detail != rep.Detail {
				t.Fatalf(".last_run.json = %+v, %v", last, err)
			}
			if ks := l.keys(t); len(ks) > 0 {
				t.Fatalf("objects written: %v", ks)
			}
			if us := l.uploads(t); len(us) > 0 {
				t.Fatalf("uploads left: %v", us)
			}
		})
	}
}

// TestObjectStore_AStateLostNextToPublishedRunsIsAnError: the output in
// S3 holds a committed run and the state file is gone, so the run fails
// instead of exporting every item again as new.
func TestObjectStore_AStateLostNextToPublishedRunsIsAnError(t *testing.T) {
	l := newLake(t)
	f := newFixture(t, catalogsite.Options{Items: 10})
	cfg := l.configIn(f, "")
	f.run(cfg, Options{})
	if err := os.Remove(filepath.Join(cfg.Storage, state.FileName)); err != nil {
		t.Fatal(err)
	}
	_, err := Run(t.Context(), cfg, Options{})
	if !errors.Is(err, ErrNoState) || !strings.Contains(err.Error(), "already holds published runs, so starting over") {
		t.Fatalf("Run = %v; want ErrNoState saying the output holds published runs", err)
	}
}
