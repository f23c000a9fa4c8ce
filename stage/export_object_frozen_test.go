package stage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/internal/testkit/stallproxy"
	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/verdict"
)

// frozenLake is versitygw behind a proxy that can stop answering, and the
// output prefix "exports" of its bucket: the config publishes through the
// proxy, the test reads the lake directly.
type frozenLake struct {
	*lake
	proxy *stallproxy.Proxy
}

func newFrozenLake(t *testing.T) *frozenLake {
	t.Helper()
	srv := s3test.Start(t)
	srv.SetEnv(t)
	return &frozenLake{lake: openLake(t, srv, "exports"), proxy: stallproxy.Start(t, strings.TrimPrefix(srv.Endpoint(), "http://"))}
}

// storeTimeout is the tests' time limit of each request to the store:
// short, for a run waits for it each time the store does not answer, and
// long enough for the requests before the store stops answering to pass
// on a loaded machine.
const storeTimeout = 2 * time.Second

// TestObjectStore_AStoreThatStopsAnsweringFailsThePublish: the S3
// endpoint accepts connections and never answers from a step of the
// publish on, before the publish is recorded or after: the run returns
// all the same, having waited for two requests, its verdict failed (stop
// error, export.failed) with a detail naming the endpoint; once the
// endpoint answers again, the next run reconciles and every item reaches
// the lake exactly once.
func TestObjectStore_AStoreThatStopsAnsweringFailsThePublish(t *testing.T) {
	for _, step := range []PublishStep{StepIntent, StepStaged, StepDecided, StepVisible} {
		t.Run(string(step), func(t *testing.T) { frozenFrom(t, step) })
	}
}

func frozenFrom(t *testing.T, step PublishStep) {
	l := newFrozenLake(t)
	f := newFixture(t, catalogsite.Options{Items: 30})
	cfg := l.configIn(f, "")
	cfg.Output = l.proxy.Via(l.url())
	freeze := func(s PublishStep) error {
		if s == step {
			l.proxy.Freeze()
		}
		return nil
	}
	rep, err := Run(context.Background(), cfg, Options{StoreTimeout: storeTimeout, AfterPublishStep: freeze})
	t.Logf("%s (%v)", rep.Summary(), err)
	expectFailedNamingTheEndpoint(t, rep, l.proxy.Endpoint())
	// The publish's request, and the output's _verdict.json: undoing what
	// the publish left would wait for the store again, and is the next
	// run's.
	if n := l.proxy.Stalled(); n != 2 {
		t.Errorf("the run waited for %d requests the store did not answer, want 2", n)
	}
	if last, err := ReadLastRun(cfg.Storage); err != nil || last.RunID != rep.RunID || !last.Export.Failed {
		t.Fatalf(".last_run.json: %v, run %s export %+v; want this run's failed export", err, last.RunID, last.Export)
	}

	l.proxy.Thaw()
	next := f.run(cfg, Options{})
	if next.Export.Failed {
		t.Fatalf("next run: export %+v", next.Export)
	}
	expectEachItemOnceInLake(t, f, l.lake)
}

// expectFailedNamingTheEndpoint checks the verdict of a run whose store
// stopped answering during the publish.
func expectFailedNamingTheEndpoint(t *testing.T, rep verdict.RunReport, endpoint string) {
	t.Helper()
	if rep.Stop != verdict.StopError || !rep.Export.Failed || rep.Export.Published {
		t.Fatalf("verdict %s (%s): %q, export %+v; want stop error, export failed", rep.Outcome, rep.Stop, rep.Detail, rep.Export)
	}
	want := "the endpoint " + endpoint + " did not answer within " + storeTimeout.String()
	if !strings.Contains(rep.Detail, want) || !strings.Contains(rep.Export.Reason, want) {
		t.Fatalf("detail %q; want it to say %q", rep.Detail, want)
	}
}

