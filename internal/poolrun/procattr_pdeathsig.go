//go:build linux || freebsd

package poolrun

import "syscall"

// childProcAttr starts a worker child in its own process group, told by
// the kernel (SIGTERM) when the manager dies.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
