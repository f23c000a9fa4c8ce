// Package s3test runs a real S3 server for tests: versitygw with its posix
// backend, listening on a free loopback port and storing objects in a
// temporary folder, where each top-level folder is a bucket.
//
// The versitygw binary is looked up, in order, in the DATABREW_VERSITYGW
// environment variable, in bin/tools/versitygw under the module root
// (where `make tools` installs it) and on PATH. When none has it, the
// harness builds it into bin/tools with `go install`, under a file lock so
// the test processes of several packages build it once; a test is skipped
// only when it cannot be built.
package s3test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// VersitygwVersion is the versitygw release the harness builds when it
// finds no binary; the Makefile's tools target installs the same one.
const VersitygwVersion = "v1.8.0"

// versitygwPackage is the command's import path.
const versitygwPackage = "github.com/versity/versitygw/cmd/versitygw"

// Bucket is the bucket every Server starts with.
const Bucket = "lake"

// The root user's keys and the region the server answers for.
const (
	AccessKey = "databrew-test"
	SecretKey = "databrew-test-secret"
	Region    = "us-east-1"
)

// modulePath names the module whose root holds bin/tools.
const modulePath = "github.com/databrew/databrew-stage"

// startTimeout bounds how long a server may take to answer.
const startTimeout = 15 * time.Second

// Server is one running versitygw. Its methods may be called from the
// test's goroutine and from cleanup functions, not concurrently with Kill
// or Restart.
type Server struct {
	bin  string
	dir  string
	iam  string // the folder of its users other than root
	addr string // 127.0.0.1:PORT

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	out  *lockedBuffer // the process's stdout and stderr
}

// Start runs a versitygw on a free port of 127.0.0.1 over a new temporary
// folder holding the bucket "lake", waits until it answers, and stops it
// when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := binary(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, Bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Server{bin: bin, dir: dir, iam: t.TempDir()}
	t.Cleanup(s.stop)
	var err error
	for range 3 { // another process may take the port between its choice and the start
		if s.addr, err = freeAddr(); err != nil {
			t.Fatal(err)
		}
		if err = s.start(); err == nil {
			return s
		}
	}
	t.Fatalf("s3test: start versitygw: %v", err)
	return nil
}

// Dir is the server's data folder; Dir()/lake holds the bucket's objects.
func (s *Server) Dir() string { return s.dir }

// Endpoint is the server's base URL, http://127.0.0.1:PORT.
func (s *Server) Endpoint() string { return "http://" + s.addr }

// URL is an output URL for the prefix in the bucket "lake", with the
// endpoint parameters the S3 client needs for this server:
// s3://lake/PREFIX?endpoint=...&use_path_style=true&region=...&disable_https=true.
func (s *Server) URL(prefix string) string { return s.BucketURL(Bucket, prefix) }

// BucketURL is like URL for any bucket, which need not exist.
func (s *Server) BucketURL(bucket, prefix string) string {
	q := url.Values{}
	q.Set("endpoint", s.Endpoint())
	q.Set("use_path_style", "true")
	q.Set("region", Region)
	q.Set("disable_https", "true")
	u := "s3://" + bucket
	if prefix = strings.TrimPrefix(prefix, "/"); prefix != "" {
		u += "/" + prefix
	}
	return u + "?" + q.Encode()
}

// Env is the environment an S3 client needs to reach this server as its
// root user, as KEY=VALUE entries to append to a subprocess's environment.
// It also keeps the AWS SDK away from the developer's own configuration
// and from the EC2 metadata service.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_SESSION_TOKEN=",
		"AWS_REGION=" + Region,
		"AWS_PROFILE=",
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_ENDPOINT_URL=",
		"AWS_ENDPOINT_URL_S3=",
	}
}

