package redistest

import "syscall"

// sysProcAttr makes the kernel kill the server if the test binary dies
// without running its cleanups, so no redis-server outlives a crashed test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
