//go:build linux || freebsd

package worker

import "syscall"

// jobProcAttr starts a job process in its own process group; sig is what
// the kernel sends it when the thread that started it (the worker) dies.
func jobProcAttr(sig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: sig}
}
