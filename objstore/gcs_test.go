//go:build gcs

package objstore

import "testing"

// TestGCSUnreachable points the Google client at a closed port through
// STORAGE_EMULATOR_HOST. The client retries a refused connection until its
// context ends, so Preflight's own deadline must end it.
func TestGCSUnreachable(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", closedHost(t))
	preflightUnreachable(t, "gs://lake/exports")
}
