package objstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/s3test"
)

// TestAzureUnreachable points the Azure client at a closed port.
func TestAzureUnreachable(t *testing.T) {
	t.Setenv("AZURE_STORAGE_ACCOUNT", "devstoreaccount1")
	t.Setenv("AZURE_STORAGE_KEY", "ZGF0YWJyZXctdGVzdC1rZXk=")
	old := preflightTimeout
	preflightTimeout = 2 * time.Second
	t.Cleanup(func() { preflightTimeout = old })

	host := strings.TrimPrefix(s3test.ClosedEndpoint(t), "http://")
	raw := "azblob://lake/exports?protocol=http&localemu=true&domain=" + host
	tg, err := Open(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if tg.HidesParts() {
		t.Error("HidesParts = true on azblob://")
	}
	err = tg.Preflight(context.Background())
	if !errors.Is(err, ErrUnusable) || !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "output "+raw+": ") {
		t.Fatalf("Preflight = %v; want ErrUnreachable naming the output", err)
	}
	t.Logf("message: %v", err)
}
