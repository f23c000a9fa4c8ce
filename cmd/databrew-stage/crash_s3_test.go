package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/sink"
)

// TestCrashLoopS3 is the crash loop against a real S3 server (versitygw):
// kill -9 at random moments and after every step of the object-storage
// publish protocol. Besides the checks of every crash loop, after each
// completed run no multipart upload is left and no run prefix holds an
// object without its _SUCCESS. All the while a reader lists
// **/*.parquet under the output, as a query engine would: every run it
// ever sees a part of must end committed, with exactly the parts it saw.
func TestCrashLoopS3(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	srv := s3test.Start(t)
	srv.SetEnv(t)
	lk := &s3Lake{srv: srv, url: srv.URL("exports/books"), tmp: t.TempDir()}
	if lk.t, err = objstore.Open(context.Background(), lk.url); err != nil {
		t.Fatal(err)
	}
	defer lk.t.Close()

	r := &listingReader{lk: lk, seen: map[string][]string{}}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		r.run(stop)
	}()
	crashLoop(t, bin, t.TempDir(), lk, crashOptions{})
	close(stop)
	<-done
	r.check(t)
}

// s3Lake is an output in the S3 server's bucket.
type s3Lake struct {
	srv *s3test.Server
	url string
	t   *objstore.Target
	tmp string // where runs' parts are downloaded to be read
}

func (l *s3Lake) output() string { return l.url }
func (l *s3Lake) env() []string  { return l.srv.Env() }

// keys lists the objects under the output, relative to it.
func (l *s3Lake) keys(t testing.TB) []string {
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

func (l *s3Lake) rows(t *testing.T) ([]publishedRow, error) { return folderRows(t, l.runs(t)) }

// runs lists the run prefixes holding objects, downloading the part
// files of each through S3 into local files.
func (l *s3Lake) runs(t *testing.T) []publishedRun {
	return l.runsIn(t, func(key string) string {
		if !strings.HasPrefix(key, "dt=") {
			return ""
		}
		return path.Dir(key)
	})
}

// runsIn lists the run prefixes holding objects, as runOf tells a key's
// run prefix ("" for a key in none), downloading the part files of each
// through S3 into local files.
func (l *s3Lake) runsIn(t *testing.T, runOf func(key string) string) []publishedRun {
	byDir := map[string]*publishedRun{}
	var dirs []string
	for _, k := range l.keys(t) {
		dir := runOf(k)
		if dir == "" {
			continue
		}
		run := byDir[dir]
		if run == nil {
			run = &publishedRun{dir: dir}
			byDir[dir] = run
			dirs = append(dirs, dir)
		}
		switch name := strings.TrimPrefix(k, dir+"/"); {
		case name == sink.SuccessFile:
			run.complete = true
		case name == sink.ManifestFile:
			if err := json.Unmarshal(l.read(t, k), &run.manifest); err != nil {
				t.Fatalf("%s: %v", k, err)
			}
		case strings.HasSuffix(name, ".parquet"):
			local := filepath.Join(l.tmp, filepath.FromSlash(k))
			if _, err := os.Stat(local); err != nil { // a run's part never changes
				if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(local, l.read(t, k), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			run.parts = append(run.parts, local)
		}
	}
	out := make([]publishedRun, len(dirs))
	for i, d := range dirs {
		out[i] = *byDir[d]
	}
	return out
}

// read reads the object at rel, relative to the output.
func (l *s3Lake) read(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := l.t.Read(context.Background(), l.t.Key(rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// debris names the multipart uploads left under the output and the run
// prefixes holding objects without _SUCCESS.
func (l *s3Lake) debris(t *testing.T) string { return l.debrisIn(t, l.runs(t), nil) }

// debrisIn names the multipart uploads left under the output, but those
// ignore accepts, and the runs holding objects without _SUCCESS.
func (l *s3Lake) debrisIn(t *testing.T, runs []publishedRun, ignore func(key string) bool) string {
	ups, err := l.t.ListUploads(context.Background(), l.t.Key(""))
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	if ignore != nil {
		ups = slices.DeleteFunc(ups, ignore)
	}
	if len(ups) > 0 {
		problems = append(problems, fmt.Sprintf("multipart uploads left: %v", ups))
	}
	for _, run := range runs {
		if !run.complete {
			problems = append(problems, "a run prefix without _SUCCESS holds objects: "+run.dir)
		}
	}
	return strings.Join(problems, "; ")
}

// listingReader lists **/*.parquet under the output over and over, as a
// reader of the lake would, and remembers the parts it saw of each run.
type listingReader struct {
	lk       *s3Lake
	mu       sync.Mutex
	seen     map[string][]string // run prefix -> the parts of one listing
	listings int
	errs     []string
}

// run lists until stop is closed (a listing under way is finished, not
// cut).
func (r *listingReader) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(2 * time.Millisecond):
		}
		keys, err := r.lk.t.ListKeys(context.Background(), r.lk.t.Key(""))
		if err != nil {
			r.mu.Lock()
			r.fail("list: %v", err)
			r.mu.Unlock()
			return
		}
		parts := map[string][]string{}
		for _, k := range keys {
			if strings.HasSuffix(k, ".parquet") {
				dir := path.Dir(strings.TrimPrefix(k, r.lk.t.Prefix()))
				parts[dir] = append(parts[dir], path.Base(k))
			}
		}
		r.mu.Lock()
		r.listings++
		for dir, names := range parts {
			if prev, ok := r.seen[dir]; ok && !slices.Equal(prev, names) {
				r.fail("run %s listed with parts %v, then %v", dir, prev, names)
			}
			r.seen[dir] = names
		}
		r.mu.Unlock()
	}
}

// fail records a failure; r.mu must be held.
func (r *listingReader) fail(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// check proves that every run the reader saw a part of is committed, and
// that what it saw is what the run's manifest lists: never part of a run.
func (r *listingReader) check(t *testing.T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) > 0 {
		t.Fatalf("the reader: %s", strings.Join(r.errs, "; "))
	}
	if r.listings < 10 || len(r.seen) == 0 {
		t.Fatalf("the reader listed %d times and saw %d runs: it did not watch the loop", r.listings, len(r.seen))
	}
	committed := map[string]publishedRun{}
	for _, run := range r.lk.runs(t) {
		committed[run.dir] = run
	}
	for dir, names := range r.seen {
		run, ok := committed[dir]
		if !ok || !run.complete {
			t.Fatalf("the reader saw parts %v of run %s, which is not committed", names, dir)
		}
		var want []string
		for _, f := range run.manifest.Files {
			want = append(want, f.Name)
		}
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Fatalf("the reader saw parts %v of run %s, whose manifest lists %v", names, dir, want)
		}
	}
	t.Logf("the reader listed the output %d times and saw %d runs, each whole", r.listings, len(r.seen))
}
