//go:build linux

package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// KillJobProcesses kills what is left of the jobs of a dead worker slot on
// this host: every process whose environment holds RESQUE_WORKER=workerID
// (exactly), which ExecHandler and fork mode give each job process and its
// descendants inherit. Each gets SIGKILL; it then waits, polling, until none
// is left, for at most killWaitLimit or until ctx ends. It returns how many
// processes it signalled.
//
// Call it before requeueing the job of a dead same-host worker, so that a
// recovered job never runs while the old run's processes still do. It can
// only find processes it may read /proc/<pid>/environ of (the same user, or
// root), in this pid namespace, that kept the variable (a process started
// with a fresh environment, sudo for one, is not found). It never signals
// the calling process.
func KillJobProcesses(ctx context.Context, workerID string) (killed int, err error) {
	if workerID == "" {
		return 0, errors.New("worker: kill job processes: empty worker id")
	}
	want := []byte("RESQUE_WORKER=" + workerID)
	self := os.Getpid()
	signalled := map[int]bool{}
	deadline := time.NewTimer(killWaitLimit)
	defer deadline.Stop()
	for {
		pids, err := processesWithEnv(want, self)
		if err != nil {
			return len(signalled), fmt.Errorf("worker: kill job processes of %s: %w", workerID, err)
		}
		if len(pids) == 0 {
			return len(signalled), nil
		}
		for _, pid := range pids {
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				signalled[pid] = true
			}
		}
		select {
		case <-ctx.Done():
			return len(signalled), fmt.Errorf("worker: kill job processes of %s: %w", workerID, ctx.Err())
		case <-deadline.C:
			return len(signalled), fmt.Errorf("worker: kill job processes of %s: %d still running after %v", workerID, len(pids), killWaitLimit)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// killWaitLimit bounds how long KillJobProcesses waits for its processes to go.
const killWaitLimit = 5 * time.Second

// processesWithEnv lists the processes, other than self, whose environment
// has the entry want. A process that exited (a zombie has an empty
// environ) or that we may not read is left out.
func processesWithEnv(want []byte, self int) ([]int, error) {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + name + "/environ")
		if err != nil {
			continue // gone, or not ours to read
		}
		if hasEnvEntry(env, want) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// hasEnvEntry reports whether the NUL-separated environ block has an entry
// equal to want.
func hasEnvEntry(environ, want []byte) bool {
	for len(environ) > 0 {
		entry := environ
		if i := bytes.IndexByte(environ, 0); i >= 0 {
			entry, environ = environ[:i], environ[i+1:]
		} else {
			environ = nil
		}
		if bytes.Equal(entry, want) {
			return true
		}
	}
	return false
}
