package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/azuritetest"
	"github.com/databrew/databrew-stage/objstore"
)

// TestAzurite runs the primitives the export needs against a real Azure
// Blob server, Azurite, through gocloud's azblob driver: one server, a
// prefix per subtest.
func TestAzurite(t *testing.T) {
	srv := azuritetest.Start(t)
	srv.SetEnv(t)
	ctx := context.Background()
	root := openURL(t, srv.URL(""))

	t.Run("preflight", func(t *testing.T) {
		// Preflight writes its probe twice, create-only, and fails with
		// ErrNotCreateOnly unless the second write is refused: passing
		// proves Azurite honours If-None-Match: * on Put Blob.
		tg := openURL(t, srv.URL("preflight/shop"))
		if tg.HidesParts() {
			t.Error("HidesParts = true on azblob://")
		}
		if err := tg.Preflight(ctx); err != nil {
			t.Fatal(err)
		}
		if ks := keys(t, root, "preflight/"); len(ks) != 0 {
			t.Errorf("Preflight left objects: %q", ks)
		}
		if us := uploads(t, root, ""); len(us) != 0 {
			t.Errorf("uploads on Azure: %q", us)
		}
	})

	t.Run("part", func(t *testing.T) {
		tg := openURL(t, srv.URL("part"))
		key := tg.Key("run/part-00000.parquet")
		data := payload(20 << 20) // three blocks of ChunkSize: staged, then committed by Finish
		p, err := tg.CreatePart(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if p.UploadID() != "" {
			t.Errorf("UploadID = %q on Azure", p.UploadID())
		}
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 3<<20+1)
			if _, err := p.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if ks := keys(t, tg, tg.Key("")); len(ks) != 0 {
			t.Fatalf("listed before Finish: %q", ks)
		}
		if err := p.Finish(); err != nil {
			t.Fatal(err)
		}
		if ks := keys(t, tg, tg.Key("")); !slices.Equal(ks, []string{key}) {
			t.Fatalf("after Finish: %q; want the part, visible", ks)
		}
		if err := tg.CompletePart(ctx, key, "", int64(len(data))); err != nil {
			t.Fatal(err)
		}
		if err := tg.CompletePart(ctx, key, "", int64(len(data))-1); !errors.Is(err, objstore.ErrExists) {
			t.Fatalf("CompletePart with another size = %v; want ErrExists", err)
		}
		got, err := tg.Read(ctx, key)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back %d of %d bytes, %v", len(got), len(data), err)
		}
		if _, err := tg.CreatePart(ctx, key); !errors.Is(err, objstore.ErrExists) {
			t.Fatalf("a second CreatePart at the key = %v; want ErrExists", err)
		}
		if us := uploads(t, tg, tg.Key("")); len(us) != 0 {
			t.Fatalf("ListUploads = %q; want none on Azure", us)
		}
		if n, err := tg.AbortUploads(ctx, tg.Key(""), anyKey); err != nil || n != 0 {
			t.Fatalf("AbortUploads = %d, %v; want 0", n, err)
		}
		if err := p.Abort(); err != nil { // after Finish: deletes the object
			t.Fatal(err)
		}
		if _, exists, err := tg.Stat(ctx, key); err != nil || exists {
			t.Fatalf("after Abort: exists %v, %v", exists, err)
		}
		if err := tg.CompletePart(ctx, key, "", int64(len(data))); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("CompletePart of nothing = %v; want fs.ErrNotExist", err)
		}
	})

	t.Run("part never overwrites", func(t *testing.T) {
		// Another writer takes the key while the part's blocks are being
		// staged: the commit of its block list, create-only, is refused.
		tg := openURL(t, srv.URL("race"))
		key := tg.Key("run/part-00000.parquet")
		p, err := tg.CreatePart(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write(payload(objstore.ChunkSize + 1)); err != nil {
			t.Fatal(err)
		}
		if err := tg.Put(ctx, key, []byte("theirs")); err != nil {
			t.Fatal(err)
		}
		if err := p.Finish(); !errors.Is(err, objstore.ErrExists) {
			t.Fatalf("Finish over an existing object = %v; want ErrExists", err)
		}
		if err := p.Abort(); err != nil {
			t.Fatal(err)
		}
		if got, err := tg.Read(ctx, key); err != nil || string(got) != "theirs" {
			t.Fatalf("the existing object changed: %q, %v", got, err)
		}
	})

	t.Run("put if absent", func(t *testing.T) {
		tg := openURL(t, srv.URL("put"))
		key := tg.Key("run/_SUCCESS")
		if created, err := tg.PutIfAbsent(ctx, key, []byte("first")); err != nil || !created {
			t.Fatalf("first PutIfAbsent = %v, %v; want created", created, err)
		}
		if created, err := tg.PutIfAbsent(ctx, key, []byte("second")); err != nil || created {
			t.Fatalf("second PutIfAbsent = %v, %v; want not created", created, err)
		}
		if got, err := tg.Read(ctx, key); err != nil || string(got) != "first" {
			t.Fatalf("the object is %q, %v; want the first write's", got, err)
		}
	})

	t.Run("parts remove", func(t *testing.T) {
		tg := openURL(t, srv.URL("remove"))
		ps := tg.Parts(ctx, tg.Key("run/"))
		w, err := ps.Create("part-00000.parquet")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte("rows")); err != nil {
			t.Fatal(err)
		}
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		if ks := keys(t, tg, tg.Key("")); len(ks) != 1 {
			t.Fatalf("after Finish: %q; want the part", ks)
		}
		if err := ps.Remove("part-00000.parquet"); err != nil {
			t.Fatal(err)
		}
		if ks := keys(t, tg, tg.Key("")); len(ks) != 0 {
			t.Fatalf("objects left after Remove: %q", ks)
		}
		if err := ps.Remove("part-00000.parquet"); err != nil { // gone: no error
			t.Fatal(err)
		}
	})

	t.Run("delete prefix", func(t *testing.T) {
		tg := openURL(t, srv.URL("del"))
		for _, k := range []string{"a/1", "a/2/x", "a/2/y", "ab", "b/1"} {
			if err := tg.Put(ctx, tg.Key(k), []byte(k)); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := tg.DeletePrefix(ctx, tg.Key("a/")); err != nil || n != 3 {
			t.Fatalf("DeletePrefix = %d, %v; want 3", n, err)
		}
		if ks := keys(t, tg, tg.Key("")); !slices.Equal(ks, []string{tg.Key("ab"), tg.Key("b/1")}) {
			t.Fatalf("left: %q", ks)
		}
	})

	t.Run("missing container", func(t *testing.T) {
		raw := srv.ContainerURL("no-such-container", "exports")
		err := openURL(t, raw).Preflight(ctx)
		if !errors.Is(err, objstore.ErrUnusable) || !errors.Is(err, objstore.ErrNoBucket) || !strings.Contains(err.Error(), "output "+raw+": ") {
			t.Fatalf("Preflight = %v; want ErrNoBucket naming the output", err)
		}
	})

	t.Run("wrong key", func(t *testing.T) {
		// Open reads the environment each time, so the key set now counts
		// although the server's own was used before in this process.
		t.Setenv("AZURE_STORAGE_KEY", "ZGF0YWJyZXctd3Jvbmcta2V5")
		err := openURL(t, srv.URL("exports")).Preflight(ctx)
		// Azurite answers AuthorizationFailure where Azure answers
		// AuthenticationFailed, with the same message.
		if !errors.Is(err, objstore.ErrUnusable) || !errors.Is(err, objstore.ErrCredentials) ||
			!strings.Contains(err.Error(), "Azure Blob Storage refused the credentials (403 AuthorizationFailure): check AZURE_STORAGE_KEY (the key of account \"devstoreaccount1\")") ||
			strings.Contains(err.Error(), "\n") {
			t.Fatalf("Preflight = %v; want ErrCredentials, in one line", err)
		}
		t.Logf("message: %v", err)
	})
}
