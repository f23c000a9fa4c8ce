package objstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/testkit/s3test"
)

// closedHost is a 127.0.0.1:PORT on which nothing listens.
func closedHost(t *testing.T) string {
	t.Helper()
	return strings.TrimPrefix(s3test.ClosedEndpoint(t), "http://")
}

// preflightUnreachable opens raw, an output whose server does not
// listen, and checks that it does not hide parts (the stores other than
// S3) and that Preflight, given two seconds, fails with ErrUnreachable
// naming the output.
func preflightUnreachable(t *testing.T, raw string) {
	t.Helper()
	old := preflightTimeout
	preflightTimeout = 2 * time.Second
	t.Cleanup(func() { preflightTimeout = old })

	tg, err := Open(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if tg.HidesParts() {
		t.Errorf("HidesParts = true on %s", raw)
	}
	err = tg.Preflight(context.Background())
	if !errors.Is(err, ErrUnusable) || !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "output "+raw+": ") {
		t.Fatalf("Preflight = %v; want ErrUnreachable naming the output", err)
	}
	t.Logf("message: %v", err)
}
