package stage

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// runFolders lists the output's run folders.
func runFolders(output string) []string {
	dirs, _ := filepath.Glob(filepath.Join(output, "dt=*", "run=*"))
	return dirs
}

// wantRefused checks a run refused for its state file: the error, a failed
// verdict with stop error whose detail names the file and says the way
// out, and nothing written to the storage path or published.
func wantRefused(t *testing.T, rep verdict.RunReport, err, sentinel error, cfg configPaths, lastRun []byte, folders []string, says string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Errorf("error = %v, want %v", err, sentinel)
	}
	if rep.Started || rep.Stop != verdict.StopError || rep.Outcome != verdict.OutcomeFailed ||
		!strings.Contains(rep.Detail, cfg.stateFile) || !strings.Contains(rep.Detail, says) || !strings.Contains(rep.Detail, "--reset-state") {
		t.Errorf("verdict = %s (%s) started %v, detail %q", rep.Outcome, rep.Stop, rep.Started, rep.Detail)
	}
	if now, _ := os.ReadFile(cfg.lastRun); !bytes.Equal(now, lastRun) {
		t.Error(".last_run.json was written")
	}
	if now := runFolders(cfg.output); !slices.Equal(now, folders) {
		t.Errorf("run folders %v, want %v", now, folders)
	}
}

type configPaths struct{ stateFile, lastRun, output string }

// A missing or empty state file next to published runs does not start
// the run over silently: the run fails, naming the file; with ResetState
// it starts over and exports every item again as new.
func TestALostStateNextToPublishedRunsIsAnError(t *testing.T) {
	for _, lose := range []string{"missing", "empty"} {
		t.Run(lose, func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 20})
			cfg := f.config(nil, "")
			expect(t, f.run(cfg, Options{}), verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
			p := configPaths{filepath.Join(cfg.Storage, state.FileName), filepath.Join(cfg.Storage, LastRunFile), cfg.Output}
			lastRun, _ := os.ReadFile(p.lastRun)
			folders := runFolders(cfg.Output)
			var err error
			if lose == "missing" {
				err = os.Remove(p.stateFile)
			} else {
				err = os.Truncate(p.stateFile, 0)
			}
			if err != nil {
				t.Fatal(err)
			}

			rep, err := Run(t.Context(), cfg, Options{})
			wantRefused(t, rep, err, ErrNoState, p, lastRun, folders, lose)

			var logs bytes.Buffer
			rep = f.run(cfg, Options{ResetState: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
			if rep.Items.New != 20 || !rep.Export.Published || rep.Export.Rows != 20 {
				t.Errorf("the run that started over: items %+v, export %+v", rep.Items, rep.Export)
			}
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "every item is exported again as new") {
				t.Errorf("no warning that the run starts over:\n%s", logs.String())
			}
			aside, _ := filepath.Glob(p.stateFile + ".broken-*")
			if (lose == "empty") != (len(aside) == 1) {
				t.Errorf("files kept aside: %v", aside)
			}
		})
	}
}

// An empty state file with nothing published yet is what a crash while it
// was created leaves: the run starts a new state, and says so.
func TestAnEmptyStateFileWithNothingPublishedIsNew(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 10})
	cfg := f.config(nil, "")
	if err := writeFile(filepath.Join(cfg.Storage, state.FileName), ""); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	rep := f.run(cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 10 || !strings.Contains(logs.String(), "the state file was empty") {
		t.Errorf("items %+v; logs:\n%s", rep.Items, logs.String())
	}
}

// A state file with garbage in its item pages fails the run that reads
// them, and every later run at once, with stop error naming the file; a
// run with ResetState keeps the damaged file aside and starts over.
func TestADamagedStateFileFailsTheRun(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	cfg := f.config(nil, "")
	f.run(cfg, Options{})
	path := filepath.Join(cfg.Storage, state.FileName)
	// A crawl of 30 items keeps their records in the records' recent part.
	garbleBucketRoot(t, path, "items_recent")
	folders := runFolders(cfg.Output)

	rep, err := Run(t.Context(), cfg, Options{})
	if !errors.Is(err, ErrCorrupt) || rep.Stop != verdict.StopError || rep.Outcome != verdict.OutcomeFailed ||
		!strings.Contains(rep.Detail, path) || rep.Export.Published {
		t.Fatalf("the run reading the damaged pages: %v; verdict %s (%s) %q, export %+v", err, rep.Outcome, rep.Stop, rep.Detail, rep.Export)
	}
	lastRun, _ := os.ReadFile(filepath.Join(cfg.Storage, LastRunFile))
	rep, err = Run(t.Context(), cfg, Options{})
	p := configPaths{path, filepath.Join(cfg.Storage, LastRunFile), cfg.Output}
	wantRefused(t, rep, err, ErrCorrupt, p, lastRun, folders, "state repair")

	rep = f.run(cfg, Options{ResetState: true})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 30 {
		t.Errorf("the run that started over: items %+v", rep.Items)
	}
	if aside, _ := filepath.Glob(path + ".broken-*"); len(aside) != 1 {
		t.Errorf("files kept aside: %v", aside)
	}
}

// garbleBucketRoot writes garbage over the root page of a bucket that has
// one.
func garbleBucketRoot(t *testing.T, path, bucket string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var root, pageSize int64
	_ = db.View(func(tx *bolt.Tx) error {
		root, pageSize = int64(tx.Bucket([]byte(bucket)).Root()), int64(db.Info().PageSize)
		return nil
	})
	_ = db.Close()
	if root == 0 {
		t.Fatalf("bucket %s is inline", bucket)
	}
	junk := bytes.Repeat([]byte{0xA5, 0x17, 0x3C}, int(pageSize)/3+1)[:pageSize]
	fh, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteAt(junk, root*pageSize); err != nil {
		t.Fatal(err)
	}
}
