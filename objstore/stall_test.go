package objstore_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/testkit/azuritetest"
	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/internal/testkit/stallproxy"
	"github.com/databrew/databrew-stage/objstore"
)

// The tests' time limits of a request: short for a target whose every
// request hangs; longer for one whose requests must also pass on a
// loaded machine before the store stops answering; longest where the
// S3 client must have the time to retry (it waits up to 2s first).
const (
	hangTimeout  = 500 * time.Millisecond
	passTimeout  = 2 * time.Second
	retryTimeout = 30 * time.Second
)

// openVia starts a versitygw behind a stall proxy and opens the output
// prefix through the proxy twice: each request of one bounded by
// hangTimeout, for the requests that hang, each of the other by pass.
func openVia(t *testing.T, prefix string, pass time.Duration) (hang, passing *objstore.Target, p *stallproxy.Proxy) {
	t.Helper()
	srv := s3test.Start(t)
	srv.SetEnv(t)
	p = stallproxy.Start(t, strings.TrimPrefix(srv.Endpoint(), "http://"))
	open := func(timeout time.Duration) *objstore.Target {
		tg, err := objstore.OpenWith(context.Background(), p.Via(srv.URL(prefix)), objstore.Options{CallTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tg.Close() })
		return tg
	}
	return open(hangTimeout), open(pass), p
}

// expectTimeout checks err is the timeout of a request of limit, naming
// the endpoint.
func expectTimeout(t *testing.T, what string, err error, p *stallproxy.Proxy, limit time.Duration) {
	t.Helper()
	want := "the endpoint " + p.Endpoint() + " did not answer within " + limit.String()
	if !errors.Is(err, objstore.ErrTimeout) || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: %v; want ErrTimeout saying %q", what, err, want)
	}
}

// TestAStoreThatStopsAnsweringTimesOut: every kind of request ends, with
// an error naming the endpoint, when the endpoint accepts connections
// and never answers; and when it answers a response's head and never
// its body; a cancelled context ends a request at once, as itself.
func TestAStoreThatStopsAnsweringTimesOut(t *testing.T) {
	tg, setup, p := openVia(t, "exports", passTimeout)
	ctx := context.Background()
	key := tg.Key("dt=2024-05-01/run=R/_manifest.json")
	if err := setup.Put(ctx, key, []byte(`{"rows": 1}`)); err != nil {
		t.Fatal(err)
	}
	part := writePart(t, setup, tg.Key("dt=2024-05-01/run=R/part-00000.parquet"), payload(1000))

	p.Freeze()
	_, err := tg.Read(ctx, key)
	expectTimeout(t, "Read", err, p, hangTimeout)
	_, _, err = tg.Stat(ctx, key)
	expectTimeout(t, "Stat", err, p, hangTimeout)
	_, err = tg.ListKeys(ctx, tg.Key(""))
	expectTimeout(t, "ListKeys", err, p, hangTimeout)
	_, err = tg.ListUploads(ctx, tg.Key(""))
	expectTimeout(t, "ListUploads", err, p, hangTimeout)
	_, err = tg.PutIfAbsent(ctx, tg.Key("x.json"), []byte("{}"))
	expectTimeout(t, "PutIfAbsent", err, p, hangTimeout)
	_, err = tg.CreatePart(ctx, tg.Key("dt=2024-05-01/run=R/part-00001.parquet"))
	expectTimeout(t, "CreatePart", err, p, hangTimeout)
	err = tg.CompletePart(ctx, part.Key(), part.UploadID(), 1000)
	expectTimeout(t, "CompletePart", err, p, hangTimeout)
	_, err = tg.AbortUploads(ctx, tg.Key(""), anyKey)
	expectTimeout(t, "AbortUploads", err, p, hangTimeout)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tg.Read(cancelled, key); !errors.Is(err, context.Canceled) || errors.Is(err, objstore.ErrTimeout) {
		t.Fatalf("Read with a cancelled context: %v; want context.Canceled", err)
	}

	p.Thaw()
	if got, err := setup.Read(ctx, key); err != nil || string(got) != `{"rows": 1}` {
		t.Fatalf("thawed: %q, %v", got, err)
	}
	p.StallBodies()
	_, err = tg.Read(ctx, key)
	expectTimeout(t, "Read of a body that never comes", err, p, hangTimeout)
	p.Thaw()
	p.StallBodies()
	_, err = tg.ListKeys(ctx, tg.Key(""))
	expectTimeout(t, "ListKeys of a body that never comes", err, p, hangTimeout)
}

