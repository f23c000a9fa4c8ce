package stage

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/shopsites"
	"github.com/databrew/databrew-stage/verdict"
)

// runShard runs shard i of n of the logical run runID and checks it
// started.
func runShard(t *testing.T, cfg config.Config, runID string, i, n int) verdict.RunReport {
	t.Helper()
	rep, err := Run(context.Background(), cfg, Options{Shard: &Shard{Index: i, Count: n, RunID: runID}})
	if err != nil {
		t.Fatalf("shard %d/%d of %s: %v (%s)", i, n, runID, err, rep.Summary())
	}
	t.Log(rep.Summary())
	return rep
}

// commitRun commits runID and returns its verdict and error.
func commitRun(t *testing.T, cfg config.Config, runID string, n int) (verdict.RunReport, error) {
	t.Helper()
	rep, err := Commit(context.Background(), cfg, runID, n, CommitOptions{})
	t.Logf("commit %s: %s %s published=%v rows=%d reason=%q err=%v", runID, rep.Outcome, rep.Stop, rep.Export.Published, rep.Export.Rows, rep.Export.Reason, err)
	return rep, err
}

// runDirs lists the run folders of a local output.
func runDirs(t *testing.T, output string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(output, "dt=*", "run=*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestShards_FourShardsPublishOneLogicalRunOnce runs 4 shards into a
// local folder: each stages its share of the items and nothing is
// visible; the commit publishes one run folder with every item once; a
// second commit does nothing; the next logical run on the unchanged
// site publishes nothing again (every shard learned of the commit).
func TestShards_FourShardsPublishOneLogicalRunOnce(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 60})
	cfg := f.config(nil, "\n[export]\nmax_file_rows = 7\n")
	staged := 0
	for i := range 4 {
		rep := runShard(t, cfg, "r1", i, 4)
		expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
		if !rep.Export.Staged || rep.Export.Published || rep.Shard != (Shard{Index: i, Count: 4}).Name() || rep.RunID != "r1" {
			t.Fatalf("shard %d: export %+v shard %q run %q, want staged, not published, of r1", i, rep.Export, rep.Shard, rep.RunID)
		}
		staged += rep.Export.Rows
		if got := runDirs(t, cfg.Output); len(got) != 0 {
			t.Fatalf("after shard %d, before the commit, run folders are visible: %v", i, got)
		}
		if _, err := os.Stat(filepath.Join(cfg.Storage, "shard-"+(Shard{Index: i, Count: 4}).Name(), "state.db")); err != nil {
			t.Fatalf("shard %d keeps no state of its own: %v", i, err)
		}
	}
	if staged != 60 {
		t.Fatalf("the shards staged %d rows, want 60", staged)
	}
	rep, err := commitRun(t, cfg, "r1", 4)
	if err != nil || !rep.Export.Published || rep.Export.Rows != 60 || rep.Outcome != verdict.OutcomeSuccess || len(rep.Shards) != 4 {
		t.Fatalf("commit: %v, %+v, %d shard verdicts", err, rep.Export, len(rep.Shards))
	}
	dirs := runDirs(t, cfg.Output)
	if len(dirs) != 1 || !strings.HasSuffix(dirs[0], "run=r1") {
		t.Fatalf("run folders %v, want one of r1", dirs)
	}
	expectEachItemOnce(t, f, cfg.Output)
	if _, err := commitRun(t, cfg, "r1", 4); !errors.Is(err, ErrCommitted) {
		t.Fatalf("a second commit: %v, want ErrCommitted", err)
	}
	// A shard run of the committed run: refused, it did nothing (see
	// TestShards_ARunIDCommittedAlreadyIsRefused).
	rep, err = Run(context.Background(), cfg, Options{Shard: &Shard{Index: 2, Count: 4, RunID: "r1"}})
	if !errors.Is(err, ErrCommitted) || rep.Outcome != verdict.OutcomeFailed || rep.Export.Staged {
		t.Fatalf("a shard of a committed run: %v, %s", err, rep.Outcome)
	}
	for i := range 4 {
		rep := runShard(t, cfg, "r2", i, 4)
		if rep.Items.New != 0 || rep.Export.Staged {
			t.Fatalf("shard %d of r2 on the unchanged site: %d new, staged %v", i, rep.Items.New, rep.Export.Staged)
		}
	}
	if rep, err := commitRun(t, cfg, "r2", 4); err != nil || rep.Export.Published || rep.Export.Reason != reasonNothing {
		t.Fatalf("commit of r2: %v, %+v", err, rep.Export)
	}
	if _, err := commitRun(t, cfg, "r2", 4); !errors.Is(err, ErrCommitted) {
		t.Fatalf("a second commit of r2, which had nothing to publish: %v, want ErrCommitted", err)
	}
	expectEachItemOnce(t, f, cfg.Output)
}

