//go:build !linux && !freebsd

package poolrun

import "syscall"

// childProcAttr starts a worker child in its own process group. This
// system has no parent-death signal: a child outlives a manager killed
// with -9 (a manager stopped with TERM or QUIT stops its children).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
