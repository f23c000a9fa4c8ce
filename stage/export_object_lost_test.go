package stage

import (
	"context"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// retryStoreTimeout leaves the S3 client the time to retry a request
// once (it waits up to 2s before its first retry).
const retryStoreTimeout = 30 * time.Second

// TestObjectStore_ALostAnswerIsNotALostPublish: the network loses the
// store's answer to one request of the publish (the store acted on it),
// and the client retries: starting the part's upload (a second upload
// is started), completing it (the retry finds it completed), writing
// _SUCCESS (the retry finds it written). The run publishes every item
// once and leaves no upload behind.
func TestObjectStore_ALostAnswerIsNotALostPublish(t *testing.T) {
	for name, request := range map[string]string{
		"start the part's upload": `^POST \S*part-00000\.parquet\?uploads=`,
		"complete the part":       `^POST \S*part-00000\.parquet\?uploadId=`,
		"write _SUCCESS":          `^PUT \S*/_SUCCESS`,
	} {
		t.Run(name, func(t *testing.T) {
			l := newFrozenLake(t)
			f := newFixture(t, catalogsite.Options{Items: 30})
			cfg := l.configIn(f, "")
			cfg.Output = l.proxy.Via(l.url())
			l.proxy.LoseAnswerOn(request)
			rep, err := Run(context.Background(), cfg, Options{StoreTimeout: retryStoreTimeout})
			if err != nil || !rep.Export.Published || rep.Export.Rows != 30 {
				t.Fatalf("run: %v, export %+v (%s)", err, rep.Export, rep.Summary())
			}
			expectEachItemOnceInLake(t, f, l.lake)
		})
	}
}

// TestObjectStore_ALostAnswerIsNotALostCommit: a shard's start of its
// part's upload loses its answer, and the client's retry starts a second
// upload: the commit completes the one the shard recorded and leaves no
// upload behind.
func TestObjectStore_ALostAnswerIsNotALostCommit(t *testing.T) {
	l := newFrozenLake(t)
	f := newFixture(t, catalogsite.Options{Items: 30})
	cfg := l.configIn(f, "")
	cfg.Output = l.proxy.Via(l.url())
	l.proxy.LoseAnswerOn(`^POST \S*part-00000\.parquet\?uploads=`)
	runShard(t, cfg, "r1", 0, 2)
	runShard(t, cfg, "r1", 1, 2)
	if rep, err := commitRun(t, cfg, "r1", 2); err != nil || !rep.Export.Published || rep.Export.Rows != 30 {
		t.Fatalf("commit: %v, export %+v", err, rep.Export)
	}
	expectEachItemOnceInLake(t, f, l.lake)
}
