package stage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// onLog is a log handler that calls fn once, at the first record whose
// message starts with prefix: a test's way into a run at that moment.
type onLog struct {
	prefix string
	once   *sync.Once
	fn     func()
}

func (h onLog) Enabled(context.Context, slog.Level) bool { return true }

func (h onLog) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, h.prefix) {
		h.once.Do(h.fn)
	}
	return nil
}

func (h onLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onLog) WithGroup(string) slog.Handler      { return h }

// TestShards_ARetryRacingTheCommit: shard 1 is retried while the commit
// of its run decides on its first attempt, whose manifest it read just
// before the retry withdrew it. The commit publishes the first attempt;
// the retry's own staging goes when the next run settles it, and what
// only the retry found (the site changed in between) is published by
// that next run: nothing lost, nothing twice.
func TestShards_ARetryRacingTheCommit(t *testing.T) {
	for _, store := range []string{"folder", "s3"} {
		t.Run(store, func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 120})
			cfg := f.config(nil, "")
			var download func() string
			if store == "s3" {
				l := newLake(t)
				cfg = l.configIn(f, "")
				download = func() string { return l.download(t) }
			} else {
				download = func() string { return cfg.Output }
			}
			for i := range 2 {
				runShard(t, cfg, "r1", i, 2)
			}
			f.site.Step(7)
			var committed verdict.RunReport
			log := slog.New(onLog{prefix: "an earlier attempt of this shard at this run stays staged", once: &sync.Once{}, fn: func() {
				var err error
				if committed, err = commitRun(t, cfg, "r1", 2); err != nil {
					t.Errorf("commit during the retry: %v", err)
				}
			}})
			rep, err := Run(context.Background(), cfg, Options{Logger: log, Shard: &Shard{Index: 1, Count: 2, RunID: "r1"}})
			if !committed.Export.Published {
				t.Fatalf("the commit did not run inside the retry, or published nothing: %+v", committed.Export)
			}
			if err != nil || !rep.Export.Staged {
				t.Fatalf("the retry: %v, %+v", err, rep.Export)
			}
			for i := range 2 {
				runShard(t, cfg, "r2", i, 2)
			}
			if _, err := commitRun(t, cfg, "r2", 2); err != nil {
				t.Fatal(err)
			}
			out := download()
			expectLatestPrices(t, f, out)
		})
	}
}

// expectLatestPrices checks that the exports hold, for every item on the
// site, its current price as the last version published, and no version
// published twice in a row.
func expectLatestPrices(t *testing.T, f *fixture, output string) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(output, "dt=*", "run=*"))
	type row struct{ change, price string }
	byKey := map[string][]row{}
	for _, dir := range dirs {
		rows := readRun(t, dir)
		for _, r := range rows {
			byKey[r.key] = append(byKey[r.key], row{r.change, fmt.Sprint(r.price)})
		}
	}
	for _, it := range f.site.Items() {
		rows := byKey[it.UPC]
		if it.Removed {
			continue
		}
		if len(rows) == 0 {
			t.Fatalf("item %s was never published", it.UPC)
		}
		seen := map[string]bool{}
		for _, r := range rows {
			if seen[r.change+r.price] && r.change != "removed" {
				t.Fatalf("item %s: %s at %s published twice: %v", it.UPC, r.change, r.price, rows)
			}
			seen[r.change+r.price] = true
		}
		if !seen["new"+fmt.Sprint(it.Price)] && !seen["changed"+fmt.Sprint(it.Price)] {
			t.Fatalf("item %s costs %v on the site; the exports hold %v", it.UPC, it.Price, rows)
		}
	}
}

