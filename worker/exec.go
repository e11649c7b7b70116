package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ExecOptions configures ExecHandler.
type ExecOptions struct {
	// Stdout receives the command's standard output; default os.Stdout.
	Stdout io.Writer
	// Stderr receives its standard error (the tail is also kept for the
	// failed entry); default os.Stderr.
	Stderr io.Writer
	// KillGrace is how long a cancelled command has after SIGTERM before
	// SIGKILL; default 5 s.
	KillGrace time.Duration
	// TailLines is how many stderr lines a failure keeps; default 20.
	TailLines int
}

// ExecHandler runs command with /bin/sh -c once per job. The raw payload is
// its standard input; RESQUE_CLASS, RESQUE_QUEUE, RESQUE_JOB_ID (when the
// payload has an id), RESQUE_WORKER and RESQUE_ARGS (the args JSON) are in
// its environment. Exit status 0 is success; anything else is a failure
// whose message is the last stderr line and whose backtrace is the stderr
// tail. When the job's context ends (timeout, stop) the whole process group
// gets SIGTERM, then SIGKILL after KillGrace.
func ExecHandler(command string, opt ExecOptions) HandlerFunc {
	if opt.Stdout == nil {
		opt.Stdout = os.Stdout
	}
	if opt.Stderr == nil {
		opt.Stderr = os.Stderr
	}
	if opt.KillGrace <= 0 {
		opt.KillGrace = 5 * time.Second
	}
	if opt.TailLines <= 0 {
		opt.TailLines = 20
	}
	return func(ctx context.Context, job *Job) error {
		tail := &tailBuffer{max: 16 << 10}
		cmd := exec.Command("/bin/sh", "-c", command)
		cmd.Stdin = bytes.NewReader(job.Payload)
		cmd.Stdout = opt.Stdout
		cmd.Stderr = io.MultiWriter(opt.Stderr, tail)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		args := string(job.Args)
		if args == "" {
			args = "null"
		}
		cmd.Env = append(os.Environ(),
			"RESQUE_CLASS="+job.Class, "RESQUE_QUEUE="+job.Queue, "RESQUE_WORKER="+job.WorkerID, "RESQUE_ARGS="+args)
		if job.ID != "" {
			cmd.Env = append(cmd.Env, "RESQUE_JOB_ID="+job.ID)
		}
		resultFile, ferr := os.CreateTemp("", "resque-go-result-*.json")
		if ferr == nil {
			resultFile.Close()
			defer os.Remove(resultFile.Name())
			cmd.Env = append(cmd.Env, "RESQUE_RESULT="+resultFile.Name())
		}
		if err := cmd.Start(); err != nil {
			return &Error{Exception: "ResqueGo::ExecFailed", Message: fmt.Sprintf("cannot start %q: %v", command, err), Backtrace: []string{}}
		}
		err := waitGroup(ctx, cmd, opt.KillGrace)
		if ctx.Err() != nil {
			return fmt.Errorf("command stopped (%v): %w", err, context.Cause(ctx))
		}
		lines := tail.lines(opt.TailLines)
		if ferr == nil {
			if ctl := readExecResult(resultFile.Name(), err, lines); ctl != nil {
				return ctl
			}
		}
		switch exitCode(err) {
		case 0:
			return nil
		case ExitRetry:
			return Retry(&Error{Exception: "ResqueGo::ExecRetry", Message: lastLine(lines, "command asked for a retry (exit 75)"), Backtrace: lines}, 0)
		case ExitDiscard:
			return Discard(lastLine(lines, "command discarded the job (exit 76)"))
		}
		msg := exitMessage(err, "command")
		if len(lines) > 0 {
			msg += ": " + lines[len(lines)-1]
		}
		return &Error{Exception: "ResqueGo::ExecFailed", Message: msg, Backtrace: lines}
	}
}

// Exit codes an exec command uses to steer its job (documented in the README).
const (
	ExitRetry   = 75 // EX_TEMPFAIL: retry with the class's backoff
	ExitDiscard = 76 // drop the job without a failed entry
)

// execResult is what a command may write to $RESQUE_RESULT: the same reply
// an HTTP endpoint gives.
type execResult struct {
	Message         string   `json:"message"`
	Retry           bool     `json:"retry"`
	RescheduleDelay *float64 `json:"rescheduleDelay"`
	Discard         bool     `json:"discard"`
}

// readExecResult honours a JSON reply the command left in its result file;
// nil means there was none and the exit status decides.
func readExecResult(path string, waitErr error, lines []string) error {
	b, err := os.ReadFile(path)
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	var r execResult
	if err := json.Unmarshal(b, &r); err != nil {
		return &Error{Exception: "ResqueGo::ExecFailed", Message: fmt.Sprintf("$RESQUE_RESULT is not valid JSON: %v", err), Backtrace: lines}
	}
	switch {
	case r.RescheduleDelay != nil && *r.RescheduleDelay > 0:
		return Reschedule(time.Duration(*r.RescheduleDelay * float64(time.Second)))
	case r.Discard:
		return Discard(r.Message)
	case r.Retry:
		return Retry(&Error{Exception: "ResqueGo::ExecRetry", Message: lastLine([]string{r.Message}, "command asked for a retry"), Backtrace: lines}, 0)
	}
	return nil
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

func lastLine(lines []string, def string) string {
	if len(lines) == 0 || lines[len(lines)-1] == "" {
		return def
	}
	return lines[len(lines)-1]
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lines(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(t.buf), "\n"), "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// waitGroup waits for cmd (started with Setpgid). When ctx ends first, the
// whole process group gets SIGTERM, then SIGKILL after grace.
func waitGroup(ctx context.Context, cmd *exec.Cmd, grace time.Duration) error {
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err := <-waitErr:
		return err
	case <-ctx.Done():
	}
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case err := <-waitErr:
		return err
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-waitErr
	}
}

// exitMessage describes how a process ended, Ruby's wording for signals.
func exitMessage(err error, what string) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("Child process received unhandled signal pid %d %s (signal %d)", ee.Pid(), signalName(ws.Signal()), int(ws.Signal()))
		}
		return fmt.Sprintf("%s exited with status %d", what, ee.ExitCode())
	}
	return err.Error()
}

// signalName is the SIGXXX name Ruby prints.
func signalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.SIGSEGV: "SIGSEGV",
		syscall.SIGABRT: "SIGABRT", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGBUS: "SIGBUS",
		syscall.SIGHUP: "SIGHUP", syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2", syscall.SIGPIPE: "SIGPIPE"}
	if n, ok := names[s]; ok {
		return n
	}
	return fmt.Sprintf("SIG%d", int(s))
}
