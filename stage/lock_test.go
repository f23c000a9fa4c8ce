package stage

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/databrew/databrew-stage/state"
)

// holdLockEnv makes the test binary a second process that holds a storage
// path's lock until its stdin closes.
const holdLockEnv = "DATABREW_HOLD_LOCK"

func holdLock(dir string) {
	db, err := state.Open(dir, state.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = db.Close()
}

// startLockHolder starts the second process and waits until it holds the
// lock; the returned function releases it.
func startLockHolder(t *testing.T, dir string) func() {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("lock holder said %q", line)
	}
	return func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}
}
