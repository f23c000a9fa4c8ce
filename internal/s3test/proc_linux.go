package s3test

import "syscall"

// sysProcAttr has the kernel kill versitygw when the test process dies,
// so a test binary killed by a timeout leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
