//go:build gcs

package objstore

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestGCSUnreachable points the Google client at a closed port through
// STORAGE_EMULATOR_HOST. The client retries a refused connection until its
// context ends, so Preflight's own deadline must end it.
func TestGCSUnreachable(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", closedHost(t))
	preflightUnreachable(t, "gs://lake/exports")
}

// TestGCSOpenPrintsNothing opens gs:// outputs without an emulator and
// without credentials in the environment: gocloud's opener, finding none,
// prints a warning on standard output, where a run's --json verdict goes.
// Opening must print nothing, whatever the URL's parameters; it succeeds
// without credentials (anonymous=true, access_id=-), or fails with
// ErrCredentials (or succeeds, on a machine with a metadata server).
func TestGCSOpenPrintsNothing(t *testing.T) {
	for _, kv := range [][2]string{
		{"STORAGE_EMULATOR_HOST", ""}, {"STORAGE_EMULATOR_HOST_GRPC", ""},
		{"GOOGLE_APPLICATION_CREDENTIALS", ""}, {"HOME", t.TempDir()}, {"CLOUDSDK_CONFIG", t.TempDir()},
	} {
		t.Setenv(kv[0], kv[1])
	}
	for _, c := range []struct {
		url  string
		anon bool
	}{
		{"gs://lake/exports?anonymous=true", true},
		{"gs://lake/exports?access_id=-", true},
		{"gs://lake/exports?universe_domain=googleapis.com", false},
		{"gs://lake/exports", false},
	} {
		printed, err := openPrinting(t, c.url)
		if printed != "" {
			t.Errorf("opening %s printed %q on standard output", c.url, printed)
		}
		if err != nil && (c.anon || !errors.Is(err, ErrCredentials)) {
			t.Errorf("Open(%s) = %v", c.url, err)
		}
	}

	// With a key file (never used: opening sends no request), every URL
	// opens.
	key := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(key, []byte(`{"type": "service_account", "project_id": "p", "client_email": "stage@p.iam.gserviceaccount.com"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", key)
	for _, raw := range []string{"gs://lake/exports", "gs://lake/exports?universe_domain=googleapis.com"} {
		if printed, err := openPrinting(t, raw); err != nil || printed != "" {
			t.Errorf("with a key file, Open(%s) = %v, printing %q", raw, err, printed)
		}
	}
}

// openPrinting opens and closes raw, returning what that printed on
// standard output and Open's error.
func openPrinting(t *testing.T, raw string) (printed string, err error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	stdout := os.Stdout
	os.Stdout = w
	tg, err := Open(context.Background(), raw)
	if err == nil {
		tg.Close()
	}
	os.Stdout = stdout
	w.Close()
	return <-out, err
}
