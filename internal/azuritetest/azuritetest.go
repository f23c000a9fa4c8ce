// Package azuritetest runs a real Azure Blob Storage server for tests:
// Azurite's blob service, listening on a free loopback port and storing
// its data in a temporary folder, with the container "lake" created.
//
// The azurite-blob program is looked up, in order, in the DATABREW_AZURITE
// environment variable, in bin/tools/azurite/node_modules/.bin/azurite-blob
// under the module root (where `make tools` installs it) and on PATH. When
// none has it, the harness installs it into bin/tools/azurite with npm,
// under a file lock so the test processes of several packages install it
// once; a test is skipped only when it cannot be installed (no npm, or
// the install failed).
package azuritetest

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

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// AzuriteVersion is the Azurite release the harness installs when it
// finds no azurite-blob; the Makefile's tools target installs the same one.
const AzuriteVersion = "3.37.0"

// Container is the container every Server starts with.
const Container = "lake"

// Account and Key are Azurite's well-known development account, the only
// one it has unless AZURITE_ACCOUNTS says otherwise (the harness starts it
// without that variable).
const (
	Account = "devstoreaccount1"
	Key     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// modulePath names the module whose root holds bin/tools.
const modulePath = "github.com/databrew/databrew-stage"

// startTimeout bounds how long a server may take to answer.
const startTimeout = 30 * time.Second

// installTimeout bounds the npm install.
const installTimeout = 10 * time.Minute

// Server is one running Azurite blob service. Its methods may be called
// from the test's goroutine and from cleanup functions, not concurrently
// with Kill.
type Server struct {
	bin  string
	dir  string
	addr string // 127.0.0.1:PORT

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	out  *lockedBuffer // the process's stdout and stderr
}

// Start runs Azurite's blob service on a free port of 127.0.0.1 over a new
// temporary folder, waits until it answers, creates the container "lake",
// and stops the server when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{bin: binary(t), dir: t.TempDir()}
	t.Cleanup(s.stop)
	var err error
	for range 3 { // another process may take the port between its choice and the start
		if s.addr, err = freeAddr(); err != nil {
			t.Fatal(err)
		}
		if err = s.start(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("azuritetest: start azurite-blob: %v", err)
	}
	if err := s.CreateContainer(Container); err != nil {
		t.Fatalf("azuritetest: %v", err)
	}
	return s
}

// Dir is the server's data folder.
func (s *Server) Dir() string { return s.dir }

// Endpoint is the server's base URL, http://127.0.0.1:PORT.
func (s *Server) Endpoint() string { return "http://" + s.addr }

// ServiceURL is the blob service URL of the development account,
// http://127.0.0.1:PORT/devstoreaccount1: Azurite takes the account from
// the path's first segment.
func (s *Server) ServiceURL() string { return s.Endpoint() + "/" + Account }

// URL is an output URL for the prefix in the container "lake", with the
// parameters gocloud's azblob opener needs for this server:
// azblob://lake/PREFIX?domain=127.0.0.1:PORT&localemu=true&protocol=http.
// localemu puts the account into the path rather than the host name, and
// admits http and a loopback domain. The account and its key come from
// the environment: see Env.
func (s *Server) URL(prefix string) string { return s.ContainerURL(Container, prefix) }

// ContainerURL is like URL for any container, which need not exist.
func (s *Server) ContainerURL(name, prefix string) string {
	q := url.Values{}
	q.Set("domain", s.addr)
	q.Set("localemu", "true")
	q.Set("protocol", "http")
	u := "azblob://" + name
	if prefix = strings.TrimPrefix(prefix, "/"); prefix != "" {
		u += "/" + prefix
	}
	return u + "?" + q.Encode()
}

// Env is the environment gocloud's azblob opener needs to reach this
// server as the development account, as KEY=VALUE entries to append to a
// subprocess's environment. It empties every other variable the opener
// reads, so a developer's own Azure settings (a SAS token, a connection
// string, a storage domain, a CDN) cannot redirect or change its
// requests; with an account and a key set, Azure's default credential
// chain (AZURE_CLIENT_ID and the like) is not used.
func (s *Server) Env() []string {
	return []string{
		"AZURE_STORAGE_ACCOUNT=" + Account,
		"AZURE_STORAGE_KEY=" + Key,
		"AZURE_STORAGE_SAS_TOKEN=",
		"AZURE_STORAGE_CONNECTION_STRING=",
		"AZURE_STORAGEBLOB_CONNECTIONSTRING=",
		"AZURE_STORAGE_DOMAIN=",
		"AZURE_STORAGE_PROTOCOL=",
		"AZURE_STORAGE_IS_CDN=",
		"AZURE_STORAGE_IS_LOCAL_EMULATOR=",
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

// CreateContainer creates a container as the development account.
func (s *Server) CreateContainer(name string) error {
	cred, err := azblob.NewSharedKeyCredential(Account, Key)
	if err != nil {
		return err
	}
	c, err := container.NewClientWithSharedKeyCredential(s.ServiceURL()+"/"+name, cred, nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if _, err := c.Create(ctx, nil); err != nil {
		return fmt.Errorf("create container %q: %w", name, err)
	}
	return nil
}

// Kill stops the server with SIGKILL, as a crash would, and waits for the
// process to end. Azurite keeps its metadata (containers, blob lists) in
// memory and saves it to Dir every five seconds, so a killed server loses
// what changed since; there is no Restart for that reason.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
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
	host, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		return err
	}
	out := &lockedBuffer{}
	cmd := exec.Command(s.bin,
		"--blobHost", host,
		"--blobPort", port,
		"--location", s.dir,
		// Azurite refuses requests of an API version newer than its
		// own; the Go SDK may be ahead of the pinned release.
		"--skipApiVersionCheck",
		// Without this, Azurite sends usage data to Microsoft.
		"--disableTelemetry",
		"--silent")
	// Azurite reads AZURITE_ACCOUNTS (which replaces the development
	// account), AZURITE_DB and more: start it from a clean environment so
	// the flags above are the truth.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir}
	cmd.Dir = s.dir
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
// unsigned request gets an Azure error, which is enough), the process
// exits or the time is up.
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
			return errors.New("azurite-blob exited before it answered")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("azurite-blob did not answer on %s within %v: %v", endpoint, startTimeout, err)
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

// binary finds or installs azurite-blob, or skips the test.
func binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("DATABREW_AZURITE"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("azuritetest: DATABREW_AZURITE: %v", err)
		}
		return p
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("azuritetest: %v", err)
	}
	toolsDir := filepath.Join(root, "bin", "tools")
	local := filepath.Join(toolsDir, "azurite", "node_modules", ".bin", "azurite-blob")
	if isExecutable(local) {
		return local
	}
	if p, err := exec.LookPath("azurite-blob"); err == nil {
		return p
	}
	if err := install(toolsDir, local); err != nil {
		t.Skipf("azuritetest: no azurite-blob (DATABREW_AZURITE, %s, PATH) and installing Azurite %s with npm failed: %v",
			local, AzuriteVersion, err)
	}
	return local
}

// install installs Azurite into toolsDir/azurite with npm, unless another
// process did while this one waited for the lock.
func install(toolsDir, bin string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(toolsDir, 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(filepath.Join(toolsDir, ".azurite.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if isExecutable(bin) {
		return nil
	}
	// Install beside the final folder and rename it there, so a process
	// that checks for the program without the lock never runs half of
	// an install. A folder without the program is a failed install.
	final := filepath.Join(toolsDir, "azurite")
	if err := os.RemoveAll(final); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(toolsDir, ".azurite-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--save-exact", "--no-audit", "--no-fund",
		"azurite@"+AzuriteVersion)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install azurite@%s: %v: %s", AzuriteVersion, err, bytes.TrimSpace(out))
	}
	if !isExecutable(filepath.Join(tmp, "node_modules", ".bin", "azurite-blob")) {
		return fmt.Errorf("npm install azurite@%s left no node_modules/.bin/azurite-blob", AzuriteVersion)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp made it 0700
		return err
	}
	return os.Rename(tmp, final)
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

// isExecutable reports whether path is a regular file someone may run
// (following symbolic links, as npm's .bin entries are).
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
