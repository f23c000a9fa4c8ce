// Package objstoretest checks a test's object store server through
// objstore, the client the exports use: the tests of the harnesses that
// run such servers (internal/testkit/s3test, internal/testkit/azuritetest) share it.
package objstoretest

import (
	"context"
	"testing"

	"github.com/databrew/databrew-stage/objstore"
)

// RoundTrip opens the output URL with objstore, writes key under it
// unless it is there already, and reads it back: its content is the key.
// Calling it again after a restart checks that the object survived. The
// server's environment must be set.
func RoundTrip(t testing.TB, url, key string) {
	t.Helper()
	ctx := context.Background()
	tg, err := objstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if _, exists, err := tg.Stat(ctx, key); err != nil {
		t.Fatal(err)
	} else if !exists {
		if err := tg.Put(ctx, key, []byte(key)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := tg.Read(ctx, key)
	if err != nil || string(got) != key {
		t.Fatalf("read %q: %q, %v", key, got, err)
	}
}
