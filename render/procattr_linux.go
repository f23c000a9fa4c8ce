package render

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the browser in a process group of its own, which Close
// kills whole, and has the kernel kill it when the stage dies, even by
// SIGKILL (the parent-death signal; chromedp starts the browser from a
// goroutine locked to its thread for as long as the browser runs, as the
// signal follows the thread).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the process group pgid: the browser and every process it
// started.
func killGroup(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}
