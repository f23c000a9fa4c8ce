//go:build gcs

package objstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/s3test"
)

// TestGCSUnreachable points the Google client at a closed port through
// STORAGE_EMULATOR_HOST. The client retries a refused connection until its
// context ends, so Preflight's own deadline must end it.
func TestGCSUnreachable(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(s3test.ClosedEndpoint(t), "http://"))
	old := preflightTimeout
	preflightTimeout = 2 * time.Second
	t.Cleanup(func() { preflightTimeout = old })

	raw := "gs://lake/exports"
	tg, err := Open(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if tg.HidesParts() {
		t.Error("HidesParts = true on gs://")
	}
	err = tg.Preflight(context.Background())
	if !errors.Is(err, ErrUnusable) || !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "output "+raw+": ") {
		t.Fatalf("Preflight = %v; want ErrUnreachable naming the output", err)
	}
	t.Logf("message: %v", err)
}
