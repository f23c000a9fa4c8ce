package testserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// modulePath names the module whose root holds bin/tools.
const modulePath = "github.com/databrew/databrew-stage"

// installTimeout bounds an install.
const installTimeout = 10 * time.Minute

// Tool is a server program the tests run, and how to install it.
type Tool struct {
	// Name is the program's name on PATH, such as "versitygw".
	Name string
	// EnvVar names the environment variable that may hold the program's
	// path, such as "DATABREW_VERSITYGW".
	EnvVar string
	// Path is where the program lies in bin/tools under the module root,
	// slash-separated, such as "versitygw" or
	// "azurite/node_modules/.bin/azurite-blob". An install moves the
	// first element of Path into bin/tools, whole.
	Path string
	// Install builds the command that installs the program into dir, an
	// empty folder, so that it lies at Path under dir; the command ends
	// with ctx.
	Install func(ctx context.Context, dir string) (*exec.Cmd, error)
}

// Find returns the program's path: the one EnvVar names, else Path in
// bin/tools under the module root (where `make tools` installs it), else
// the one on PATH. When none has it, Find installs it into bin/tools
// under a file lock, so the test processes of several packages install
// it once, and skips the test when that fails.
func (tool Tool) Find(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(tool.EnvVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("testserver: %s: %v", tool.EnvVar, err)
		}
		return p
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	toolsDir := filepath.Join(root, "bin", "tools")
	p, err := tool.find(toolsDir)
	if err != nil {
		t.Skipf("testserver: no %s (%s, %s, PATH), and installing it failed: %v",
			tool.Name, tool.EnvVar, filepath.Join(toolsDir, filepath.FromSlash(tool.Path)), err)
	}
	return p
}

// find looks for the program in toolsDir, then on PATH, and installs it
// into toolsDir when neither has it.
func (tool Tool) find(toolsDir string) (string, error) {
	local := filepath.Join(toolsDir, filepath.FromSlash(tool.Path))
	if isExecutable(local) {
		return local, nil
	}
	if p, err := exec.LookPath(tool.Name); err == nil {
		return p, nil
	}
	if err := tool.install(toolsDir); err != nil {
		return "", err
	}
	return local, nil
}

// install installs the program into toolsDir unless another process did
// while this one waited for the lock.
func (tool Tool) install(toolsDir string) error {
	if err := os.MkdirAll(toolsDir, 0o755); err != nil {
		return err
	}
	top, _, _ := strings.Cut(tool.Path, "/")
	unlock, err := lockFile(filepath.Join(toolsDir, "."+top+".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if isExecutable(filepath.Join(toolsDir, filepath.FromSlash(tool.Path))) {
		return nil
	}
	// Install beside the final place and rename it there, so a process
	// that checks for the program without the lock never runs half of
	// an install. What lies there without the program is a failed
	// install.
	final := filepath.Join(toolsDir, top)
	if err := os.RemoveAll(final); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(toolsDir, "."+top+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd, err := tool.Install(ctx, tmp)
	if err != nil {
		return err
	}
	name := strings.Join(append([]string{filepath.Base(cmd.Args[0])}, cmd.Args[1:]...), " ")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, bytes.TrimSpace(out))
	}
	if !isExecutable(filepath.Join(tmp, filepath.FromSlash(tool.Path))) {
		return fmt.Errorf("%s left no %s", name, tool.Path)
	}
	return os.Rename(filepath.Join(tmp, top), final)
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