// TestShards_ACommitWithoutEveryShardPublishesNothing commits a run one
// shard of which has not run, then one whose shard failed: nothing is
// published and the verdict says why; once the shard ran again, the
// commit publishes every item once.
func TestShards_ACommitWithoutEveryShardPublishesNothing(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 40})
	cfg := f.config(nil, "")
	for _, i := range []int{0, 1, 3} {
		runShard(t, cfg, "r1", i, 4)
	}
	rep, err := commitRun(t, cfg, "r1", 4)
	if err != nil || rep.Outcome != verdict.OutcomeFailed || rep.Export.Published || !strings.Contains(rep.Detail, "shard 2-of-4") {
		t.Fatalf("commit without shard 2: %v, %s %q %+v", err, rep.Outcome, rep.Detail, rep.Export)
	}
	if got := runDirs(t, cfg.Output); len(got) != 0 {
		t.Fatalf("a failed commit made run folders visible: %v", got)
	}
	var root verdict.RunReport
	b, err := os.ReadFile(filepath.Join(cfg.Output, "_verdict.json"))
	if err == nil {
		err = json.Unmarshal(b, &root)
	}
	if err != nil || root.Outcome != verdict.OutcomeFailed || root.RunID != "r1" || len(root.Shards) != 4 {
		t.Fatalf("the output's _verdict.json: %v %+v", err, root)
	}
	// Shard 2 fails: its site is down.
	down := f.config(map[string]string{"retries": "0", "max_consecutive_failures": "3"}, "", "http://127.0.0.1:1/")
	down.AllowedDomains = append(down.AllowedDomains, "127.0.0.1")
	rep2, _ := Run(context.Background(), down, Options{Shard: &Shard{Index: 2, Count: 4, RunID: "r1"}})
	if rep2.Outcome != verdict.OutcomeFailed {
		t.Fatalf("shard 2 against a closed port: %s", rep2.Summary())
	}
	if rep, err := commitRun(t, cfg, "r1", 4); err != nil || rep.Outcome != verdict.OutcomeFailed || rep.Export.Published {
		t.Fatalf("commit with shard 2 failed: %v, %s %+v", err, rep.Outcome, rep.Export)
	}
	runShard(t, cfg, "r1", 2, 4)
	if rep, err := commitRun(t, cfg, "r1", 4); err != nil || !rep.Export.Published || rep.Export.Rows != 40 {
		t.Fatalf("commit after shard 2 ran again: %v, %+v", err, rep.Export)
	}
	expectEachItemOnce(t, f, cfg.Output)
}

// TestShards_ARetriedShardReplacesWhatItStaged retries a shard, as an
// orchestrator does after a crash or a timeout: what its first attempt
// staged is replaced, not added to.
func TestShards_ARetriedShardReplacesWhatItStaged(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 40})
	cfg := f.config(nil, "\n[export]\nmax_file_rows = 3\n")
	for i := range 3 {
		runShard(t, cfg, "r1", i, 3)
	}
	first := runShard(t, cfg, "r1", 1, 3)
	if !first.Export.Staged || first.Export.Rows == 0 {
		t.Fatalf("the retried shard staged nothing: %+v", first.Export)
	}
	if rep, err := commitRun(t, cfg, "r1", 3); err != nil || rep.Export.Rows != 40 {
		t.Fatalf("commit: %v, %+v", err, rep.Export)
	}
	expectEachItemOnce(t, f, cfg.Output)
}

