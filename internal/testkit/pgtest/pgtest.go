// Package pgtest runs a PostgreSQL server for a test: Debian's postgresql
// (initdb and postgres from DATABREW_POSTGRES_BIN, /usr/lib/postgresql/*/bin
// or the PATH), on a free port of 127.0.0.1, in a new data folder, with a
// user whose password the client must give (as PGPASSWORD does). When no
// server is installed the test skips, saying how to install one, unless
// DATABREW_REQUIRE_POSTGRES is set (as .ci/run sets it once it installed
// one): then it fails.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
)

// User and Password are the server's user; the password goes through
// PGPASSWORD, never a URI.
const (
	User     = "stage"
	Password = "pgtest-secret"
)

// Server is a running PostgreSQL server.
type Server struct {
	// URI is the URI of its database "postgres", without the password:
	// postgres://stage@127.0.0.1:PORT/postgres.
	URI string
}

// Start initializes a data folder and runs a server on it until the test
// ends.
func Start(t testing.TB) *Server {
	t.Helper()
	skipWithout(t)
	s, err := start(t.Cleanup)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// skipWithout skips the test when no server is installed, or fails it
// when DATABREW_REQUIRE_POSTGRES says one must be.
func skipWithout(t testing.TB) {
	t.Helper()
	if _, err := binDir(); err != nil {
		if os.Getenv("DATABREW_REQUIRE_POSTGRES") != "" {
			t.Fatalf("pgtest: %v", err)
		}
		t.Skipf("pgtest: %v (apt-get install postgresql)", err)
	}
}

// start initializes a data folder and runs a server on it; cleanup
// registers what stops it and removes the folder.
func start(cleanup func(func())) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	cleanup(func() { _ = os.RemoveAll(dir) })
	cred, err := runAs(dir)
	if err != nil {
		return nil, err
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o644); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", User, "--pwfile", pw,
		"--auth", "scram-sha-256", "-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	srv := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+dir, "-c", "fsync=off")
	srv.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	srv.Stdout, srv.Stderr = log, log
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("pgtest: start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = srv.Wait(); close(done) }()
	cleanup(func() {
		_ = srv.Process.Signal(syscall.SIGTERM) // a smart shutdown: quick, no client is left
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = srv.Process.Kill()
			<-done
		}
		_ = log.Close()
	})
	s := &Server{URI: fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres", User, port)}
	if err := s.await(done, 30*time.Second); err != nil {
		b, _ := os.ReadFile(log.Name())
		return nil, fmt.Errorf("pgtest: %w\n%s", err, b)
	}
	return s, nil
}

// The server tests of a package share (see Shared).
var shared struct {
	sync.Mutex
	srv      *Server
	err      error
	started  bool
	stops    []func()
	database int
}

// Shared returns a database of its own, new and empty, on a server every
// test of the test binary shares: started by the first call, stopped by
// StopShared, which the package's TestMain calls after m.Run. A server
// per test costs an initdb each; a database costs a CREATE DATABASE.
func Shared(t testing.TB) *Server {
	t.Helper()
	skipWithout(t)
	shared.Lock()
	defer shared.Unlock()
	if !shared.started {
		shared.started = true
		shared.srv, shared.err = start(func(f func()) { shared.stops = append(shared.stops, f) })
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	shared.database++
	name := fmt.Sprintf("test_%d", shared.database)
	db, err := sql.Open("pgx", shared.srv.dsn())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	return &Server{URI: strings.TrimSuffix(shared.srv.URI, "/postgres") + "/" + name}
}

// StopShared stops the server Shared started, if it did.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	for i := len(shared.stops) - 1; i >= 0; i-- {
		shared.stops[i]()
	}
	shared.stops, shared.srv, shared.started = nil, nil, false
}

// dsn is the server's URI with the password, for the tests' own clients.
func (s *Server) dsn() string {
	return fmt.Sprintf("postgres://%s:%s@%s", User, Password, s.URI[len("postgres://"+User+"@"):])
}

// Getenv is an environment holding the server's password as PGPASSWORD.
func (s *Server) Getenv(key string) string {
	if key == "PGPASSWORD" {
		return Password
	}
	return ""
}

// await waits until the server accepts the user's password.
func (s *Server) await(exited chan struct{}, limit time.Duration) error {
	dsn := s.dsn()
	deadline := time.Now().Add(limit)
	for {
		db, err := sql.Open("pgx", dsn)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err = db.PingContext(ctx)
			cancel()
			_ = db.Close()
		}
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("postgres exited")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not answer within %v: %w", limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// binDir finds the folder of initdb and postgres.
func binDir() (string, error) {
	if d := os.Getenv("DATABREW_POSTGRES_BIN"); d != "" {
		return d, nil
	}
	if found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(found) > 0 {
		return filepath.Dir(found[len(found)-1]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server installed (initdb not found)")
}

// runAs is who the server runs as: postgres refuses root, so a test run
// as root gives dir to the user postgres (the Debian package makes it).
func runAs(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and there is no user postgres to run the server as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// freePort is a port of 127.0.0.1 no one listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