// SetEnv sets the variables of Env in this process for the rest of the
// test (with t.Setenv, so the test cannot run in parallel).
func (s *Server) SetEnv(t testing.TB) {
	t.Helper()
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// AddUser creates a user of the role "user" with the given keys: valid
// credentials that may not touch the bucket "lake", which root owns.
func (s *Server) AddUser(t testing.TB, access, secret string) {
	t.Helper()
	cmd := exec.Command(s.bin, "admin", "--access", AccessKey, "--secret", SecretKey, "--region", Region,
		"--endpoint-url", s.Endpoint(), "create-user", "--access", access, "--secret", secret, "--role", "user")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("s3test: create user %s: %v: %s", access, err, bytes.TrimSpace(out))
	}
}

// Kill stops the server with SIGKILL, as a crash would, and waits for the
// process to end. Its data stays in Dir.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
}

// Restart starts the server again on the same folder and port, after Kill
// (or kills it first), and waits until it answers.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	var err error
	deadline := time.Now().Add(startTimeout)
	for {
		// The port was ours a moment ago; it may linger briefly.
		if err = s.start(); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("s3test: restart versitygw: %v", err)
	}
}

// stop ends the server when the test ends.
func (s *Server) stop() { s.Kill() }

// killLocked kills the running process, if any, and waits for it.
func (s *Server) killLocked() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd, s.done = nil, nil
}

// start runs the process and waits until it answers HTTP requests.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
	out := &lockedBuffer{}
	cmd := exec.Command(s.bin,
		"--port", s.addr,
		"--access", AccessKey,
		"--secret", SecretKey,
		"--region", Region,
		"--iam-dir", s.iam,
		"--quiet",
		"posix", s.dir)
	// versitygw reads its settings from VGW_* and ROOT_* variables too:
	// start it from a clean environment so the flags above are the truth.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.cmd, s.done, s.out = cmd, done, out
	if err := waitReady(s.Endpoint(), done); err != nil {
		s.killLocked()
		return fmt.Errorf("%w; its output: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// waitReady polls the endpoint until any HTTP answer comes back (an
// unsigned request gets an S3 error, which is enough), the process exits
// or the time is up.
func waitReady(endpoint string, exited <-chan struct{}) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(startTimeout)
	for {
		resp, err := client.Get(endpoint + "/")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("versitygw exited before it answered")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("versitygw did not answer on %s within %v: %v", endpoint, startTimeout, err)
		}
	}
}

// freeAddr picks a free TCP port on 127.0.0.1.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// ClosedEndpoint returns an http://127.0.0.1:PORT base URL on which
// nothing listens, for tests of an unreachable server.
func ClosedEndpoint(t testing.TB) string {
	t.Helper()
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// binary finds or builds the versitygw binary, or skips the test.
func binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("DATABREW_VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("s3test: DATABREW_VERSITYGW: %v", err)
		}
		return p
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	toolsDir := filepath.Join(root, "bin", "tools")
	local := filepath.Join(toolsDir, "versitygw")
	if isExecutable(local) {
		return local
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if err := build(toolsDir, local); err != nil {
		t.Skipf("s3test: no versitygw binary (DATABREW_VERSITYGW, %s, PATH) and building it failed: %v", local, err)
	}
	return local
}

// build installs versitygw into toolsDir unless another process did while
// this one waited for the lock.
func build(toolsDir, bin string) error {
	if err := os.MkdirAll(toolsDir, 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(filepath.Join(toolsDir, ".versitygw.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if isExecutable(bin) {
		return nil
	}
	goBin, err := exec.LookPath("go") // go test puts its own go first on PATH
	if err != nil {
		return err
	}
	// Install beside the final name and rename it there, so a process
	// that checks for the binary without the lock never runs half of it.
	tmp, err := os.MkdirTemp(toolsDir, ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "install", versitygwPackage+"@"+VersitygwVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOFLAGS=-buildvcs=false")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go install %s@%s: %v: %s", versitygwPackage, VersitygwVersion, err, bytes.TrimSpace(out))
	}
	return os.Rename(filepath.Join(tmp, "versitygw"), bin)
}

// moduleRoot finds the folder of this module's go.mod, from the working
// directory (a package folder while tests run) upwards.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(data, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}

// isExecutable reports whether path is a regular file someone may run.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// lockedBuffer collects a process's output; the process writes it from
// exec's copying goroutines while a failing start reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 64<<10 { // keep the start of the output, not all of it
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
