package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
)

// A stop at any instant of a job's start, under each shell, ends the
// command by its SIGTERM, never by the SIGKILL after the grace period, and
// leaves no process of the job behind. A SIGTERM that reached the guard
// before it had started the command, or the command's subshell before it
// had dropped the guard's traps, used to be caught and lost: the command
// then ran until the SIGKILL. Each start is stopped a little later than
// the one before, from at once to a few milliseconds in (the shell's
// start), and half the commands trap TERM themselves. A command that
// traps TERM may start a process just as the SIGTERM comes, which then
// misses it: that one goes once the command has ended.
func TestExecGuardStopAtAnyInstant(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("needs /proc")
	}
	const starts = 50
	// long enough that no run ends by it unless the SIGTERM was lost
	const grace = 20 * time.Second
	for name, shell := range guardShells(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for i := 0; i < starts; i++ {
				mark := fmt.Sprintf("RESQUE_GO_TEST_STOP=%s-%d-%d", name, os.Getpid(), i)
				trapped := filepath.Join(dir, fmt.Sprintf("trapped-%d", i))
				command := `sleep 600`
				if i%2 == 1 {
					command = fmt.Sprintf(`trap 'echo trapped > %q; exit 0' TERM; sleep 600 & wait`, trapped)
				}
				c := guardCmd(shell, command)
				c.Env = append(os.Environ(), mark)
				ready, err := startGuard(c)
				if err != nil {
					t.Fatal(err)
				}
				if d := time.Duration(i) * 100 * time.Microsecond; d > 0 {
					time.Sleep(d) // the instant of the stop, not a wait for progress
				}
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				err = waitGroup(ctx, c, grace, ready)
				ready.Close()
				// A process the stop killed may take a moment to go.
				t.Cleanup(func() { killMarked(t, mark) })
				redistest.Eventually(t, 0, func() bool { return len(marked(t, mark)) == 0 },
					fmt.Sprintf("start %d (%s, ended: %v): the processes of the stopped job to go", i, command, err))
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					if _, terr := os.Stat(trapped); err == nil && terr == nil {
						continue // the command's own trap ran and exited 0
					}
					t.Fatalf("start %d (%s): %v, want an end by SIGTERM", i, command, err)
				}
				ws := ee.Sys().(syscall.WaitStatus)
				if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
					t.Fatalf("start %d (%s): %v, want an end by SIGTERM (a SIGKILL means the SIGTERM was lost)", i, command, err)
				}
			}
		})
	}
}

// marked lists the live processes whose environment holds mark.
func marked(t *testing.T, mark string) []int {
	t.Helper()
	pids, err := processesWithEnv([]byte(mark), os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return pids
}

// killMarked kills what a failed test left running.
func killMarked(t *testing.T, mark string) {
	for _, p := range marked(t, mark) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}
