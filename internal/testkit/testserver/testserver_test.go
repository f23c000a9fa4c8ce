//go:build unix

package testserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fakeEnv names the variable that turns the test binary into a fake
// server: "serve ADDR" answers HTTP on ADDR, "fail" writes a line and
// exits, "hang" neither listens nor exits.
const fakeEnv = "TESTSERVER_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		fake(mode)
	}
	os.Exit(m.Run())
}

// fake runs the test binary as a fake server and does not return.
func fake(mode string) {
	switch verb, addr, _ := strings.Cut(mode, " "); verb {
	case "serve":
		err := http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "pid %d", os.Getpid())
		}))
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	case "fail":
		fmt.Fprintln(os.Stderr, "fake: no such option")
		os.Exit(2)
	case "hang":
		time.Sleep(time.Hour)
	}
	os.Exit(3)
}

// fakeSpec runs the test binary as a fake server in mode.
func fakeSpec(mode string, timeout time.Duration) Spec {
	return Spec{
		Name: "fake",
		Command: func(addr string) *exec.Cmd {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), fakeEnv+"="+strings.ReplaceAll(mode, "ADDR", addr))
			return cmd
		},
		StartTimeout: timeout,
	}
}

// get fetches the endpoint's root and returns the body.
func get(t *testing.T, endpoint string) string {
	t.Helper()
	resp, err := http.Get(endpoint + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// listening reports whether something accepts connections on addr.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
	}
	return err == nil
}

// alive reports whether a process with this id exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func TestStartKillRestart(t *testing.T) {
	p, err := Start(t, fakeSpec("serve ADDR", 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") || p.Endpoint() != "http://"+p.Addr() {
		t.Fatalf("Addr %q, Endpoint %q", p.Addr(), p.Endpoint())
	}
	pid := p.pid()
	if got := get(t, p.Endpoint()); got != fmt.Sprintf("pid %d", pid) {
		t.Fatalf("the server says %q; want pid %d", got, pid)
	}

	p.Kill()
	if alive(pid) {
		t.Fatal("the process survived Kill")
	}
	if listening(p.Addr()) {
		t.Fatal("something still listens after Kill")
	}
	p.Kill() // killed already: nothing to do

	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	pid2 := p.pid()
	if pid2 == pid || pid2 == 0 {
		t.Fatalf("Restart ran process %d after %d", pid2, pid)
	}
	if got := get(t, p.Endpoint()); got != fmt.Sprintf("pid %d", pid2) {
		t.Fatalf("after Restart the server says %q; want pid %d", got, pid2)
	}
	if err := p.Restart(); err != nil { // running: killed, then started again
		t.Fatal(err)
	}
	if alive(pid2) {
		t.Fatal("Restart left the running process alive")
	}
}