// TestShards_ARetryThatFailsLeavesTheEarlierAttemptStaged: a retry whose
// export fails right after it began stays out of the run; the commit
// fails on it; the next attempt stages anew and the commit publishes it,
// every item once, and the next run settles the three attempts.
func TestShards_ARetryThatFailsLeavesTheEarlierAttemptStaged(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 50})
	cfg := f.config(nil, "\n[export]\nmax_file_rows = 9\n")
	for i := range 2 {
		runShard(t, cfg, "r1", i, 2)
	}
	_, err := Run(context.Background(), cfg, Options{Shard: &Shard{Index: 1, Count: 2, RunID: "r1"},
		AfterPublishStep: func(s PublishStep) error {
			if s == StepIntent {
				return errors.New("killed")
			}
			return nil
		}})
	if err == nil {
		t.Fatal("the failing retry: no error")
	}
	if c, err := commitRun(t, cfg, "r1", 2); err != nil || c.Export.Published {
		t.Fatalf("commit after a failed retry: %v, %+v", err, c.Export)
	}
	runShard(t, cfg, "r1", 1, 2)
	if c, err := commitRun(t, cfg, "r1", 2); err != nil || c.Export.Rows != 50 {
		t.Fatalf("commit: %v, %+v", err, c.Export)
	}
	for i := range 2 {
		if rep := runShard(t, cfg, "r2", i, 2); rep.Export.Staged {
			t.Fatalf("shard %d of r2 on the unchanged site staged %+v", i, rep.Export)
		}
	}
	expectEachItemOnce(t, f, cfg.Output)
	if left, _ := filepath.Glob(filepath.Join(cfg.Output, ShardsFolder, "run=r1", "attempts", "*")); len(left) > 0 {
		t.Fatalf("attempts left staged after the run was settled: %v", left)
	}
}

// TestShards_ADecidedCommitIsFinishedByTheNextRun: a commit killed right
// after it decided is finished by the next run's shards, before they go
// on: the run gets its _SUCCESS and every item is published once.
func TestShards_ADecidedCommitIsFinishedByTheNextRun(t *testing.T) {
	l := newLake(t)
	f := newFixture(t, catalogsite.Options{Items: 40})
	cfg := l.configIn(f, "")
	for i := range 2 {
		runShard(t, cfg, "r1", i, 2)
	}
	_, err := Commit(context.Background(), cfg, "r1", 2, CommitOptions{AfterCommitStep: func(s PublishStep) error {
		if s == StepDecided {
			return errors.New("killed")
		}
		return nil
	}})
	if err == nil {
		t.Fatal("the killed commit: no error")
	}
	for i := range 2 {
		runShard(t, cfg, "r2", i, 2)
	}
	if _, committed := l.runPrefixes(t); len(committed) != 1 {
		t.Fatalf("committed runs %v, want r1 finished by the shards of r2", committed)
	}
	if _, err := commitRun(t, cfg, "r2", 2); err != nil {
		t.Fatal(err)
	}
	expectEachItemOnceInLake(t, f, l)
}

// TestShards_TheOutputSpeltAnotherWay: the same S3 output with a
// trailing slash and its query reordered is the same output: the next
// run does not export the last one again.
func TestShards_TheOutputSpeltAnotherWay(t *testing.T) {
	l := newLake(t)
	f := newFixture(t, catalogsite.Options{Items: 40})
	cfg := l.configIn(f, "")
	for i := range 2 {
		runShard(t, cfg, "r1", i, 2)
	}
	if _, err := commitRun(t, cfg, "r1", 2); err != nil {
		t.Fatal(err)
	}
	base, query, _ := strings.Cut(cfg.Output, "?")
	params := strings.Split(query, "&")
	params[0], params[len(params)-1] = params[len(params)-1], params[0]
	cfg.Output = base + "/?" + strings.Join(params, "&")
	for i := range 2 {
		if rep := runShard(t, cfg, "r2", i, 2); rep.Export.Staged {
			t.Fatalf("shard %d of r2 staged %+v: the last run exported again", i, rep.Export)
		}
	}
	expectEachItemOnceInLake(t, f, l)
}

