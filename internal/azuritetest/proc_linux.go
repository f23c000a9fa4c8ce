package azuritetest

import "syscall"

// sysProcAttr has the kernel kill Azurite when the test process dies,
// so a test binary killed by a timeout leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
