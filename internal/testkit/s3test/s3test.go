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
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/testkit/testserver"
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
	proc *testserver.Process
}

// versitygw is the program and how to build it.
var versitygw = testserver.Tool{
	Name:   "versitygw",
	EnvVar: "DATABREW_VERSITYGW",
	Path:   "versitygw",
	Install: func(ctx context.Context, dir string) (*exec.Cmd, error) {
		goBin, err := exec.LookPath("go") // go test puts its own go first on PATH
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, goBin, "install", versitygwPackage+"@"+VersitygwVersion)
		cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-buildvcs=false")
		cmd.Dir = dir
		return cmd, nil
	},
}

// Start runs a versitygw on a free port of 127.0.0.1 over a new temporary
// folder holding the bucket "lake", waits until it answers, and stops it
// when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{bin: versitygw.Find(t), dir: t.TempDir(), iam: t.TempDir()}
	if err := os.Mkdir(filepath.Join(s.dir, Bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := testserver.Start(t, testserver.Spec{Name: "versitygw", Command: s.command, StartTimeout: startTimeout})
	if err != nil {
		t.Fatalf("s3test: start versitygw: %v", err)
	}
	s.proc, s.addr = p, p.Addr()
	return s
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
	return testserver.StoreURL("s3", bucket, prefix, q)
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
	testserver.SetEnv(t, s.Env())
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
func (s *Server) Kill() { s.proc.Kill() }

// Restart starts the server again on the same folder and port, after Kill
// (or kills it first), and waits until it answers.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.proc.Restart(); err != nil {
		t.Fatalf("s3test: restart versitygw: %v", err)
	}
}

// command is versitygw's command line serving on addr.
func (s *Server) command(addr string) *exec.Cmd {
	cmd := exec.Command(s.bin,
		"--port", addr,
		"--access", AccessKey,
		"--secret", SecretKey,
		"--region", Region,
		"--iam-dir", s.iam,
		"--quiet",
		"posix", s.dir)
	// versitygw reads its settings from VGW_* and ROOT_* variables too:
	// start it from a clean environment so the flags above are the truth.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir}
	return cmd
}

// ClosedEndpoint returns an http://127.0.0.1:PORT base URL on which
// nothing listens, for tests of an unreachable server.
func ClosedEndpoint(t testing.TB) string {
	t.Helper()
	return testserver.ClosedEndpoint(t)
}