// TestObjectStore_ASignalDuringAFrozenPublishEndsTheRun: one signal
// while the store does not answer ends the run with its verdict. Before
// the publish is recorded, the signal ends the request that hangs and
// abandons the publish (stop interrupted); after, the publish goes on as
// recorded, and the store's time limit ends it (stop error, naming the
// endpoint). Either way the next run publishes every item once.
func TestObjectStore_ASignalDuringAFrozenPublishEndsTheRun(t *testing.T) {
	t.Run("before the publish is recorded", func(t *testing.T) {
		l := newFrozenLake(t)
		f := newFixture(t, catalogsite.Options{Items: 30})
		cfg := l.configIn(f, "")
		cfg.Output = l.proxy.Via(l.url())
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		// The part's first request hangs; the signal comes meanwhile.
		l.proxy.FreezeOn(`part-00000\.parquet`)
		go func() {
			select {
			case <-l.proxy.Stalls():
				cancel(errSignal)
			case <-ctx.Done():
			}
		}()
		rep, err := Run(ctx, cfg, Options{StoreTimeout: storeTimeout})
		t.Logf("%s (%v)", rep.Summary(), err)
		want := "Interrupted by SIGINT during the export: nothing is published, its items stay pending for the next run"
		if rep.Stop != verdict.StopInterrupted || rep.Detail != want || !rep.Export.Failed || rep.Export.Published {
			t.Fatalf("verdict %s (%s): %q, export %+v; want interrupted: %q", rep.Outcome, rep.Stop, rep.Detail, rep.Export, want)
		}
		// The request the signal ended, then two: undoing the publish,
		// which stops at the first request unanswered, and the output's
		// _verdict.json.
		if n := l.proxy.Stalled(); n != 3 {
			t.Errorf("the run waited for %d requests the store did not answer, want 3", n)
		}
		l.proxy.Thaw()
		f.run(cfg, Options{})
		expectEachItemOnceInLake(t, f, l.lake)
	})
	t.Run("after the publish is recorded", func(t *testing.T) {
		l := newFrozenLake(t)
		f := newFixture(t, catalogsite.Options{Items: 30})
		cfg := l.configIn(f, "")
		cfg.Output = l.proxy.Via(l.url())
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		signalFrozen := func(s PublishStep) error {
			if s == StepDecided {
				l.proxy.Freeze()
				cancel(errSignal)
			}
			return nil
		}
		rep, err := Run(ctx, cfg, Options{StoreTimeout: storeTimeout, AfterPublishStep: signalFrozen})
		t.Logf("%s (%v)", rep.Summary(), err)
		expectFailedNamingTheEndpoint(t, rep, l.proxy.Endpoint())
		if n := l.proxy.Stalled(); n != 2 {
			t.Errorf("the run waited for %d requests the store did not answer, want 2", n)
		}
		l.proxy.Thaw()
		f.run(cfg, Options{})
		expectEachItemOnceInLake(t, f, l.lake)
	})
}

// TestObjectStore_ACommitWhoseStoreStopsAnsweringEnds: the commit of a
// logical run of shards decides, and the store stops answering as it
// completes the parts: the commit returns, its error naming the
// endpoint, having waited for one request (looking again at a part, as
// for a store that lists a completing upload half, would wait for each
// look); once the store answers again, a commit run again finishes the
// run, and every item reaches the lake exactly once.
func TestObjectStore_ACommitWhoseStoreStopsAnsweringEnds(t *testing.T) {
	l := newFrozenLake(t)
	f := newFixture(t, catalogsite.Options{Items: 30})
	cfg := l.configIn(f, "")
	cfg.Output = l.proxy.Via(l.url())
	runShard(t, cfg, "r1", 0, 2)
	runShard(t, cfg, "r1", 1, 2)
	freeze := func(s PublishStep) error {
		if s == StepDecided {
			l.proxy.Freeze()
		}
		return nil
	}
	_, err := Commit(context.Background(), cfg, "r1", 2, CommitOptions{StoreTimeout: storeTimeout, AfterCommitStep: freeze})
	want := "the endpoint " + l.proxy.Endpoint() + " did not answer within " + storeTimeout.String()
	if !errors.Is(err, objstore.ErrTimeout) || !strings.Contains(err.Error(), want) {
		t.Fatalf("commit: %v; want an error saying %q", err, want)
	}
	if n := l.proxy.Stalled(); n != 1 {
		t.Errorf("the commit waited for %d requests the store did not answer, want 1", n)
	}
	l.proxy.Thaw()
	if rep, err := Commit(context.Background(), cfg, "r1", 2, CommitOptions{}); err != nil || !rep.Export.Published {
		t.Fatalf("commit again: %v, export %+v", err, rep.Export)
	}
	expectEachItemOnceInLake(t, f, l.lake)
}
