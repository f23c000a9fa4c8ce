package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/internal/testkit/browsertest"
	"github.com/databrew/databrew-stage/internal/testkit/shopsites"
	"github.com/databrew/databrew-stage/render"
)

// TestStoppedStageLeavesNoBrowser kills the real binary with SIGKILL, and
// stops it with SIGTERM, while Chromium renders a page of s17 for it and
// hangs (stopped with SIGSTOP, it cannot notice its parent is gone):
// afterwards no process of the browser's process group is left, and none
// runs with its profile folder, not even a zombie.
func TestStoppedStageLeavesNoBrowser(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	_, err = render.Find(nil, nil)
	browsertest.Need(t, err)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			shop, err := shopsites.New(shopsites.Rendered, shopsites.Options{Products: 8, PerPage: 8})
			if err != nil {
				t.Fatal(err)
			}
			// Product pages never answer: the browser is mid-load when
			// the stage is stopped.
			release := make(chan struct{})
			var items atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/shop/p/") {
					items.Add(1)
					select {
					case <-release:
					case <-r.Context().Done():
					}
					return
				}
				shop.ServeHTTP(w, r)
			}))
			defer srv.Close()
			defer close(release)
			cfgPath := filepath.Join(t.TempDir(), "shop.toml")
			if err := os.WriteFile(cfgPath, []byte(shop.Config(srv.URL)), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "run", "--json", cfgPath)
			cmd.Env = append(os.Environ(), "GORACE="+subprocessGORACE())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			await(t, "a product page requested by the browser", func() bool { return items.Load() > 0 }, &stderr)
			browsers := childBrowsers(cmd.Process.Pid)
			if len(browsers) == 0 {
				t.Fatalf("no browser process under the stage (pid %d)", cmd.Process.Pid)
			}
			if n := len(leftovers(browsers)); n < 2 {
				t.Fatalf("the browser's process group shows %d processes; a running Chromium has its helpers in it", n)
			}
			// A hung browser cannot notice that the stage is gone: the
			// stage must see to it.
			for _, b := range browsers {
				if err := syscall.Kill(b.pid, syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			deadline := time.Now().Add(30 * time.Second)
			for {
				left := leftovers(browsers)
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after %s of the stage, browser processes are left: %v", sig, left)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// proc is a process as /proc/PID/stat and cmdline show it.
type proc struct {
	pid, ppid, pgrp int
	state, comm     string
	cmdline         string
}

// processes lists the machine's processes.
func processes() []proc {
	entries, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 3 {
			continue
		}
		p := proc{pid: pid, comm: s[open+1 : end], state: f[0]}
		p.ppid, _ = strconv.Atoi(f[1])
		p.pgrp, _ = strconv.Atoi(f[2])
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		p.cmdline = strings.ReplaceAll(string(cmdline), "\x00", " ")
		out = append(out, p)
	}
	return out
}

// childBrowsers are the browser processes the stage started: its children
// named chrom*, each the leader of its own process group.
func childBrowsers(stagePID int) []proc {
	var out []proc
	for _, p := range processes() {
		if p.ppid == stagePID && strings.HasPrefix(p.comm, "chrom") {
			out = append(out, p)
		}
	}
	return out
}

// leftovers are the processes, zombies included, in the browsers'
// process groups or running with their profile folders.
func leftovers(browsers []proc) []proc {
	var dirs []string
	groups := map[int]bool{}
	for _, b := range browsers {
		groups[b.pgrp] = true
		for _, arg := range strings.Fields(b.cmdline) {
			if dir, ok := strings.CutPrefix(arg, "--user-data-dir="); ok {
				dirs = append(dirs, dir)
			}
		}
	}
	var out []proc
	for _, p := range processes() {
		if groups[p.pgrp] {
			out = append(out, p)
			continue
		}
		for _, d := range dirs {
			if strings.Contains(p.cmdline, "--user-data-dir="+d) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}
