// Package testserver holds what the real-server test harnesses
// (internal/testkit/s3test, internal/testkit/azuritetest) share: running a server process
// on a free loopback port until it answers HTTP, killing and restarting
// it, and finding the server program or installing it into bin/tools
// under the module root, under a file lock so the test processes of
// several packages install it once.
package testserver

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Spec says how to run a server.
type Spec struct {
	// Name names the program in errors, such as "versitygw".
	Name string
	// Command builds the command that serves HTTP on addr,
	// 127.0.0.1:PORT. Start sets its Stdout, Stderr and SysProcAttr.
	Command func(addr string) *exec.Cmd
	// StartTimeout bounds how long the server may take to answer.
	StartTimeout time.Duration
}

// Process is one server process and the address it serves on, which
// stays the same across Restart. Its methods may be called from the
// test's goroutine and from cleanup functions.
type Process struct {
	spec Spec
	addr string // 127.0.0.1:PORT

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// Start runs the spec's command on a free port of 127.0.0.1, waits until
// it answers HTTP requests, and kills it when the test ends. It tries
// three ports, as another process may take one between its choice and
// the start, and returns the last error, the output of the process
// included, when none served.
func Start(t testing.TB, spec Spec) (*Process, error) {
	t.Helper()
	p := &Process{spec: spec}
	t.Cleanup(p.Kill)
	var err error
	for range 3 {
		if p.addr, err = freeAddr(); err != nil {
			return nil, err
		}
		if err = p.start(); err == nil {
			return p, nil
		}
	}
	return nil, err
}

// Addr is the address the server listens on, 127.0.0.1:PORT.
func (p *Process) Addr() string { return p.addr }

// Endpoint is the server's base URL, http://127.0.0.1:PORT.
func (p *Process) Endpoint() string { return "http://" + p.addr }

// Kill stops the server with SIGKILL, as a crash would, and waits for the
// process to end. It does nothing when the process is not running.
func (p *Process) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.killLocked()
}

// Restart kills the server if it runs and starts it again on the same
// address, retrying while the port lingers, until it answers or the
// spec's StartTimeout is up.
func (p *Process) Restart() error {
	p.Kill()
	deadline := time.Now().Add(p.spec.StartTimeout)
	for {
		// The port was ours a moment ago; it may linger briefly.
		err := p.start()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pid is the running process's id, or 0.
func (p *Process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// killLocked kills the running process, if any, and waits for it.
func (p *Process) killLocked() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	p.cmd, p.done = nil, nil
}

// start runs the process and waits until it answers HTTP requests.
func (p *Process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.killLocked()
	out := &lockedBuffer{}
	cmd := p.spec.Command(p.addr)
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
	p.cmd, p.done = cmd, done
	if err := p.waitReady(done); err != nil {
		p.killLocked()
		return fmt.Errorf("%w; its output: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// waitReady polls the endpoint until any HTTP answer comes back (an
// unsigned request to a storage server gets an error, which is enough),
// the process exits or the time is up.
func (p *Process) waitReady(exited <-chan struct{}) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(p.spec.StartTimeout)
	for {
		resp, err := client.Get(p.Endpoint() + "/")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New(p.spec.Name + " exited before it answered")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer on %s within %v: %v", p.spec.Name, p.Endpoint(), p.spec.StartTimeout, err)
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

// StoreURL is the output URL scheme://bucket/prefix?query, or
// scheme://bucket?query for an empty prefix; a leading slash of prefix
// is dropped.
func StoreURL(scheme, bucket, prefix string, query url.Values) string {
	u := scheme + "://" + bucket
	if prefix = strings.TrimPrefix(prefix, "/"); prefix != "" {
		u += "/" + prefix
	}
	return u + "?" + query.Encode()
}

// SetEnv sets the KEY=VALUE entries of env in this process for the rest
// of the test (with t.Setenv, so the test cannot run in parallel).
func SetEnv(t testing.TB, env []string) {
	t.Helper()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}
