//go:build gcs

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/gcstest"
	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/sink/sinktest"
	"github.com/databrew/databrew-stage/verdict"
)

// TestPublishIntoGCS runs the binary built with -tags gcs (this test
// binary, as databrew-stage) with a gs://bucket/prefix output on
// fake-gcs-server, found through STORAGE_EMULATOR_HOST as a user would
// point it at an emulator. The first run publishes every item once, in
// one run prefix holding its part, _verdict.json, _manifest.json (which
// lists the part's rows, size and SHA-256) and _SUCCESS; a rerun of the
// unchanged site publishes nothing; after a price changes, the next run
// publishes that one item. Nothing else is left under the output (no
// probe, no part of a run without _SUCCESS) but the root's
// _verdict.json. The parts are read back with arrow-go.
func TestPublishIntoGCS(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	srv := gcstest.Start(t)
	srv.SetEnv(t) // the test's own client reads the lake
	site := catalogsite.New(catalogsite.Options{Items: 30, PerPage: 10})
	web := httptest.NewServer(site)
	defer web.Close()
	dir := t.TempDir()
	output := srv.URL("exports/books")
	cfgPath := filepath.Join(dir, "books.toml")
	cfg := fmt.Sprintf("name = \"books\"\nstart_urls = [%q]\nstorage = \"state\"\noutput = %q\n%s",
		catalogsite.StartURL(web.URL), output, catalogsite.ExtractConfig)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tg, err := objstore.Open(ctx, output)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	lk := &gcsLake{t: tg, tmp: t.TempDir()}

	run := func() verdict.RunReport {
		t.Helper()
		cmd := exec.Command(bin, "run", "--json", cfgPath)
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), srv.Env()...), "GORACE="+subprocessGORACE())
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
		var rep verdict.RunReport
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("verdict %q: %v\n%s", stdout.String(), err, stderr.String())
		}
		t.Log(rep.Summary())
		return rep
	}

	// The first run publishes the 30 items, each once, as new.
	first := run()
	if !first.Export.Published || first.Export.Rows != 30 || first.Items.New != 30 {
		t.Fatalf("first run: export %+v, items %+v; want 30 new rows published", first.Export, first.Items)
	}
	runs := lk.check(t)
	if len(runs) != 1 {
		t.Fatalf("%d run prefixes after the first run, want 1", len(runs))
	}
	if want := output + "/" + runs[0].dir; first.Export.Path != want || !strings.HasSuffix(want, "/run="+first.RunID) {
		t.Fatalf("export.path = %q; want %q, the run prefix of run %s", first.Export.Path, want, first.RunID)
	}
	rows := runs[0].rows
	if len(rows) != 30 {
		t.Fatalf("the first run's part holds %d rows, want 30", len(rows))
	}
	for _, it := range site.Items() {
		r, ok := rows[it.UPC]
		if want := fmt.Sprintf("new|%s|%v", it.Title, it.Price); !ok || r != want {
			t.Fatalf("item %s: the part holds %q, want %q", it.UPC, r, want)
		}
	}

	// A rerun of the unchanged site publishes nothing.
	second := run()
	if second.Export.Published || second.Export.Failed || second.Items.New+second.Items.Changed != 0 {
		t.Fatalf("rerun: export %+v, items %+v; want nothing published", second.Export, second.Items)
	}
	if again := lk.check(t); len(again) != 1 || again[0].dir != runs[0].dir {
		t.Fatalf("after the rerun the output holds runs %v, want only %s", again, runs[0].dir)
	}

	// One price changes: the next run publishes that item alone.
	site.SetPrice(7, 99.5)
	it, _ := site.Item(7)
	third := run()
	if !third.Export.Published || third.Export.Rows != 1 || third.Items.Changed != 1 {
		t.Fatalf("after a price change: export %+v, items %+v; want 1 changed row published", third.Export, third.Items)
	}
	runs = lk.check(t)
	i := slices.IndexFunc(runs, func(r gcsRun) bool { return strings.HasSuffix(r.dir, "/run="+third.RunID) })
	if len(runs) != 2 || i < 0 {
		t.Fatalf("after the change the output holds %d runs (run %s among them: %v), want 2", len(runs), third.RunID, i >= 0)
	}
	if want := fmt.Sprintf("changed|%s|%v", it.Title, it.Price); len(runs[i].rows) != 1 || runs[i].rows[it.UPC] != want {
		t.Fatalf("the change's part holds %v, want item %s %q", runs[i].rows, it.UPC, want)
	}
}

