package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
)

// A stop at any instant of a job's start, under each shell and through
// ExecHandler, ends the command by its SIGTERM, never by the SIGKILL after
// the grace period, and leaves no process of the job behind. A SIGTERM
// that reached the guard before it had started the command, or the
// command's subshell before it had dropped the guard's traps, used to be
// caught and lost: the command then ran until the SIGKILL. Each start is
// stopped a little later than the one before, from at once to a few
// milliseconds in (the shell's start), and half the commands trap TERM
// themselves. A command that traps TERM may start a process just as the
// SIGTERM comes, which then misses it: that one goes once the command has
// ended.
func TestExecGuardStopAtAnyInstant(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("needs /proc")
	}
	const starts = 50
	// long enough that no run ends by it unless the SIGTERM was lost
	const grace = 20 * time.Second
	// stop runs command, stops it after delay and returns how it ended:
	// in the words of exec.ExitError ("signal: terminated"), nil for exit 0.
	type stopFunc func(t *testing.T, command, worker string, delay time.Duration) error
	runs := map[string]stopFunc{}
	for name, shell := range guardShells(t) {
		runs[name] = func(t *testing.T, command, worker string, delay time.Duration) error {
			c := guardCmd(shell, command)
			c.Env = append(os.Environ(), "RESQUE_WORKER="+worker)
			ready, err := startGuard(c)
			if err != nil {
				t.Fatal(err)
			}
			defer ready.Close()
			if delay > 0 {
				time.Sleep(delay) // the instant of the stop, not a wait for progress
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return waitGroup(ctx, c, grace, ready)
		}
	}
	runs["handler"] = func(t *testing.T, command, worker string, delay time.Duration) error {
		h := ExecHandler(command, ExecOptions{Stdout: io.Discard, Stderr: io.Discard, KillGrace: grace, ResultDir: t.TempDir()})
		job := &Job{Queue: "q", Class: "C", Args: []byte(`[]`), Payload: []byte(`{"class":"C","args":[]}`), WorkerID: worker}
		ctx, cancel := context.WithCancel(context.Background())
		stop := time.AfterFunc(delay, cancel)
		defer stop.Stop()
		err := h(ctx, job)
		if err == nil {
			t.Fatalf("the job ended before its stop")
		}
		// "command stopped (how it ended): context canceled"
		how, ok := strings.CutPrefix(err.Error(), "command stopped (")
		if how, _, _ = strings.Cut(how, "): "); !ok {
			t.Fatalf("handler: %v, want a stopped command", err)
		}
		if how == "<nil>" {
			return nil
		}
		return errors.New(how)
	}
	for name, stop := range runs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for i := 0; i < starts; i++ {
				worker := fmt.Sprintf("stop-%s-%d-%d", name, os.Getpid(), i)
				trapped := filepath.Join(dir, fmt.Sprintf("trapped-%d", i))
				command := `sleep 600`
				if i%2 == 1 {
					command = fmt.Sprintf(`trap 'echo trapped > %q; exit 0' TERM; sleep 600 & wait`, trapped)
				}
				t.Cleanup(func() { killMarked(t, worker) })
				err := stop(t, command, worker, time.Duration(i)*100*time.Microsecond)
				// A process the stop killed may take a moment to go.
				redistest.Eventually(t, 0, func() bool { return len(marked(t, worker)) == 0 },
					fmt.Sprintf("start %d (%s, ended: %v): the processes of the stopped job to go", i, command, err))
				if _, terr := os.Stat(trapped); err == nil && terr == nil {
					continue // the command's own trap ran and exited 0
				}
				if err == nil || err.Error() != "signal: terminated" {
					t.Fatalf("start %d (%s): %v, want an end by SIGTERM (a SIGKILL means the SIGTERM was lost)", i, command, err)
				}
			}
		})
	}
}

// marked lists the live processes of the job that worker ran.
func marked(t *testing.T, worker string) []int {
	t.Helper()
	pids, err := processesWithEnv([]byte("RESQUE_WORKER="+worker), os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return pids
}

// killMarked kills what a failed test left running.
func killMarked(t *testing.T, worker string) {
	for _, p := range marked(t, worker) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}
