//go:build gcs

package objstore_test

import (
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/gcstest"
	"github.com/databrew/databrew-stage/publish"
)

// TestStorageGCS runs the storage port's suite on fake-gcs-server, through
// gocloud's gcsblob (compiled in with -tags gcs).
func TestStorageGCS(t *testing.T) {
	srv := gcstest.Start(t)
	srv.SetEnv(t)
	if c := openURL(t, srv.URL("caps")).Storage().Caps(); c != (publish.Caps{}) {
		t.Errorf("Caps on GCS = %+v", c)
	}
	suiteOn(t, srv.URL)
}