// gcsLake reads an output on the GCS server as a reader of the lake
// would: committed runs only, each through its _manifest.json.
type gcsLake struct {
	t   *objstore.Target
	tmp string // where parts are downloaded to be read
}

// gcsRun is one committed run prefix: its path relative to the output,
// and its part's rows as "CHANGE|TITLE|PRICE" by item key.
type gcsRun struct {
	dir  string
	rows map[string]string
}

// check lists the output and checks what a completed run must leave: a
// _verdict.json at the root, and run prefixes dt=DAY/run=ID each holding
// exactly its manifest's files, _verdict.json, _manifest.json and
// _SUCCESS, the files' rows, sizes and SHA-256 as the manifest says; no
// item key in two runs' parts with the same version. It returns the runs
// in key order, their rows read with arrow-go.
func (l *gcsLake) check(t *testing.T) []gcsRun {
	t.Helper()
	ctx := context.Background()
	keys, err := l.t.ListKeys(ctx, l.t.Key(""))
	if err != nil {
		t.Fatal(err)
	}
	byDir := map[string][]string{}
	var dirs []string
	rootVerdict := false
	for _, k := range keys {
		rel := strings.TrimPrefix(k, l.t.Prefix())
		if rel == sink.VerdictFile {
			rootVerdict = true
			continue
		}
		dir, name := path.Split(rel)
		dir = strings.TrimSuffix(dir, "/")
		if d, r := path.Split(dir); !strings.HasPrefix(path.Base(d), "dt=") || !strings.HasPrefix(r, "run=") {
			t.Fatalf("%s is outside every run prefix dt=DAY/run=ID", rel)
		}
		if byDir[dir] == nil {
			dirs = append(dirs, dir)
		}
		byDir[dir] = append(byDir[dir], name)
	}
	if !rootVerdict {
		t.Fatalf("no %s at the output's root; it holds %q", sink.VerdictFile, keys)
	}
	slices.Sort(dirs)
	seen := map[string]string{} // item key and version -> run prefix
	var runs []gcsRun
	for _, dir := range dirs {
		var m sink.Manifest
		if err := json.Unmarshal(l.read(t, dir+"/"+sink.ManifestFile), &m); err != nil {
			t.Fatalf("%s/%s: %v", dir, sink.ManifestFile, err)
		}
		want := []string{sink.ManifestFile, sink.SuccessFile, sink.VerdictFile}
		for _, f := range m.Files {
			want = append(want, f.Name)
		}
		got := byDir[dir]
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s holds %q; want %q (its manifest's files and the run files)", dir, got, want)
		}
		run := gcsRun{dir: dir, rows: map[string]string{}}
		for _, f := range m.Files {
			data := l.read(t, dir+"/"+f.Name)
			if sum := sha256.Sum256(data); int64(len(data)) != f.Bytes || hex.EncodeToString(sum[:]) != f.SHA256 {
				t.Fatalf("%s/%s: %d bytes, SHA-256 %x; the manifest says %d bytes, %s", dir, f.Name, len(data), sum, f.Bytes, f.SHA256)
			}
			local := filepath.Join(l.tmp, filepath.FromSlash(dir), f.Name)
			if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(local, data, 0o644); err != nil {
				t.Fatal(err)
			}
			rb := sinktest.ReadParquet(t, local)
			if int64(len(rb.Rows)) != f.Rows {
				t.Fatalf("%s/%s: %d rows, the manifest says %d", dir, f.Name, len(rb.Rows), f.Rows)
			}
			idx := map[string]int{}
			for i, c := range rb.Columns {
				idx[c.Name] = i
			}
			for _, row := range rb.Rows {
				key := row[idx["_key"]].(string)
				value := fmt.Sprintf("%s|%v|%v", row[idx["_change"]], row[idx["title"]], row[idx["price"]])
				if _, dup := run.rows[key]; dup {
					t.Fatalf("%s holds item %s twice", dir, key)
				}
				if prev, dup := seen[key+"|"+value]; dup {
					t.Fatalf("item %s %q published twice: in %s and %s", key, value, prev, dir)
				}
				seen[key+"|"+value] = dir
				run.rows[key] = value
			}
		}
		if int64(len(run.rows)) != m.Rows {
			t.Fatalf("%s: %d rows, the manifest says %d", dir, len(run.rows), m.Rows)
		}
		runs = append(runs, run)
	}
	return runs
}

// read reads the object at rel, relative to the output.
func (l *gcsLake) read(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := l.t.Read(context.Background(), l.t.Key(rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
