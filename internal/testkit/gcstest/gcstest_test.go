package gcstest

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
)

func TestURLAndEnv(t *testing.T) {
	s := &Server{addr: "127.0.0.1:7070"}
	if got, want := s.URL("exports/shop"), "gs://lake/exports/shop"; got != want {
		t.Errorf("URL = %q; want %q", got, want)
	}
	if got, want := s.BucketURL("other", ""), "gs://other"; got != want {
		t.Errorf("BucketURL = %q; want %q", got, want)
	}
	env := strings.Join(s.Env(), "\n") + "\n"
	for _, kv := range []string{"STORAGE_EMULATOR_HOST=127.0.0.1:7070", "STORAGE_EMULATOR_HOST_GRPC="} {
		if !strings.Contains(env, kv+"\n") {
			t.Errorf("Env lacks %s", kv)
		}
	}
}

// TestStartAndStop writes and reads back an object with Google's client
// through the environment, and checks that the end of its test stopped
// the server.
func TestStartAndStop(t *testing.T) {
	var addr string
	t.Run("server", func(t *testing.T) {
		s := Start(t)
		s.SetEnv(t)
		addr = s.Addr()
		ctx := context.Background()
		c, err := storage.NewClient(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		obj := c.Bucket(Bucket).Object("a/b/c.txt")
		w := obj.If(storage.Conditions{DoesNotExist: true}).NewWriter(ctx)
		if _, err := io.WriteString(w, "hello"); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := obj.NewReader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if b, err := io.ReadAll(r); err != nil || string(b) != "hello" {
			t.Fatalf("read back %q, %v", b, err)
		}
		// Create-only writes are refused over an object, as GCS does.
		w = obj.If(storage.Conditions{DoesNotExist: true}).NewWriter(ctx)
		_, _ = io.WriteString(w, "again")
		if err := w.Close(); err == nil {
			t.Fatal("a create-only write over an object succeeded")
		}
	})
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("something still listens after the test ended")
	}
}
