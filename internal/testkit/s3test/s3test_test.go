//go:build unix

package s3test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/testkit/objstoretest"
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

// TestStartKillRestart keeps an object through a crash of the server and
// its restart on the same folder and port.
func TestStartKillRestart(t *testing.T) {
	s := Start(t)
	s.SetEnv(t)
	objstoretest.RoundTrip(t, s.URL(""), "a/b/c.txt")
	if _, err := os.Stat(filepath.Join(s.Dir(), Bucket, "a", "b", "c.txt")); err != nil {
		t.Errorf("the object is not a file under Dir: %v", err)
	}

	s.Kill()
	if c, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
		c.Close()
		t.Fatal("something still listens after Kill")
	}
	s.Restart(t)
	objstoretest.RoundTrip(t, s.URL(""), "a/b/c.txt") // the object survived, on the same port
}