// TestAPartWhoseStoreStopsAnsweringIsLeftToTheReconcile: a part whose
// chunk the store never answers is not undone by waiting for the store
// again, once per undoing request: Remove says the part is left, and the
// next reconcile finds its upload. A store that answers again is
// undone as ever.
func TestAPartWhoseStoreStopsAnsweringIsLeftToTheReconcile(t *testing.T) {
	_, tg, p := openVia(t, "exports", passTimeout)
	ctx := context.Background()
	ps := tg.Parts(ctx, tg.Key("dt=2024-05-01/run=R/"))
	w, err := ps.Create("part-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	p.Freeze()
	_, err = w.Write(payload(objstore.ChunkSize + 1)) // a full chunk goes up
	expectTimeout(t, "Write", err, p, passTimeout)
	err = ps.Remove("part-00000.parquet")
	if !errors.Is(err, objstore.ErrTimeout) {
		t.Fatalf("Remove = %v; want ErrTimeout: the part is left", err)
	}
	if n := p.Stalled(); n != 1 {
		t.Errorf("the part waited for %d requests the store did not answer, want 1 (the chunk's)", n)
	}
	p.Thaw()
	if us := uploads(t, tg, tg.Key("")); len(us) != 1 {
		t.Fatalf("uploads %q; want the part's, left for the reconcile", us)
	}
	w, err = ps.Create("part-00001.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("rows")); err != nil {
		t.Fatal(err)
	}
	if err := ps.Remove("part-00001.parquet"); err != nil {
		t.Fatalf("Remove with the store answering: %v", err)
	}
	if us := uploads(t, tg, tg.Key("")); len(us) != 1 {
		t.Fatalf("uploads %q; want the first part's only", us)
	}
}

// TestPreflightWhenTheStoreStopsAnswering: a store that accepts
// connections and never answers is unreachable, named, within the call
// timeout.
func TestPreflightWhenTheStoreStopsAnswering(t *testing.T) {
	tg, _, p := openVia(t, "exports", passTimeout)
	p.Freeze()
	err := tg.Preflight(context.Background())
	if !errors.Is(err, objstore.ErrUnreachable) {
		t.Fatalf("Preflight = %v; want ErrUnreachable", err)
	}
	expectTimeout(t, "Preflight", err, p, hangTimeout)
}

// TestPreflightSurvivesALostAnswer: the answer to the probe's create-only
// write is lost on the way (the store wrote it): the client's retry
// finds the probe there, which is the probe's own, not another object;
// and it is deleted as every probe is.
func TestPreflightSurvivesALostAnswer(t *testing.T) {
	_, tg, p := openVia(t, "exports", retryTimeout)
	p.LoseAnswerOn(`^PUT /lake/exports/\.databrew-probe-`)
	if err := tg.Preflight(context.Background()); err != nil {
		t.Fatalf("Preflight = %v", err)
	}
	if ks := keys(t, tg, tg.Key("")); len(ks) != 0 {
		t.Errorf("Preflight left objects: %q", ks)
	}
}

// TestAnAzureStoreThatStopsAnsweringTimesOut: on Azure Blob, where a
// part is a blob writer that uploads a block as its buffer fills, a
// write whose block never gets an answer ends too, naming the endpoint,
// and so do the single requests.
func TestAnAzureStoreThatStopsAnsweringTimesOut(t *testing.T) {
	srv := azuritetest.Start(t)
	srv.SetEnv(t)
	p := stallproxy.Start(t, strings.TrimPrefix(srv.Endpoint(), "http://"))
	u, err := url.Parse(srv.URL("exports"))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("domain", p.Addr())
	u.RawQuery = q.Encode()
	tg, err := objstore.OpenWith(context.Background(), u.String(), objstore.Options{CallTimeout: passTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx := context.Background()
	key := tg.Key("dt=2024-05-01/run=R/part-00000.parquet")
	part, err := tg.CreatePart(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	p.Freeze()
	want := "the endpoint " + p.Addr() + " did not answer within " + passTimeout.String()
	err = nil
	for data := payload(objstore.ChunkSize + 1); err == nil && len(data) > 0; data = data[min(len(data), 1<<20):] {
		_, err = part.Write(data[:min(len(data), 1<<20)])
	}
	if err == nil {
		err = part.Finish()
	}
	if !errors.Is(err, objstore.ErrTimeout) || !strings.Contains(err.Error(), want) {
		t.Fatalf("writing a part: %v; want ErrTimeout saying %q", err, want)
	}
	_ = part.Abort()
	_, err = tg.Read(ctx, tg.Key("x.json"))
	if !errors.Is(err, objstore.ErrTimeout) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Read: %v; want ErrTimeout saying %q", err, want)
	}
}
