package objstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/objstore"
)

// open starts a versitygw and opens the output prefix in its bucket.
func open(t *testing.T, prefix string) (*objstore.Target, *s3test.Server) {
	t.Helper()
	srv := s3test.Start(t)
	srv.SetEnv(t)
	return openURL(t, srv.URL(prefix)), srv
}

// openURL opens an output URL and closes it when the test ends.
func openURL(t *testing.T, raw string) *objstore.Target {
	t.Helper()
	tg, err := objstore.Open(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Error(err)
		}
	})
	return tg
}

// payload is n random bytes.
func payload(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// keys lists the objects under prefix.
func keys(t *testing.T, tg *objstore.Target, prefix string) []string {
	t.Helper()
	ks, err := tg.ListKeys(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// uploads lists the uploads in progress under prefix.
func uploads(t *testing.T, tg *objstore.Target, prefix string) []string {
	t.Helper()
	ks, err := tg.ListUploads(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// anyKey owns every upload: the tests' outputs hold no other
// application's.
func anyKey(string) bool { return true }

// writePart writes data into a new part at key and finishes it, in
// writes of uneven sizes so chunk boundaries fall inside them.
func writePart(t *testing.T, tg *objstore.Target, key string, data []byte) *objstore.Part {
	t.Helper()
	p, err := tg.CreatePart(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 1<<20+7)
		if k, err := p.Write(rest[:n]); err != nil || k != n {
			t.Fatalf("Write = %d, %v; want %d", k, err, n)
		}
		rest = rest[n:]
	}
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	if p.Size() != int64(len(data)) {
		t.Fatalf("Size = %d; want %d", p.Size(), len(data))
	}
	return p
}

func TestKeyAndHidesParts(t *testing.T) {
	tg := openURL(t, "s3://lake/exports/shop?region=us-east-1")
	if got := tg.Key("dt=2024-05-01/run=R/_SUCCESS"); got != "exports/shop/dt=2024-05-01/run=R/_SUCCESS" {
		t.Errorf("Key = %q", got)
	}
	if tg.URL() != "s3://lake/exports/shop?region=us-east-1" {
		t.Errorf("URL = %q", tg.URL())
	}
	if !tg.HidesParts() {
		t.Error("HidesParts = false on S3")
	}
	root := openURL(t, "s3://lake?region=us-east-1")
	if got := root.Key("_verdict.json"); got != "_verdict.json" {
		t.Errorf("Key at the bucket's root = %q", got)
	}
}

func TestPreflight(t *testing.T) {
	tg, srv := open(t, "exports/shop")
	if err := tg.Preflight(context.Background()); err != nil {
		t.Fatal(err)
	}
	root := openURL(t, srv.URL(""))
	if ks := keys(t, root, ""); len(ks) != 0 {
		t.Errorf("Preflight left objects: %q", ks)
	}
	if us := uploads(t, root, ""); len(us) != 0 {
		t.Errorf("Preflight left uploads: %q", us)
	}
}

// preflightErr runs Preflight on raw and checks that its error is an
// unusable output of kind, naming the output and saying want.
func preflightErr(t *testing.T, raw string, kind error, want string, setup ...func(*objstore.Target) error) {
	t.Helper()
	tg := openURL(t, raw)
	for _, f := range setup {
		if err := f(tg); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := tg.Preflight(ctx)
	if !errors.Is(err, objstore.ErrUnusable) || !errors.Is(err, kind) {
		t.Fatalf("Preflight = %v; want ErrUnusable and %v", err, kind)
	}
	var ue *objstore.UnusableError
	if !errors.As(err, &ue) || ue.URL != raw {
		t.Errorf("Preflight = %#v; want an *UnusableError for %q", err, raw)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "output "+raw+": ") || !strings.Contains(msg, want) {
		t.Errorf("Preflight: %q; want it to start with the output and say %q", msg, want)
	}
	t.Logf("message: %s", msg)
}

func TestPreflightMissingBucket(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	preflightErr(t, srv.BucketURL("nowhere", "exports"), objstore.ErrNoBucket, `bucket "nowhere" does not exist`)
}

func TestPreflightWrongSecret(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
	preflightErr(t, srv.URL("exports"), objstore.ErrCredentials, "the secret key does not match the access key (SignatureDoesNotMatch)")
}

func TestPreflightUnknownAccessKey(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "nobody")
	preflightErr(t, srv.URL("exports"), objstore.ErrCredentials, "does not know the access key")
}

func TestPreflightNoCredentials(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	preflightErr(t, srv.URL("exports"), objstore.ErrCredentials, "no credentials found")
}

func TestPreflightUnreachable(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	closed := s3test.ClosedEndpoint(t)
	raw := "s3://lake/exports?endpoint=" + closed + "&use_path_style=true&region=us-east-1&disable_https=true"
	preflightErr(t, raw, objstore.ErrUnreachable, "cannot reach the endpoint "+closed, objstore.OneAttempt)
}

func TestPreflightCancelled(t *testing.T) {
	tg, _ := open(t, "exports")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := tg.Preflight(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, objstore.ErrUnusable) {
		t.Fatalf("Preflight = %v; want context.Canceled, not ErrUnusable", err)
	}
}

func TestPartHiddenUntilCompleted(t *testing.T) {
	tg, _ := open(t, "exports")
	ctx := context.Background()
	key := tg.Key("dt=2024-05-01/run=R/part-00000.parquet")
	data := payload(20 << 20) // three chunks: 8 + 8 + 4 MiB
	p := writePart(t, tg, key, data)
	if p.UploadID() == "" {
		t.Fatal("a part on S3 has no upload id")
	}

	if ks := keys(t, tg, tg.Key("")); len(ks) != 0 {
		t.Fatalf("a finished part is listed before it is completed: %q", ks)
	}
	if _, exists, err := tg.Stat(ctx, key); err != nil || exists {
		t.Fatalf("Stat before completion = %v, %v; want not there", exists, err)
	}
	if _, err := tg.Read(ctx, key); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read before completion = %v; want fs.ErrNotExist", err)
	}
	if us := uploads(t, tg, tg.Key("")); !slices.Equal(us, []string{key}) {
		t.Fatalf("ListUploads = %q; want the part", us)
	}

	if err := tg.CompletePart(ctx, key, p.UploadID(), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if ks := keys(t, tg, tg.Key("")); !slices.Equal(ks, []string{key}) {
		t.Fatalf("ListKeys after completion = %q", ks)
	}
	got, err := tg.Read(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, not the %d written", len(got), len(data))
	}
	if us := uploads(t, tg, tg.Key("")); len(us) != 0 {
		t.Fatalf("uploads left after completion: %q", us)
	}
}

func TestChecksumWhenRequired(t *testing.T) {
	// The setting some S3-compatible stores need: no checksum headers
	// unless an operation requires them, so no checksum algorithm on the
	// upload either.
	srv := s3test.Start(t)
	srv.SetEnv(t)
	tg := openURL(t, srv.URL("exports")+"&request_checksum_calculation=when_required")
	ctx := context.Background()
	key := tg.Key("run/part-00000.parquet")
	data := payload(objstore.ChunkSize + 5)
	writePart(t, tg, key, data)
	if err := tg.CompletePart(ctx, key, "", int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if got, err := tg.Read(ctx, key); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
	if err := tg.Preflight(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSmallAndEmptyParts(t *testing.T) {
	tg, _ := open(t, "exports")
	ctx := context.Background()
	for _, n := range []int{0, 1, objstore.ChunkSize} {
		key := tg.Key("run/part-" + strings.Repeat("x", n%7) + string(rune('a'+n%26)))
		data := payload(n)
		writePart(t, tg, key, data)
		if err := tg.CompletePart(ctx, key, "", int64(n)); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := tg.Read(ctx, key)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back %d bytes, %v", n, len(got), err)
		}
	}
}

func TestFinishThenAbortLeavesNothing(t *testing.T) {
	tg, _ := open(t, "exports")
	p := writePart(t, tg, tg.Key("run/part-00000.parquet"), payload(9<<20))
	if err := p.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := p.Abort(); err != nil {
		t.Fatalf("second Abort: %v", err)
	}
	if us := uploads(t, tg, tg.Key("")); len(us) != 0 {
		t.Fatalf("uploads left after Abort: %q", us)
	}
	if ks := keys(t, tg, tg.Key("")); len(ks) != 0 {
		t.Fatalf("objects left after Abort: %q", ks)
	}
	if err := tg.CompletePart(context.Background(), p.Key(), "", p.Size()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("CompletePart of an aborted part = %v; want fs.ErrNotExist", err)
	}
}

func TestCreatePartOnExistingKey(t *testing.T) {
	tg, _ := open(t, "exports")
	ctx := context.Background()
	key := tg.Key("run/part-00000.parquet")
	if err := tg.Put(ctx, key, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.CreatePart(ctx, key); !errors.Is(err, objstore.ErrExists) {
		t.Fatalf("CreatePart on an existing key = %v; want ErrExists", err)
	}
	if us := uploads(t, tg, tg.Key("")); len(us) != 0 {
		t.Fatalf("a refused CreatePart left an upload: %q", us)
	}
}

func TestCompletePartOnExistingKey(t *testing.T) {
	tg, _ := open(t, "exports")
	ctx := context.Background()
	key := tg.Key("run/part-00000.parquet")
	data := payload(3 << 20)
	writePart(t, tg, key, data)
	old := []byte("another writer was first")
	if err := tg.Put(ctx, key, old); err != nil {
		t.Fatal(err)
	}
	err := tg.CompletePart(ctx, key, "", int64(len(data)))
	if !errors.Is(err, objstore.ErrExists) {
		t.Fatalf("CompletePart over an existing object = %v; want ErrExists", err)
	}
	if !strings.Contains(err.Error(), key) {
		t.Errorf("error %q does not name the key", err)
	}
	got, err := tg.Read(ctx, key)
	if err != nil || !bytes.Equal(got, old) {
		t.Fatalf("the existing object changed: %q, %v", got, err)
	}
}

func TestCompletePartTwice(t *testing.T) {
	tg, _ := open(t, "exports")
	ctx := context.Background()
	key := tg.Key("run/part-00000.parquet")
	data := payload(1 << 20)
	p := writePart(t, tg, key, data)
	if err := tg.CompletePart(ctx, key, p.UploadID(), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	// A reconcile rolling forward after a crash past the completion, with
	// the recorded upload id and without.
	for _, id := range []string{p.UploadID(), ""} {
		if err := tg.CompletePart(ctx, key, id, int64(len(data))); err != nil {
			t.Fatalf("CompletePart(%q) of a completed part = %v; want nil", id, err)
		}
	}
	if err := tg.CompletePart(ctx, key, "", int64(len(data))+1); !errors.Is(err, objstore.ErrExists) {
		t.Fatalf("CompletePart with another size = %v; want ErrExists", err)
	}
	if err := tg.CompletePart(ctx, tg.Key("run/part-00001.parquet"), "", 1); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("CompletePart of nothing = %v; want fs.ErrNotExist", err)
	}
}

func TestCompletePartWrongSize(t *testing.T) {
	tg, _ := open(t, "exports")
	ctx := context.Background()
	key := tg.Key("run/part-00000.parquet")
	writePart(t, tg, key, payload(1000))
	if err := tg.CompletePart(ctx, key, "", 999); err == nil || errors.Is(err, objstore.ErrExists) {
		t.Fatalf("CompletePart with the wrong size = %v; want an error", err)
	}
	if ks := keys(t, tg, tg.Key("")); len(ks) != 0 {
		t.Fatalf("completed despite the size: %q", ks)
	}
}

func TestPutIfAbsent(t *testing.T) {
	tg, _ := open(t, "exports")
	ctx := context.Background()
	key := tg.Key("run/_SUCCESS")
	for i, want := range []bool{true, false} {
		created, err := tg.PutIfAbsent(ctx, key, []byte{byte('a' + i)})
		if err != nil || created != want {
			t.Fatalf("PutIfAbsent #%d = %v, %v; want %v", i+1, created, err, want)
		}
	}
	if got, err := tg.Read(ctx, key); err != nil || string(got) != "a" {
		t.Fatalf("after a refused PutIfAbsent: %q, %v", got, err)
	}
	if created, err := tg.PutIfAbsent(ctx, tg.Key("run/_empty"), nil); err != nil || !created {
		t.Fatalf("PutIfAbsent of nothing = %v, %v", created, err)
	}
	if size, exists, err := tg.Stat(ctx, tg.Key("run/_empty")); err != nil || !exists || size != 0 {
		t.Fatalf("Stat of an empty object = %d, %v, %v", size, exists, err)
	}
	if err := tg.Put(ctx, key, []byte("replaced")); err != nil {
		t.Fatal(err)
	}
	if got, err := tg.Read(ctx, key); err != nil || string(got) != "replaced" {
		t.Fatalf("after Put: %q, %v", got, err)
	}
}

func TestAbortUploadsAndDeletePrefix(t *testing.T) {
	tg, _ := open(t, "exports")
	ctx := context.Background()
	run1, run2 := tg.Key("dt=2024-05-01/run=A/"), tg.Key("dt=2024-05-01/run=B/")
	for _, k := range []string{run1 + "part-00000.parquet", run1 + "part-00001.parquet", run2 + "part-00000.parquet"} {
		writePart(t, tg, k, payload(100))
	}
	for _, k := range []string{run1 + "_manifest.json", run1 + "x/deeper", run2 + "_manifest.json"} {
		if err := tg.Put(ctx, k, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}

	if n, err := tg.AbortUploads(ctx, run1, anyKey); err != nil || n != 2 {
		t.Fatalf("AbortUploads(run A) = %d, %v; want 2", n, err)
	}
	if us := uploads(t, tg, tg.Key("")); !slices.Equal(us, []string{run2 + "part-00000.parquet"}) {
		t.Fatalf("uploads after aborting run A: %q", us)
	}
	if n, err := tg.DeletePrefix(ctx, run1); err != nil || n != 2 {
		t.Fatalf("DeletePrefix(run A) = %d, %v; want 2", n, err)
	}
	if ks := keys(t, tg, tg.Key("")); !slices.Equal(ks, []string{run2 + "_manifest.json"}) {
		t.Fatalf("objects after deleting run A: %q", ks)
	}
	// The orphan sweep over the whole output.
	if n, err := tg.AbortUploads(ctx, tg.Key(""), anyKey); err != nil || n != 1 {
		t.Fatalf("AbortUploads(output) = %d, %v; want 1", n, err)
	}
	if n, err := tg.AbortUploads(ctx, tg.Key(""), anyKey); err != nil || n != 0 {
		t.Fatalf("AbortUploads with none left = %d, %v", n, err)
	}
	if _, err := tg.DeletePrefix(ctx, ""); err == nil {
		t.Fatal(`DeletePrefix("") emptied the bucket`)
	}
}

func TestKeysOutsideThePrefix(t *testing.T) {
	tg := openURL(t, "s3://lake/exports?region=us-east-1")
	ctx := context.Background()
	for _, key := range []string{"other/x", "exportsx/y", "", "exports/a/../../b"} {
		if _, err := tg.CreatePart(ctx, key); err == nil {
			t.Errorf("CreatePart(%q) was accepted", key)
		}
		if _, err := tg.PutIfAbsent(ctx, key, nil); err == nil {
			t.Errorf("PutIfAbsent(%q) was accepted", key)
		}
		if _, err := tg.DeletePrefix(ctx, key); err == nil {
			t.Errorf("DeletePrefix(%q) was accepted", key)
		}
	}
}

func TestUploadsSurviveARestart(t *testing.T) {
	tg, srv := open(t, "exports")
	ctx := context.Background()
	key := tg.Key("run/part-00000.parquet")
	data := payload(9 << 20)
	writePart(t, tg, key, data)

	srv.Kill()
	down, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := tg.ListUploads(down, tg.Key("")); err == nil {
		t.Fatal("ListUploads worked with the server killed")
	}
	srv.Restart(t)

	if us := uploads(t, tg, tg.Key("")); !slices.Equal(us, []string{key}) {
		t.Fatalf("uploads after a restart: %q", us)
	}
	if err := tg.CompletePart(ctx, key, "", int64(len(data))); err != nil {
		t.Fatal(err)
	}
	got, err := tg.Read(ctx, key)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
}

func TestParts(t *testing.T) {
	tg, _ := open(t, "exports")
	ctx := context.Background()
	run := tg.Key("dt=2024-05-01/run=R/")
	ps := tg.Parts(ctx, run)

	// Removed while open: the upload goes.
	w, err := ps.Create("part-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(payload(100)); err != nil {
		t.Fatal(err)
	}
	if err := ps.Remove("part-00000.parquet"); err != nil {
		t.Fatal(err)
	}
	if us := uploads(t, tg, run); len(us) != 0 {
		t.Fatalf("uploads after removing an open part: %q", us)
	}

	// Finished, then completed: the object is at runPrefix+name.
	w, err = ps.Create("part-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	data := payload(1000)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := ps.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := tg.CompletePart(ctx, run+"part-00000.parquet", "", int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if ks := keys(t, tg, run); !slices.Equal(ks, []string{run + "part-00000.parquet"}) {
		t.Fatalf("objects: %q", ks)
	}

	// Removed when complete: the object goes; removing nothing is no error.
	if err := ps.Remove("part-00000.parquet"); err != nil {
		t.Fatal(err)
	}
	if err := ps.Remove("part-00001.parquet"); err != nil {
		t.Fatalf("Remove of an absent part = %v", err)
	}
	if ks := keys(t, tg, run); len(ks) != 0 {
		t.Fatalf("objects after Remove: %q", ks)
	}
	if _, err := ps.Create("sub/part.parquet"); err == nil {
		t.Fatal("Create accepted a name with a folder")
	}
}

func TestPartRemovedAfterCancel(t *testing.T) {
	tg, _ := open(t, "exports")
	ctx, cancel := context.WithCancel(context.Background())
	ps := tg.Parts(ctx, tg.Key("run/"))
	w, err := ps.Create("part-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := w.Write(payload(objstore.ChunkSize + 1)); err == nil {
		t.Fatal("a chunk was uploaded with a cancelled context")
	}
	if err := ps.Remove("part-00000.parquet"); err != nil {
		t.Fatalf("Remove after the context was cancelled: %v", err)
	}
	if us := uploads(t, tg, tg.Key("")); len(us) != 0 {
		t.Fatalf("uploads left: %q", us)
	}
}

// TestAbortStaleProbes: a probe upload a killed preflight left is aborted
// once it is older than a preflight may last, not before; a part's upload
// is never touched, nor one whose name only starts like a probe's.
func TestAbortStaleProbes(t *testing.T) {
	tg, _ := open(t, "exports")
	writePart(t, tg, tg.Key(".databrew-probe-0123456789abcdef"), []byte("probe"))
	writePart(t, tg, tg.Key("dt=2024-01-01/run=r/shard=0-of-2/part-00000.parquet"), []byte("part"))
	writePart(t, tg, tg.Key(".databrew-probe-0123456789abcdef/theirs"), []byte("not a probe"))
	writePart(t, tg, tg.Key(".databrew-probe-notes"), []byte("not a probe"))
	ctx := context.Background()
	if n, err := tg.AbortStaleProbes(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("a fresh probe: aborted %d, %v; want 0", n, err)
	}
	if n, err := tg.AbortStaleProbes(ctx, time.Now().Add(3*time.Minute)); err != nil || n != 1 {
		t.Fatalf("a stale probe: aborted %d, %v; want 1", n, err)
	}
	want := []string{tg.Key(".databrew-probe-0123456789abcdef/theirs"), tg.Key(".databrew-probe-notes"),
		tg.Key("dt=2024-01-01/run=r/shard=0-of-2/part-00000.parquet")}
	if got := uploads(t, tg, tg.Key("")); !slices.Equal(got, want) {
		t.Fatalf("uploads left %q, want %q", got, want)
	}
}

// TestAbortUploadsOnlyThoseItOwns: AbortUploads asks for each upload
// under the prefix, by its key relative to the output's prefix, and
// leaves those it is told are not its own.
func TestAbortUploadsOnlyThoseItOwns(t *testing.T) {
	tg, _ := open(t, "exports")
	mine, theirs := tg.Key("dt=2024-05-01/run=A/part-00000.parquet"), tg.Key("dt=2024-05-01/theirs.bin")
	writePart(t, tg, mine, payload(10))
	writePart(t, tg, theirs, payload(10))
	var asked []string
	own := func(rel string) bool {
		asked = append(asked, rel)
		return strings.Contains(rel, "/run=")
	}
	if n, err := tg.AbortUploads(context.Background(), tg.Key("dt="), own); err != nil || n != 1 {
		t.Fatalf("AbortUploads = %d, %v; want 1", n, err)
	}
	if want := []string{"dt=2024-05-01/run=A/part-00000.parquet", "dt=2024-05-01/theirs.bin"}; !slices.Equal(asked, want) {
		t.Errorf("own was asked about %q, want %q", asked, want)
	}
	if got := uploads(t, tg, tg.Key("")); !slices.Equal(got, []string{theirs}) {
		t.Fatalf("uploads left %q, want %q", got, theirs)
	}
}

// TestCheckPartAndID: CheckPart finds an open upload of the right size,
// a completed part, and reports an aborted one as gone; ID ignores the
// URL's spelling.
func TestCheckPartAndID(t *testing.T) {
	tg, srv := open(t, "exports")
	ctx := context.Background()
	key := tg.Key("dt=2024-01-01/run=r/shard=0-of-2/a-part-00000.parquet")
	p := writePart(t, tg, key, []byte("twelve bytes"))
	if err := tg.CheckPart(ctx, key, p.UploadID(), 12); err != nil {
		t.Fatalf("an open upload: %v", err)
	}
	if err := tg.CheckPart(ctx, key, p.UploadID(), 13); err == nil {
		t.Fatal("an upload of another size: no error")
	}
	if err := tg.CompletePart(ctx, key, p.UploadID(), 12); err != nil {
		t.Fatal(err)
	}
	if err := tg.CheckPart(ctx, key, p.UploadID(), 12); err != nil {
		t.Fatalf("a completed part: %v", err)
	}
	gone := tg.Key("dt=2024-01-01/run=r/shard=1-of-2/a-part-00000.parquet")
	q := writePart(t, tg, gone, []byte("x"))
	if err := q.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := tg.CheckPart(ctx, gone, q.UploadID(), 1); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an aborted upload: %v, want fs.ErrNotExist", err)
	}
	// The same output spelt with a trailing slash and its query reordered.
	raw := srv.URL("exports")
	base, query, _ := strings.Cut(raw, "?")
	params := strings.Split(query, "&")
	slices.Reverse(params)
	other := openURL(t, base+"/?"+strings.Join(params, "&"))
	if tg.ID() != "s3://lake/exports/" || other.ID() != tg.ID() || other.URL() == tg.URL() {
		t.Errorf("ID = %q and %q for %q and %q", tg.ID(), other.ID(), tg.URL(), other.URL())
	}
}
