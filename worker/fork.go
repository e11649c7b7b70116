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
	"runtime"
	"syscall"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// ForkConfig runs every job in a child process: Command is re-executed per
// job (for resque-go, the same binary in its run-job mode, with the same
// handler flags), so a crash, a leak or a kill -9 of the job cannot take the
// worker down.
type ForkConfig struct {
	// Command is the child's argv; the payload is its stdin and the result
	// comes back on file descriptor 3 (see RunChild).
	Command []string
	// Env is added to the child's environment.
	Env []string
	// KillGrace is how long a cancelled child has after SIGTERM before
	// SIGKILL; default 5 s.
	KillGrace time.Duration
}

// childResult is what RunChild writes on fd 3.
type childResult struct {
	Outcome   string   `json:"outcome"` // ok, error, retry, reschedule, discard
	Exception string   `json:"exception,omitempty"`
	Message   string   `json:"message,omitempty"`
	Backtrace []string `json:"backtrace,omitempty"`
	AfterMS   int64    `json:"after_ms,omitempty"`
}

func encodeResult(err error) childResult {
	if err == nil {
		return childResult{Outcome: "ok"}
	}
	if r, ok := asReschedule(err); ok {
		return childResult{Outcome: "reschedule", AfterMS: r.After.Milliseconds()}
	}
	if d, ok := asDiscard(err); ok {
		return childResult{Outcome: "discard", Message: d.Reason}
	}
	res := childResult{Outcome: "error", Exception: exceptionName(err), Message: errorMessage(err), Backtrace: errorBacktrace(err)}
	if r, ok := asRetry(err); ok {
		res.Outcome, res.AfterMS = "retry", r.After.Milliseconds()
		if r.Err != nil {
			res.Exception, res.Message, res.Backtrace = exceptionName(r.Err), errorMessage(r.Err), errorBacktrace(r.Err)
		}
	}
	return res
}

func (r childResult) decode() error {
	fail := &Error{Exception: r.Exception, Message: r.Message, Backtrace: r.Backtrace}
	if fail.Backtrace == nil {
		fail.Backtrace = []string{}
	}
	after := time.Duration(r.AfterMS) * time.Millisecond
	switch r.Outcome {
	case "ok":
		return nil
	case "reschedule":
		return Reschedule(after)
	case "discard":
		return Discard(r.Message)
	case "retry":
		return Retry(fail, after)
	}
	return fail
}

// ForkHandler runs each job in a child process started from cfg.Command,
// which runs it with RunChild: the payload on its stdin, the result on
// fd 3. A child killed by a signal fails the job as Resque::DirtyExit.
func ForkHandler(cfg ForkConfig) HandlerFunc {
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 5 * time.Second
	}
	// The children's exec handlers skip the result-file sweep (each child
	// runs one job); the parent sweeps where they create them by default.
	sweep := &resultSweeper{dir: os.TempDir()}
	return func(ctx context.Context, job *Job) error {
		sweep.maybe()
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("worker: fork: %w", err)
		}
		defer r.Close()
		cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
		cmd.Stdin = bytes.NewReader(job.Payload)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.ExtraFiles = []*os.File{w}
		cmd.SysProcAttr = jobProcAttr(syscall.SIGKILL)
		cmd.Env = append(append(os.Environ(), cfg.Env...), "RESQUE_QUEUE="+job.Queue, "RESQUE_WORKER="+job.WorkerID)
		// As in ExecHandler: Pdeathsig follows the starting thread, so keep
		// it until the child is gone.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			w.Close()
			return &Error{Exception: protocol.ExcExecFailed, Message: fmt.Sprintf("cannot start job process %q: %v", cfg.Command[0], err), Backtrace: []string{}}
		}
		w.Close()
		out := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(io.LimitReader(r, 1<<20))
			out <- b
		}()
		waitErr := waitGroup(ctx, cmd, cfg.KillGrace)
		result := <-out
		if ctx.Err() != nil {
			return fmt.Errorf("job process stopped (%v): %w", waitErr, context.Cause(ctx))
		}
		var res childResult
		if len(result) > 0 && json.Unmarshal(result, &res) == nil && res.Outcome != "" {
			return res.decode()
		}
		if waitErr == nil {
			waitErr = errors.New("job process exited without reporting a result")
		}
		exc := protocol.ExcExecFailed
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				exc = protocol.ExcDirtyExit // Ruby's name for a forked child killed by a signal
			}
		}
		return &Error{Exception: exc, Message: exitMessage(waitErr, "job process"), Backtrace: []string{}}
	}
}

// RunChild is the child side of fork mode: it reads one payload from in,
// runs its handler from reg with the queue and worker id given, and writes
// the result as JSON to result. It returns the process exit code: 0 when a
// result was written (whatever the job's outcome), 1 otherwise.
func RunChild(ctx context.Context, reg *Registry, queue, workerID string, in io.Reader, result io.Writer) int {
	if f, ok := result.(*os.File); ok {
		// The result descriptor was inherited without close-on-exec: keep
		// it from the processes the job starts, which could hold it open
		// (the parent reads until every copy is closed) or write to it.
		if rc, err := f.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { syscall.CloseOnExec(int(fd)) })
		}
	}
	ctx = context.WithValue(ctx, forkChildKey{}, true)
	raw, err := io.ReadAll(in)
	if err != nil {
		return 1
	}
	var jobErr error
	p, err := protocol.DecodePayload(raw)
	if err != nil {
		jobErr = &Error{Exception: protocol.ExcBadPayload, Message: err.Error(), Backtrace: []string{}}
	} else {
		job := NewJob(Job{Queue: queue, Class: p.Class, ID: p.ID, Args: p.Args, Payload: raw, WorkerID: workerID, Attempt: p.FailCount + 1}, p.Fields)
		if h, herr := reg.Resolve(job); herr != nil {
			jobErr = herr
		} else {
			jobErr = Call(ctx, h, job)
		}
	}
	b, _ := json.Marshal(encodeResult(jobErr))
	if _, err := result.Write(b); err != nil {
		return 1
	}
	return 0
}

// forkChildKey marks the context of a job run by RunChild.
type forkChildKey struct{}

// inForkChild reports whether ctx is a job's in a fork-mode child process.
func inForkChild(ctx context.Context) bool {
	v, _ := ctx.Value(forkChildKey{}).(bool)
	return v
}