// TestShards_AnUncommittedRunIsGivenUpForTheNext runs every shard of r1
// but never commits it: the shards of r2 give r1 up and take its items;
// a late commit of r1 fails and publishes nothing, and r2's commit
// publishes every item once.
func TestShards_AnUncommittedRunIsGivenUpForTheNext(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	cfg := f.config(nil, "")
	for i := range 2 {
		runShard(t, cfg, "r1", i, 2)
	}
	for i := range 2 {
		rep := runShard(t, cfg, "r2", i, 2)
		if !rep.Export.Staged {
			t.Fatalf("shard %d of r2 staged nothing: %+v", i, rep.Export)
		}
	}
	if rep, err := commitRun(t, cfg, "r1", 2); !errors.Is(err, ErrAbandoned) || rep.Export.Published {
		t.Fatalf("late commit of r1: %v, %+v", err, rep.Export)
	}
	if rep, err := commitRun(t, cfg, "r2", 2); err != nil || rep.Export.Rows != 30 {
		t.Fatalf("commit of r2: %v, %+v", err, rep.Export)
	}
	expectEachItemOnce(t, f, cfg.Output)
	if _, err := Run(context.Background(), cfg, Options{Shard: &Shard{Index: 0, Count: 2, RunID: "r1"}}); !errors.Is(err, ErrAbandoned) {
		t.Fatalf("a shard of the given-up run: %v, want ErrAbandoned", err)
	}
}

// TestShards_AnotherShardCountIsRefused: states of 4 shards refuse a
// shard of 2, and a run of the whole config, with the way out; a logical
// run claimed with 4 shards refuses a commit of 2.
func TestShards_AnotherShardCountIsRefused(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 10})
	cfg := f.config(nil, "")
	runShard(t, cfg, "r1", 0, 4)
	_, err := Run(context.Background(), cfg, Options{Shard: &Shard{Index: 0, Count: 2, RunID: "r2"}})
	if !errors.Is(err, ErrShardCount) || !strings.Contains(err.Error(), "--reset-state") {
		t.Fatalf("a shard of 2 beside states of 4: %v", err)
	}
	if _, err := Run(context.Background(), cfg, Options{}); !errors.Is(err, ErrShardCount) {
		t.Fatalf("a whole run beside states of 4: %v", err)
	}
	if _, err := Commit(context.Background(), cfg, "r1", 2, CommitOptions{}); !errors.Is(err, ErrShardCount) {
		t.Fatalf("a commit of 2 shards of a run of 4: %v", err)
	}
	whole := f.config(nil, "")
	whole.Storage = filepath.Join(f.dir, "whole")
	f.run(whole, Options{})
	if _, err := Run(context.Background(), whole, Options{Shard: &Shard{Index: 0, Count: 2, RunID: "r3"}}); !errors.Is(err, ErrShardCount) {
		t.Fatalf("a shard beside the whole config's state: %v", err)
	}
}

