package lineage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileTransportAppends: each event is one line added to what the file
// holds.
func TestFileTransportAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lineage.jsonl")
	if err := os.WriteFile(path, []byte("{\"earlier\":1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := FileTransport{Path: path}
	for _, ev := range []string{`{"eventType":"START"}`, `{"eventType":"COMPLETE"}`} {
		if err := f.Send(context.Background(), []byte(ev)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"earlier\":1}\n{\"eventType\":\"START\"}\n{\"eventType\":\"COMPLETE\"}\n"; string(b) != want {
		t.Errorf("file holds %q, want %q", b, want)
	}
}

// TestFileTransportUnwritable: the error says what failed; with the
// DeliveryError around it, it names the file once.
func TestFileTransportUnwritable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "lineage.jsonl")
	f := FileTransport{Path: path}
	failed := NewEmitter(f).Emit(context.Background(), RunEvent{EventType: EventStart})
	if len(failed) != 1 || !errors.Is(failed[0], fs.ErrNotExist) {
		t.Fatalf("failed deliveries %v, want one: the folder does not exist", failed)
	}
	if msg := failed[0].Error(); strings.Count(msg, path) != 1 || !strings.Contains(msg, "START") {
		t.Errorf("error %q, want the event and the path once", msg)
	}
}
