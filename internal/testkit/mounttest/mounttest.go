// Package mounttest mounts small tmpfs file systems for tests that need a
// real mount point, a full disk or a read-only folder. Mounting needs root
// and the mount command; without them the test is skipped with a message.
// Every mount is removed when the test ends, whether it passed or not.
package mounttest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs on dir, creating dir, with the mount options given
// (such as "size=256k" or "ro"), and unmounts it when the test ends.
func Tmpfs(t testing.TB, dir string, options ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting a tmpfs needs root")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"-t", "tmpfs"}
	if len(options) > 0 {
		args = append(args, "-o", strings.Join(options, ","))
	}
	if out, err := exec.Command("mount", append(args, "tmpfs", dir)...).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs on %s: %v: %s", dir, err, out)
	}
	t.Cleanup(func() { unmount(t, dir) })
}

// Remount changes the options of the tmpfs on dir, such as "size=4m" to
// free space or "rw" to make it writable again.
func Remount(t testing.TB, dir string, options ...string) {
	t.Helper()
	opts := strings.Join(append([]string{"remount"}, options...), ",")
	if out, err := exec.Command("mount", "-o", opts, dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s with %s: %v: %s", dir, opts, err, out)
	}
}

// Fill writes a file in dir until the file system holding dir has no space
// left, and returns the file's path: removing it frees the space again.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", dir, err)
			}
			return path
		}
	}
}

// unmount removes the mount on dir, lazily when something still uses it.
func unmount(t testing.TB, dir string) {
	out, err := exec.Command("umount", dir).CombinedOutput()
	if err == nil {
		return
	}
	if lazy, lerr := exec.Command("umount", "-l", dir).CombinedOutput(); lerr != nil {
		t.Errorf("unmount %s: %v: %s; lazily: %v: %s", dir, err, out, lerr, lazy)
	}
}