// TestShards_ObjectStorageStagesUploadsTheCommitCompletes runs 4 shards
// into versitygw: before the commit the lake holds no object under dt=
// (the parts are multipart uploads left open); after it, one committed
// run holds every item once and no upload is left.
func TestShards_ObjectStorageStagesUploadsTheCommitCompletes(t *testing.T) {
	l := newLake(t)
	f := newFixture(t, catalogsite.Options{Items: 50})
	cfg := l.configIn(f, "")
	for i := range 4 {
		runShard(t, cfg, "r1", i, 4)
		for _, k := range l.keys(t) {
			if strings.HasPrefix(k, "dt=") {
				t.Fatalf("after shard %d, before the commit, %s is visible", i, k)
			}
		}
	}
	if n := len(l.uploads(t)); n != 4 {
		t.Fatalf("%d uploads open before the commit, want one per shard", n)
	}
	if rep, err := commitRun(t, cfg, "r1", 4); err != nil || rep.Export.Rows != 50 || !strings.HasPrefix(rep.Export.Path, "s3://") ||
		strings.HasSuffix(rep.Export.Path, "/") {
		t.Fatalf("commit: %v, %+v", err, rep.Export)
	}
	all, committed := l.runPrefixes(t)
	if len(committed) != 1 {
		t.Fatalf("run prefixes %v, committed %v", all, committed)
	}
	if us := l.uploads(t); len(us) > 0 {
		t.Fatalf("uploads left: %v", us)
	}
	expectEachItemOnce(t, f, l.download(t))
	if _, err := commitRun(t, cfg, "r1", 4); !errors.Is(err, ErrCommitted) {
		t.Fatalf("a second commit: %v, want ErrCommitted", err)
	}
}

// TestShops_InShards crawls each fixture shop built like a common real
// catalog site as 3 shards and commits the logical run: the export must
// hold exactly the shop's products, each once — item pages split by URL
// (sitemaps, variants), items a JSON listing holds split by key.
func TestShops_InShards(t *testing.T) {
	for _, tt := range shopCases {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.Token != "" {
				t.Setenv(shopsites.TokenEnv, tt.opts.Token)
			}
			shop, err := shopsites.New(tt.kind, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(shop)
			t.Cleanup(srv.Close)
			text := shop.Config(srv.URL)
			cfg, err := config.Parse(filepath.Join(t.TempDir(), "shop.toml"), []byte(text))
			if err != nil {
				t.Fatalf("config: %v\n%s", err, text)
			}
			stored := 0
			for i := range 3 {
				rep := runShard(t, *cfg, "r1", i, 3)
				expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
				stored += rep.Items.New
			}
			rep, err := commitRun(t, *cfg, "r1", 3)
			if err != nil || rep.Outcome != verdict.OutcomeSuccess || rep.CoverageGaps != 0 {
				t.Fatalf("commit: %v, %s, gaps %+v", err, rep.Summary(), rep.Gaps)
			}
			if truth := len(shop.Truth(srv.URL)); stored != truth || rep.Export.Rows != truth {
				t.Fatalf("the shards stored %d new items and the commit published %d rows; the shop has %d products", stored, rep.Export.Rows, truth)
			}
			expectTruth(t, shop, srv.URL, exportedRows(t, cfg.Output))
		})
	}
}

// TestShards_WaitNTimesTheDelay: a shard of 4 spaces its requests to the
// site 4 times the configured delay apart, so 4 shards together keep
// the configured rate.
func TestShards_WaitNTimesTheDelay(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 40})
	var mu sync.Mutex
	var starts []time.Time
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path != "/robots.txt" {
			mu.Lock()
			starts = append(starts, time.Now())
			mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
	const delay = 10 * time.Millisecond
	cfg := f.config(map[string]string{"delay": `"10ms"`, "concurrency": "2"}, "")
	runShard(t, cfg, "r1", 1, 4)
	mu.Lock()
	defer mu.Unlock()
	if len(starts) < 4 {
		t.Fatalf("%d requests, want a few", len(starts))
	}
	// The site sees a request late now and then (the scheduler, a loaded
	// machine), so one gap may look short while the next looks long; the
	// span of all of them cannot be shorter than the pacer allows, less
	// the lateness of the first.
	span := starts[len(starts)-1].Sub(starts[0])
	if want := time.Duration(len(starts)-1) * 4 * delay; span < want-2*delay {
		t.Fatalf("%d requests started within %v, want at least %v (4 x %v apart)", len(starts), span, want, delay)
	}
}

