package objstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"slices"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/s3test"
)

// genericTarget opens an output on a versitygw and drops its S3 client, so
// it takes the path of the stores without hidden parts (gs://, azblob://):
// a part is one create-only blob write, visible once finished. gocloud's
// S3 writer does create-only writes with If-None-Match, as its GCS and
// Azure writers do with their own preconditions.
func genericTarget(t *testing.T, prefix string) *Target {
	t.Helper()
	srv := s3test.Start(t)
	srv.SetEnv(t)
	tg, err := Open(context.Background(), srv.URL(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	tg.s3, tg.hides = nil, false
	return tg
}

func TestGenericPart(t *testing.T) {
	tg := genericTarget(t, "exports")
	ctx := context.Background()
	key := tg.Key("run/part-00000.parquet")
	data := make([]byte, 20<<20)
	_, _ = rand.Read(data)

	p, err := tg.CreatePart(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 3<<20+1)
		if _, err := p.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if keys, _ := tg.ListKeys(ctx, tg.Key("")); len(keys) != 0 {
		t.Fatalf("listed before Finish: %q", keys)
	}
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	if keys, _ := tg.ListKeys(ctx, tg.Key("")); !slices.Equal(keys, []string{key}) {
		t.Fatalf("after Finish: %q; want the part, visible", keys)
	}
	if err := tg.CompletePart(ctx, key, "", int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if err := tg.CompletePart(ctx, key, "", 1); !errors.Is(err, ErrExists) {
		t.Fatalf("CompletePart with another size = %v; want ErrExists", err)
	}
	got, err := tg.Read(ctx, key)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
	if uploads, err := tg.ListUploads(ctx, tg.Key("")); err != nil || len(uploads) != 0 {
		t.Fatalf("ListUploads = %q, %v; want none", uploads, err)
	}
	if n, err := tg.AbortUploads(ctx, tg.Key(""), func(string) bool { return true }); err != nil || n != 0 {
		t.Fatalf("AbortUploads = %d, %v; want 0", n, err)
	}

	// Abort after Finish deletes the object.
	if err := p.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, exists, err := tg.Stat(ctx, key); err != nil || exists {
		t.Fatalf("after Abort: exists %v, %v", exists, err)
	}
	if err := tg.CompletePart(ctx, key, "", int64(len(data))); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("CompletePart of nothing = %v; want fs.ErrNotExist", err)
	}
}

func TestGenericPartNeverOverwrites(t *testing.T) {
	tg := genericTarget(t, "exports")
	ctx := context.Background()
	key := tg.Key("run/part-00000.parquet")
	p, err := tg.CreatePart(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write([]byte("mine")); err != nil {
		t.Fatal(err)
	}
	// Another writer takes the key while the part is being written.
	if err := tg.Put(ctx, key, []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	if err := p.Finish(); !errors.Is(err, ErrExists) {
		t.Fatalf("Finish over an existing object = %v; want ErrExists", err)
	}
	if got, err := tg.Read(ctx, key); err != nil || string(got) != "theirs" {
		t.Fatalf("the existing object changed: %q, %v", got, err)
	}
	if err := p.Abort(); err != nil {
		t.Fatal(err)
	}
	if got, err := tg.Read(ctx, key); err != nil || string(got) != "theirs" {
		t.Fatalf("Abort of a refused part deleted the other's object: %q, %v", got, err)
	}
	if _, err := tg.CreatePart(ctx, key); !errors.Is(err, ErrExists) {
		t.Fatalf("CreatePart on an existing key = %v; want ErrExists", err)
	}
}

func TestGenericPartsRemove(t *testing.T) {
	tg := genericTarget(t, "exports")
	ctx := context.Background()
	ps := tg.Parts(ctx, tg.Key("run/"))
	w, err := ps.Create("part-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("rows")); err != nil {
		t.Fatal(err)
	}
	// Removed while open: nothing is ever written.
	if err := ps.Remove("part-00000.parquet"); err != nil {
		t.Fatal(err)
	}
	w, err = ps.Create("part-00000.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := ps.Remove("part-00000.parquet"); err != nil {
		t.Fatal(err)
	}
	if keys, err := tg.ListKeys(ctx, tg.Key("")); err != nil || len(keys) != 0 {
		t.Fatalf("objects left: %q, %v", keys, err)
	}
	if err := tg.Preflight(ctx); err != nil {
		t.Fatal(err)
	}
}
