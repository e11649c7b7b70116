//go:build !linux && !freebsd

package worker

import "syscall"

// jobProcAttr starts a job process in its own process group. This system
// has no parent-death signal: a job outlives a worker killed with -9.
func jobProcAttr(syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