// TestShards_UnderARevisitPolicy: shards keep their item pages' schedules
// like a whole-config run: the next logical run on the unchanged site
// skips every item page that is not due and publishes nothing.
func TestShards_UnderARevisitPolicy(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 40})
	cfg := f.config(nil, "\n[revisit]\ncard = \"article.product_pod\"\nmin_after = \"1d\"\nmax_after = \"14d\"\n")
	for i := range 2 {
		runShard(t, cfg, "r1", i, 2)
	}
	if rep, err := commitRun(t, cfg, "r1", 2); err != nil || rep.Export.Rows != 40 {
		t.Fatalf("commit of r1: %v, %+v", err, rep.Export)
	}
	skipped := 0
	for i := range 2 {
		rep := runShard(t, cfg, "r2", i, 2)
		if rep.Items.New != 0 || rep.Items.Changed != 0 || rep.Export.Staged {
			t.Fatalf("shard %d of r2: %+v, staged %v", i, rep.Items, rep.Export.Staged)
		}
		skipped += rep.Items.Skipped
	}
	if skipped != 40 {
		t.Fatalf("the shards of r2 skipped %d items, want all 40", skipped)
	}
	expectEachItemOnce(t, f, cfg.Output)
}

// TestShards_AShardWhoseExportFailedHoldsTheCommit: a shard whose export
// failed with an error (here cut after its parts were uploaded, as an
// unwritable state would) is partial, not failed, by the outcome rules;
// the commit still publishes nothing and fails downstream. Once the
// shard ran again, the commit publishes every item once.
func TestShards_AShardWhoseExportFailedHoldsTheCommit(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	cfg := f.config(nil, "")
	runShard(t, cfg, "r1", 0, 2)
	rep, err := Run(context.Background(), cfg, Options{Shard: &Shard{Index: 1, Count: 2, RunID: "r1"},
		AfterPublishStep: func(s PublishStep) error {
			if s == StepStaged {
				return errors.New("the disk went away")
			}
			return nil
		}})
	if err == nil || !rep.Export.Failed || rep.Export.Staged {
		t.Fatalf("shard 1 with a failing export: %v, %+v", err, rep.Export)
	}
	c, err := commitRun(t, cfg, "r1", 2)
	if err != nil || c.Export.Published || !c.Export.Failed || !c.FailsDownstream() {
		t.Fatalf("commit beside a failed export: %v, %+v", err, c.Export)
	}
	if got := runDirs(t, cfg.Output); len(got) != 0 {
		t.Fatalf("run folders visible: %v", got)
	}
	runShard(t, cfg, "r1", 1, 2)
	if c, err := commitRun(t, cfg, "r1", 2); err != nil || c.Export.Rows != 30 {
		t.Fatalf("commit after the shard ran again: %v, %+v", err, c.Export)
	}
	expectEachItemOnce(t, f, cfg.Output)
}

// TestShards_AShardWhoseManifestCannotBeWrittenFails: the commit cannot
// see an attempt without its manifest, so a shard that could not write
// it fails (exit 1), and the orchestrator runs it again.
func TestShards_AShardWhoseManifestCannotBeWrittenFails(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	cfg := f.config(nil, "")
	manifest := filepath.Join(cfg.Output, ShardsFolder, "run=r1", "shard-0-of-2.json")
	rep, err := Run(context.Background(), cfg, Options{Shard: &Shard{Index: 0, Count: 2, RunID: "r1"},
		AfterPublishStep: func(s PublishStep) error {
			if s == StepStaged { // a folder where the manifest goes: its write fails
				return writeFile(filepath.Join(manifest, "x"), "")
			}
			return nil
		}})
	if err == nil || !rep.Export.Failed || !rep.FailsDownstream() || !strings.Contains(rep.Export.Reason, "manifest could not be written") {
		t.Fatalf("a shard without its manifest: %v, %+v", err, rep.Export)
	}
	last, lerr := ReadLastRun(ShardStorage(cfg.Storage, Shard{Index: 0, Count: 2}))
	if lerr != nil || !last.Export.Failed {
		t.Fatalf(".last_run.json: %v, %+v", lerr, last.Export)
	}
}
