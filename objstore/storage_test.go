package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/azuritetest"
	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/publish/storagetest"
)

// suiteOn runs the storage port's conformance suite on one server: each
// subtest gets a prefix of its own, opened from url(prefix).
func suiteOn(t *testing.T, url func(prefix string) string) {
	n := 0
	storagetest.Run(t, func(t *testing.T) publish.Storage {
		n++
		return openURL(t, url(fmt.Sprintf("suite/%d/out", n))).Storage()
	})
}

// TestStorageS3 runs the suite on versitygw.
func TestStorageS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	suiteOn(t, srv.URL)
}

// TestStorageAzure runs the suite on Azurite.
func TestStorageAzure(t *testing.T) {
	srv := azuritetest.Start(t)
	srv.SetEnv(t)
	suiteOn(t, srv.URL)
}

// TestStorageCaps: S3 hides parts, Azure does not; neither completes at
// once.
func TestStorageCaps(t *testing.T) {
	if c := openURL(t, "s3://lake/exports?region=us-east-1").Storage().Caps(); c != (publish.Caps{HidesParts: true}) {
		t.Errorf("Caps on S3 = %+v", c)
	}
	t.Setenv("AZURE_STORAGE_ACCOUNT", "devstoreaccount1")
	t.Setenv("AZURE_STORAGE_KEY", "ZGF0YWJyZXctdGVzdC1rZXk=")
	if c := openURL(t, "azblob://lake/exports?protocol=http&localemu=true&domain=127.0.0.1:1").Storage().Caps(); c != (publish.Caps{}) {
		t.Errorf("Caps on Azure = %+v", c)
	}
}

// TestStorageKeysAreUnderThePrefix: the port's keys are relative to the
// output's prefix, and Where names them by the URL without its query.
func TestStorageKeysAreUnderThePrefix(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	ctx := context.Background()
	tg := openURL(t, srv.URL("exports/shop"))
	s := tg.Storage()
	if err := s.Put(ctx, "_verdict.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, exists, err := tg.Stat(ctx, "exports/shop/_verdict.json"); err != nil || !exists {
		t.Fatalf("the object is not under the prefix: %v, %v", exists, err)
	}
	if keys, err := s.List(ctx, ""); err != nil || len(keys) != 1 || keys[0] != "_verdict.json" {
		t.Fatalf("List = %q, %v", keys, err)
	}
	if got, want := s.Where("dt=2024-05-01/run=R/"), "s3://lake/exports/shop/dt=2024-05-01/run=R/"; got != want {
		t.Fatalf("Where = %q; want %q", got, want)
	}
	// A segment ending in ".." would be escaped by gocloud and not by the
	// multipart requests: refused.
	if err := s.Put(ctx, "a../b", nil); !errors.Is(err, publish.ErrBadKey) {
		t.Fatalf("Put of a key S3 would not hold as it is = %v; want ErrBadKey", err)
	}
}

// TestStorageErrorsOfAStoreThatDoesNotAnswer wrap publish.ErrNoAnswer.
func TestStorageErrorsOfAStoreThatDoesNotAnswer(t *testing.T) {
	tg, _, p := openVia(t, "exports", passTimeout)
	s := tg.Storage()
	ctx := context.Background()
	p.Freeze()
	_, err := s.Read(ctx, "_verdict.json")
	if !errors.Is(err, publish.ErrNoAnswer) || !errors.Is(err, objstore.ErrTimeout) {
		t.Fatalf("Read = %v; want ErrNoAnswer and ErrTimeout", err)
	}
	_, err = s.ListStaged(ctx, "")
	if !errors.Is(err, publish.ErrNoAnswer) {
		t.Fatalf("ListStaged = %v; want ErrNoAnswer", err)
	}
}
