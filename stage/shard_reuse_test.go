package stage

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// decidedAt reads when a logical run in a local folder was decided.
func decidedAt(t *testing.T, cfg config.Config, runID string) time.Time {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cfg.Output, ShardsFolder, "run="+runID, "_decision.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Decision string    `json:"decision"`
		At       time.Time `json:"at"`
	}
	if err := json.Unmarshal(b, &d); err != nil || d.Decision != "commit" {
		t.Fatalf("decision of %s: %+v, %v", runID, d, err)
	}
	return d.At
}

// TestShards_ARunIDCommittedAlreadyIsRefused: a run id names one logical
// run. A shard run given the id of a run committed already — a fixed run
// id reused the next night — does nothing and fails (exit 1), naming the
// run, when it was committed and how to crawl again, instead of passing
// as a success that crawled nothing; a commit of it again is a success
// that says it changed nothing. A new run id crawls and publishes.
func TestShards_ARunIDCommittedAlreadyIsRefused(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30})
	cfg := f.config(nil, "")
	for i := range 2 {
		runShard(t, cfg, "nightly", i, 2)
	}
	first, err := commitRun(t, cfg, "nightly", 2)
	if err != nil || !first.Export.Published {
		t.Fatalf("commit: %v, %+v", err, first.Export)
	}
	at := decidedAt(t, cfg, "nightly").UTC().Format(time.RFC3339)

	// The next night, the same run id: the site changed, and each shard
	// is refused without touching its state or the lake.
	f.site.SetPrice(7, 12.5)
	for i := range 2 {
		for _, opts := range []Options{
			{Shard: &Shard{Index: i, Count: 2, RunID: "nightly"}},
			{Shard: &Shard{Index: i, Count: 2, RunID: "nightly"}, PartitionDate: time.Now().AddDate(0, 0, 1)},
		} {
			rep, err := Run(context.Background(), cfg, opts)
			if !errors.Is(err, ErrCommitted) {
				t.Fatalf("shard %d of the committed run: %v (%s)", i, err, rep.Summary())
			}
			t.Log(rep.Summary())
			if rep.Outcome != verdict.OutcomeFailed || !rep.FailsDownstream() || rep.Started || rep.Export.Staged || rep.Export.Published {
				t.Fatalf("shard %d of the committed run: %s (%s), export %+v; want failed, nothing staged", i, rep.Outcome, rep.Stop, rep.Export)
			}
			for _, want := range []string{"run nightly was committed already, at " + at, "did nothing", "a new run id", "{{ ts_nodash }}"} {
				if !strings.Contains(rep.Detail, want) || !strings.Contains(err.Error(), want) {
					t.Errorf("shard %d: detail %q, error %q; want both to say %q", i, rep.Detail, err, want)
				}
			}
			if !strings.Contains(rep.Summary(), "run nightly was committed already") {
				t.Errorf("the summary line does not say it: %s", rep.Summary())
			}
		}
	}

	// The commit, run again (a retried commit task): a success that says
	// it changed nothing, with the run's verdict as committed.
	again, err := commitRun(t, cfg, "nightly", 2)
	if !errors.Is(err, ErrCommitted) || !strings.Contains(err.Error(), "committed already, at "+at) || !strings.Contains(err.Error(), "changed nothing") {
		t.Fatalf("a second commit: %v", err)
	}
	if again.FailsDownstream() || !again.Export.Published || again.Export.Rows != first.Export.Rows || again.Export.Path != first.Export.Path {
		t.Fatalf("a second commit's verdict %+v, want the first's %+v", again.Export, first.Export)
	}

	// A new run id crawls the change and publishes it.
	for i := range 2 {
		runShard(t, cfg, "nightly-2", i, 2)
	}
	if rep, err := commitRun(t, cfg, "nightly-2", 2); err != nil || rep.Export.Rows != 1 || rep.Items.Changed != 1 {
		t.Fatalf("commit of nightly-2: %v, %d rows, %d changed", err, rep.Export.Rows, rep.Items.Changed)
	}
}

// TestShards_ARunIDDecidedButNotFinishedIsRefusedToo: a commit killed
// right after it decided leaves the run committed but unfinished. A shard
// given its id is refused all the same; the commit run again finishes the
// run (a success that published it), and once more says it changed
// nothing.
func TestShards_ARunIDDecidedButNotFinishedIsRefusedToo(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	cfg := f.config(nil, "")
	for i := range 2 {
		runShard(t, cfg, "r1", i, 2)
	}
	_, err := Commit(context.Background(), cfg, "r1", 2, CommitOptions{AfterCommitStep: func(s PublishStep) error {
		if s == StepDecided {
			return errors.New("killed")
		}
		return nil
	}})
	if err == nil || len(runDirs(t, cfg.Output)) != 0 {
		t.Fatalf("the killed commit: %v, run folders %v", err, runDirs(t, cfg.Output))
	}
	rep, err := Run(context.Background(), cfg, Options{Shard: &Shard{Index: 0, Count: 2, RunID: "r1"}})
	if !errors.Is(err, ErrCommitted) || rep.Outcome != verdict.OutcomeFailed {
		t.Fatalf("a shard of the decided run: %v, %s", err, rep.Outcome)
	}
	if got := runDirs(t, cfg.Output); len(got) != 0 {
		t.Fatalf("the refused shard finished the commit: %v", got)
	}
	finished, err := commitRun(t, cfg, "r1", 2)
	if err != nil || !finished.Export.Published || finished.Export.Rows != 20 {
		t.Fatalf("the commit run again: %v, %+v", err, finished.Export)
	}
	if _, err := commitRun(t, cfg, "r1", 2); !errors.Is(err, ErrCommitted) || !strings.Contains(err.Error(), "changed nothing") {
		t.Fatalf("a third commit: %v", err)
	}
}
