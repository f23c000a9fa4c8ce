//go:build unix

package s3test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/objstore"
)

func TestURLAndEnv(t *testing.T) {
	s := &Server{addr: "127.0.0.1:7070"}
	want := "s3://lake/exports/shop?disable_https=true&endpoint=http%3A%2F%2F127.0.0.1%3A7070&region=us-east-1&use_path_style=true"
	if got := s.URL("/exports/shop"); got != want {
		t.Errorf("URL = %q; want %q", got, want)
	}
	if got := s.BucketURL("other", ""); !strings.HasPrefix(got, "s3://other?") {
		t.Errorf("BucketURL = %q", got)
	}
	env := strings.Join(s.Env(), "\n") + "\n"
	for _, kv := range []string{"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_REGION=" + Region, "AWS_EC2_METADATA_DISABLED=true"} {
		if !strings.Contains(env, kv+"\n") {
			t.Errorf("Env lacks %s", kv)
		}
	}
}

// roundTrip writes an object through objstore and reads it back.
func roundTrip(t *testing.T, s *Server, key string) {
	t.Helper()
	tg, err := objstore.Open(context.Background(), s.URL(""))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx := context.Background()
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

func TestStartKillRestart(t *testing.T) {
	s := Start(t)
	s.SetEnv(t)
	roundTrip(t, s, "a/b/c.txt")
	if _, err := os.Stat(filepath.Join(s.Dir(), Bucket, "a", "b", "c.txt")); err != nil {
		t.Errorf("the object is not a file under Dir: %v", err)
	}

	pid := s.cmd.Process.Pid
	s.Kill()
	if alive(pid) {
		t.Fatal("the process survived Kill")
	}
	if c, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
		c.Close()
		t.Fatal("something still listens after Kill")
	}

	s.Restart(t)
	if s.cmd.Process.Pid == pid {
		t.Fatal("Restart did not start a new process")
	}
	roundTrip(t, s, "a/b/c.txt") // the object survived, on the same port
	resp, err := http.Get(s.Endpoint() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func TestStoppedWhenTheTestEnds(t *testing.T) {
	var pid int
	t.Run("server", func(t *testing.T) {
		s := Start(t)
		pid = s.cmd.Process.Pid
	})
	if alive(pid) {
		t.Fatalf("versitygw %d still runs after its test ended", pid)
	}
}

func TestBinaryFromEnv(t *testing.T) {
	bin := binary(t)
	t.Setenv("DATABREW_VERSITYGW", bin)
	if got := binary(t); got != bin {
		t.Fatalf("binary = %q; want DATABREW_VERSITYGW's %q", got, bin)
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
}

// alive reports whether a process with this id exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
