// Package memcgroup runs a benchmark's process in a memory cgroup, as
// Kubernetes limits a pod, and reads what the cgroup saw of it.
package memcgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Group is a memory cgroup a process runs in, as Kubernetes limits a pod:
// the kernel charges the process's anonymous memory and the
// page cache it brings in (its mmapped bbolt file, the files it writes) to
// the cgroup, reclaims page cache when the limit is reached and kills the
// process when what cannot be reclaimed exceeds it. cgroup v1 (the memory
// controller at /sys/fs/cgroup/memory: memory.limit_in_bytes, with
// memory.memsw.limit_in_bytes set as well when present so that swap cannot
// hide usage) and v2 (memory.max, memory.swap.max) are supported; the
// caller must be allowed to create cgroups (root).
type Group struct {
	dir string
	v2  bool
}

// Stats is what a cgroup saw of a run.
type Stats struct {
	Peak    int64 // bytes: memory.max_usage_in_bytes (v1), memory.peak (v2)
	Failcnt int64 // times usage hit the limit: memory.failcnt (v1), the max count of memory.events (v2)
	OOMKill int64 // processes the OOM killer killed in it (oom_kill)
}

// Where the cgroup hierarchies are mounted.
const (
	cgroupV1Memory = "/sys/fs/cgroup/memory"
	cgroupV2Root   = "/sys/fs/cgroup"
)

// New creates the memory cgroup databrew-bench-<pid>-<n> at the root of
// the hierarchy, limited to limit bytes (0: no limit, to measure what a
// run uses).
func New(limit int64, n int) (*Group, error) {
	name := fmt.Sprintf("databrew-bench-%d-%d", os.Getpid(), n)
	var c Group
	switch {
	case exists(filepath.Join(cgroupV1Memory, "memory.limit_in_bytes")):
		c.dir = filepath.Join(cgroupV1Memory, name)
	case exists(filepath.Join(cgroupV2Root, "cgroup.controllers")):
		c.dir, c.v2 = filepath.Join(cgroupV2Root, name), true
	default:
		return nil, errors.New("no cgroup memory controller under " + cgroupV2Root)
	}
	if err := os.Mkdir(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cgroup: %w", err)
	}
	if err := c.limit(limit); err != nil {
		_ = c.Remove()
		return nil, err
	}
	return &c, nil
}

// limit sets the cgroup's memory limit, and its memory+swap limit to the
// same, when limit is positive.
func (c *Group) limit(limit int64) error {
	if limit <= 0 {
		return nil
	}
	v := strconv.FormatInt(limit, 10)
	if c.v2 {
		if err := c.write("memory.max", v); err != nil {
			return err
		}
		if exists(filepath.Join(c.dir, "memory.swap.max")) {
			return c.write("memory.swap.max", "0")
		}
		return nil
	}
	// memory.memsw.limit_in_bytes may not be below memory.limit_in_bytes.
	if err := c.write("memory.limit_in_bytes", v); err != nil {
		return err
	}
	if exists(filepath.Join(c.dir, "memory.memsw.limit_in_bytes")) {
		return c.write("memory.memsw.limit_in_bytes", v)
	}
	return nil
}

// Wrap makes cmd start in the cgroup: a shell writes its own pid to the
// cgroup's cgroup.procs and then execs cmd's program, so the process is in
// the cgroup before the program's first allocation and keeps cmd's pid.
func (c *Group) Wrap(cmd *exec.Cmd) {
	procs := filepath.Join(c.dir, "cgroup.procs")
	args := append([]string{"/bin/sh", "-c", `echo $$ > "$0" && exec "$@"`, procs, cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = args[0], args
}

// Stats reads what the cgroup saw.
func (c *Group) Stats() (Stats, error) {
	var s Stats
	var err error
	if c.v2 {
		if s.Peak, err = c.readInt("memory.peak"); err != nil {
			return s, err
		}
		ev, err := c.readKeyed("memory.events")
		s.Failcnt, s.OOMKill = ev["max"], ev["oom_kill"]
		return s, err
	}
	if s.Peak, err = c.readInt("memory.max_usage_in_bytes"); err != nil {
		return s, err
	}
	if s.Failcnt, err = c.readInt("memory.failcnt"); err != nil {
		return s, err
	}
	oom, err := c.readKeyed("memory.oom_control")
	s.OOMKill = oom["oom_kill"]
	return s, err
}

// Remove removes the cgroup; it must hold no process.
func (c *Group) Remove() error { return os.Remove(c.dir) }

func (c *Group) write(file, v string) error {
	if err := os.WriteFile(filepath.Join(c.dir, file), []byte(v), 0o644); err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	return nil
}

func (c *Group) readInt(file string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, file))
	if err != nil {
		return 0, fmt.Errorf("cgroup: %w", err)
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// readKeyed reads a file of "key value" lines.
func (c *Group) readKeyed(file string) (map[string]int64, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, file))
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	m := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok {
			m[k], _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return m, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// ParseSize parses a size such as 64MiB, 40MiB, 1GiB or a number of bytes.
func ParseSize(s string) (int64, error) {
	mult := int64(1)
	num := s
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size such as 64MiB", s)
	}
	return n * mult, nil
}