// TestShards_AnOutputMovedWhileARunWasStaged: the config's output moves
// while a run is staged and not committed: the next run gives the old
// run up where it was staged, and publishes its items in the new output.
func TestShards_AnOutputMovedWhileARunWasStaged(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 40})
	cfg := f.config(nil, "")
	old := cfg.Output
	for i := range 2 {
		runShard(t, cfg, "r1", i, 2)
	}
	cfg.Output = filepath.Join(f.dir, "moved")
	for i := range 2 {
		runShard(t, cfg, "r2", i, 2)
	}
	if _, err := commitRun(t, cfg, "r2", 2); err != nil {
		t.Fatal(err)
	}
	expectEachItemOnce(t, f, cfg.Output)
	was := cfg
	was.Output = old
	if _, err := commitRun(t, was, "r1", 2); !errors.Is(err, ErrAbandoned) {
		t.Fatalf("a late commit of r1 in the old output: %v, want ErrAbandoned", err)
	}
	if keys := publishedKeys(t, old); len(keys) != 0 {
		t.Fatalf("the old output published %d items", len(keys))
	}
}

// TestShards_CommitsAtOnceAndTheNextRunSettling: four commits of one run
// at once, beside the next run's shards settling it: a commit publishes
// the run, finds it committed, or finds a shard of the next run gave it
// up first (then its items go into the next run); the shards finish or
// follow what was decided; every item is published once.
func TestShards_CommitsAtOnceAndTheNextRunSettling(t *testing.T) {
	for _, store := range []string{"folder", "s3"} {
		t.Run(store, func(t *testing.T) {
			for trial := range 3 {
				cfg, check := stagedRun(t, store, 60)
				var wg sync.WaitGroup
				for c := range 4 {
					wg.Go(func() {
						r, err := Commit(context.Background(), cfg, "r1", 3, CommitOptions{})
						if errors.Is(err, ErrAbandoned) {
							return
						}
						if (err != nil && !errors.Is(err, ErrCommitted)) || r.FailsDownstream() {
							t.Errorf("trial %d, commit %d: %v, %s %+v", trial, c, err, r.Outcome, r.Export)
						}
					})
				}
				for i := range 3 {
					wg.Go(func() {
						if rep, err := Run(context.Background(), cfg, Options{Shard: &Shard{Index: i, Count: 3, RunID: "r2"}}); err != nil {
							t.Errorf("trial %d, shard %d of r2: %v (%s)", trial, i, err, rep.Summary())
						}
					})
				}
				wg.Wait()
				if _, err := Commit(context.Background(), cfg, "r2", 3, CommitOptions{}); err != nil && !errors.Is(err, ErrCommitted) {
					t.Fatalf("commit of r2: %v", err)
				}
				check()
			}
		})
	}
}

// TestShards_CommitsAtOnce: four commits of one run at once each publish
// it or find it published (none fails), and it is published once.
func TestShards_CommitsAtOnce(t *testing.T) {
	for _, store := range []string{"folder", "s3"} {
		t.Run(store, func(t *testing.T) {
			for trial := range 4 {
				cfg, check := stagedRun(t, store, 40)
				var wg sync.WaitGroup
				for c := range 4 {
					wg.Go(func() {
						r, err := Commit(context.Background(), cfg, "r1", 3, CommitOptions{})
						if (err != nil && !errors.Is(err, ErrCommitted)) || r.FailsDownstream() || (err == nil && !r.Export.Published) {
							t.Errorf("trial %d, commit %d: %v, %s %+v", trial, c, err, r.Outcome, r.Export)
						}
					})
				}
				wg.Wait()
				check()
			}
		})
	}
}

// stagedRun stages run r1 of 3 shards of a catalog of n items into a
// local folder or S3 (store), and returns its config and a check that
// every item is published once there.
func stagedRun(t *testing.T, store string, n int) (config.Config, func()) {
	t.Helper()
	f := newFixture(t, catalogsite.Options{Items: n})
	cfg := f.config(nil, "\n[export]\nmax_file_rows = 7\n")
	check := func() { expectEachItemOnce(t, f, cfg.Output) }
	if store == "s3" {
		l := newLake(t)
		cfg = l.configIn(f, "\n[export]\nmax_file_rows = 7\n")
		check = func() { expectEachItemOnceInLake(t, f, l) }
	}
	for i := range 3 {
		runShard(t, cfg, "r1", i, 3)
	}
	return cfg, check
}