func TestStoppedWhenTheTestEnds(t *testing.T) {
	var pid int
	var addr string
	t.Run("server", func(t *testing.T) {
		p, err := Start(t, fakeSpec("serve ADDR", 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		pid, addr = p.pid(), p.Addr()
	})
	if pid == 0 {
		t.Fatal("no server started")
	}
	if alive(pid) {
		t.Fatalf("server %d still runs after its test ended", pid)
	}
	if listening(addr) {
		t.Fatal("something still listens after the test ended")
	}
}

func TestStartFails(t *testing.T) {
	_, err := Start(t, fakeSpec("fail", 10*time.Second))
	if err == nil || !strings.Contains(err.Error(), "fake exited before it answered; its output: fake: no such option") {
		t.Fatalf("Start = %v; want the exit and the output", err)
	}
	start := time.Now()
	_, err = Start(t, fakeSpec("hang", 200*time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "fake did not answer on http://127.0.0.1:") {
		t.Fatalf("Start = %v; want no answer", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("three starts of 200ms took %v", d)
	}
}

func TestClosedEndpoint(t *testing.T) {
	e := ClosedEndpoint(t)
	if !strings.HasPrefix(e, "http://127.0.0.1:") {
		t.Fatalf("ClosedEndpoint = %q", e)
	}
	if listening(strings.TrimPrefix(e, "http://")) {
		t.Fatalf("something listens on %s", e)
	}
}

func TestStoreURL(t *testing.T) {
	q := url.Values{"b": {"2"}, "a": {"1 2"}}
	for prefix, want := range map[string]string{
		"":               "s3://lake?a=1+2&b=2",
		"/":              "s3://lake?a=1+2&b=2",
		"exports/shop":   "s3://lake/exports/shop?a=1+2&b=2",
		"/exports/shop/": "s3://lake/exports/shop/?a=1+2&b=2",
	} {
		if got := StoreURL("s3", "lake", prefix, q); got != want {
			t.Errorf("StoreURL(%q) = %q; want %q", prefix, got, want)
		}
	}
}

func TestSetEnv(t *testing.T) {
	t.Setenv("TESTSERVER_A", "before")
	SetEnv(t, []string{"TESTSERVER_A=", "TESTSERVER_B=x=y"})
	if a, ok := os.LookupEnv("TESTSERVER_A"); a != "" || !ok {
		t.Errorf("TESTSERVER_A = %q, %v; want set and empty", a, ok)
	}
	if b := os.Getenv("TESTSERVER_B"); b != "x=y" {
		t.Errorf("TESTSERVER_B = %q; want x=y", b)
	}
}

// fakeTool is a tool whose install writes a shell script at path,
// counting the installs, or fails with failure when that is set.
func fakeTool(path string, installs *atomic.Int32, failure string) Tool {
	return Tool{
		Name:   "testserver-fake-tool",
		EnvVar: "TESTSERVER_FAKE_TOOL",
		Path:   path,
		Install: func(ctx context.Context, dir string) (*exec.Cmd, error) {
			installs.Add(1)
			if failure != "" {
				return exec.CommandContext(ctx, "sh", "-c", "echo "+failure+"; exit 1"), nil
			}
			p := filepath.Join(dir, filepath.FromSlash(path))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, err
			}
			// Slow enough that concurrent finds overlap.
			return exec.CommandContext(ctx, "sh", "-c", `sleep 0.2; printf '#!/bin/sh\n' >"$1"; chmod 755 "$1"`, "sh", p), nil
		},
	}
}

func TestFindInstallsOnce(t *testing.T) {
	for _, path := range []string{"prog", "pkg/node_modules/.bin/prog"} {
		t.Run(path, func(t *testing.T) {
			toolsDir := filepath.Join(t.TempDir(), "bin", "tools")
			var installs atomic.Int32
			tool := fakeTool(path, &installs, "")
			want := filepath.Join(toolsDir, filepath.FromSlash(path))
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					if got, err := tool.find(toolsDir); err != nil || got != want {
						t.Errorf("find = %q, %v; want %q", got, err, want)
					}
				})
			}
			wg.Wait()
			if n := installs.Load(); n != 1 {
				t.Fatalf("%d installs; want one", n)
			}
			if !isExecutable(want) {
				t.Fatalf("%s is not executable", want)
			}
			entries, err := os.ReadDir(toolsDir)
			if err != nil {
				t.Fatal(err)
			}
			top, _, _ := strings.Cut(path, "/")
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if got := strings.Join(names, " "); got != "."+top+".lock "+top {
				t.Fatalf("bin/tools holds %q; want the lock and %s", got, top)
			}
		})
	}
}

func TestFindInstallFails(t *testing.T) {
	toolsDir := t.TempDir()
	// A failed install left its folder behind: it is replaced.
	if err := os.Mkdir(filepath.Join(toolsDir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	var installs atomic.Int32
	_, err := fakeTool("pkg/prog", &installs, "disk full").find(toolsDir)
	if err == nil || !strings.Contains(err.Error(), "sh -c echo disk full; exit 1: exit status 1: disk full") {
		t.Fatalf("find = %v; want the install's error and output", err)
	}
	if _, err := os.Stat(filepath.Join(toolsDir, "pkg")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed install left pkg (%v)", err)
	}

	tool := fakeTool("prog", &installs, "")
	tool.Install = func(ctx context.Context, dir string) (*exec.Cmd, error) {
		return exec.CommandContext(ctx, "true"), nil
	}
	if _, err := tool.find(toolsDir); err == nil || !strings.Contains(err.Error(), "true left no prog") {
		t.Fatalf("find = %v; want the missing program", err)
	}
}

func TestFindFromEnvAndToolsDir(t *testing.T) {
	toolsDir := t.TempDir()
	var installs atomic.Int32
	tool := fakeTool("prog", &installs, "")
	bin := filepath.Join(toolsDir, "prog")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := tool.find(toolsDir); err != nil || got != bin {
		t.Fatalf("find = %q, %v; want %q", got, err, bin)
	}
	other := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(tool.EnvVar, other)
	if got := tool.Find(t); got != other {
		t.Fatalf("Find = %q; want %s's %q", got, tool.EnvVar, other)
	}
	if n := installs.Load(); n != 0 {
		t.Fatalf("%d installs; want none", n)
	}
}

func TestModuleRoot(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "testkit", "testserver")); err != nil {
		t.Fatal(err)
	}
}
