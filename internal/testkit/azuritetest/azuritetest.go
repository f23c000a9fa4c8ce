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
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/databrew/databrew-stage/internal/testkit/testserver"
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

// startTimeout bounds how long a server may take to answer.
const startTimeout = 30 * time.Second

// Server is one running Azurite blob service. Its methods may be called
// from the test's goroutine and from cleanup functions, not concurrently
// with Kill.
type Server struct {
	bin  string
	dir  string
	addr string // 127.0.0.1:PORT
	proc *testserver.Process
}

// azuriteBlob is the program and how to install it: npm installs Azurite
// into the folder azurite, as the Makefile's tools target does.
var azuriteBlob = testserver.Tool{
	Name:   "azurite-blob",
	EnvVar: "DATABREW_AZURITE",
	Path:   "azurite/node_modules/.bin/azurite-blob",
	Install: func(ctx context.Context, dir string) (*exec.Cmd, error) {
		npm, err := exec.LookPath("npm")
		if err != nil {
			return nil, err
		}
		prefix := filepath.Join(dir, "azurite")
		if err := os.Mkdir(prefix, 0o755); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, npm, "install", "--prefix", prefix, "--save-exact", "--no-audit", "--no-fund",
			"azurite@"+AzuriteVersion)
		cmd.Dir = prefix
		return cmd, nil
	},
}

// Start runs Azurite's blob service on a free port of 127.0.0.1 over a new
// temporary folder, waits until it answers, creates the container "lake",
// and stops the server when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{bin: azuriteBlob.Find(t), dir: t.TempDir()}
	p, err := testserver.Start(t, testserver.Spec{Name: "azurite-blob", Command: s.command, StartTimeout: startTimeout})
	if err != nil {
		t.Fatalf("azuritetest: start azurite-blob: %v", err)
	}
	s.proc, s.addr = p, p.Addr()
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
	return testserver.StoreURL("azblob", name, prefix, q)
}

// ConnectionString is the development account's connection string for
// this server, as Azurite documents it: DefaultEndpointsProtocol=http, the
// account and its key, and a BlobEndpoint naming the account in its path.
func (s *Server) ConnectionString() string {
	return "DefaultEndpointsProtocol=http;AccountName=" + Account + ";AccountKey=" + Key +
		";BlobEndpoint=" + s.ServiceURL() + ";"
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
	testserver.SetEnv(t, s.Env())
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
func (s *Server) Kill() { s.proc.Kill() }

// command is azurite-blob's command line serving on addr.
func (s *Server) command(addr string) *exec.Cmd {
	host, port, _ := net.SplitHostPort(addr) // testserver's 127.0.0.1:PORT
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
	return cmd
}
