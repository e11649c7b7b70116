package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
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
	// Prestart lets a ForkPool start each job's process before its job
	// comes. Only for a Command that runs RunChild (which then reads the
	// job's queue from a first line of its stdin; the worker id is in its
	// environment from the start, as RESQUE_WORKER).
	Prestart bool
}

// childResult is what RunChild writes on fd 3.
type childResult struct {
	Outcome   string   `json:"outcome"` // ok, error, retry, reschedule, rate_limited, discard
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
	if r, ok := asRateLimited(err); ok {
		return childResult{Outcome: "rate_limited", AfterMS: r.After.Milliseconds()}
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
	case "rate_limited":
		return RateLimited(after)
	case "discard":
		return Discard(r.Message)
	case "retry":
		return Retry(fail, after)
	}
	return fail
}

// ForkHandler runs each job in a child process started from cfg.Command,
// which runs it with RunChild: the payload on its stdin, the result on
// fd 3. A child killed by a signal fails the job as Resque::DirtyExit. It
// starts each job's process when the job comes, whatever cfg.Prestart says
// (a handler has no end at which to stop processes started ahead); a
// ForkPool starts them ahead.
func ForkHandler(cfg ForkConfig) HandlerFunc {
	cfg.Prestart = false
	return NewForkPool(cfg).Handler()
}

// ForkPool runs jobs in child processes (see ForkConfig). With
// cfg.Prestart it keeps one process started ahead per worker slot: a job
// takes its slot's (or starts one) and starts the slot's next in the
// background, so a process's start, 3-4 ms for resque-go's own binary,
// overlaps the job before it instead of delaying the job. A process that
// waited forkIdle for a job is stopped, so an idle worker keeps none. Close
// stops the ones waiting.
type ForkPool struct {
	cfg   ForkConfig
	sweep *resultSweeper
	mu    sync.Mutex
	// ready holds the processes started ahead, by worker id (nil while
	// one is being started).
	ready  map[string]*forkChild
	closed bool
}

// forkIdle is how long a process started ahead waits for a job (a
// variable for the tests).
var forkIdle = 5 * time.Second

// forkHeaderEnv tells RunChild that its stdin starts with a header line
// naming the job's queue (a process started before its job).
const forkHeaderEnv = "RESQUE_GO_FORK_HEADER"

// forkHeader is that line, as JSON.
type forkHeader struct {
	Queue string `json:"queue"`
}

// forkChild is a job process.
type forkChild struct {
	cmd    *exec.Cmd
	stdin  *os.File // the write end of its stdin
	result *os.File // the read end of its fd 3
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
	idle   *time.Timer
}

// NewForkPool returns a pool running jobs as cfg says.
func NewForkPool(cfg ForkConfig) *ForkPool {
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 5 * time.Second
	}
	// The children's exec handlers skip the result-file sweep (each child
	// runs one job); the parent sweeps where they create them by default.
	return &ForkPool{cfg: cfg, sweep: &resultSweeper{dir: os.TempDir()}, ready: map[string]*forkChild{}}
}

// Close stops the processes waiting for a job; jobs running go on, and jobs
// that come after Close start their own processes.
func (p *ForkPool) Close() {
	p.mu.Lock()
	p.closed = true
	var ready []*forkChild
	for id, c := range p.ready {
		if c != nil {
			c.idle.Stop()
			ready = append(ready, c)
		}
		delete(p.ready, id)
	}
	p.mu.Unlock()
	for _, c := range ready {
		c.retire()
	}
}

// start starts a job process for worker id. queue is "" for one started
// ahead, which learns its job's queue from the header line.
func (p *ForkPool) start(queue, id string) (*forkChild, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	resR, resW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(p.cfg.Command[0], p.cfg.Command[1:]...)
	cmd.Stdin = inR
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{resW}
	cmd.SysProcAttr = jobProcAttr(syscall.SIGKILL)
	cmd.Env = append(append(os.Environ(), p.cfg.Env...), "RESQUE_WORKER="+id)
	if queue == "" {
		cmd.Env = append(cmd.Env, forkHeaderEnv+"=1")
	} else {
		cmd.Env = append(cmd.Env, "RESQUE_QUEUE="+queue)
	}
	c := &forkChild{cmd: cmd, stdin: inW, result: resR, exited: make(chan struct{})}
	err = startFromSpawner(cmd)
	inR.Close()
	resW.Close()
	if err != nil {
		inW.Close()
		resR.Close()
		return nil, err
	}
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// spawner starts every job process of fork mode from one OS thread that
// lives as long as the process. The kernel sends a child its Pdeathsig
// when the thread that started it ends, not the process (go.dev/issue/27505;
// Go ends a thread when a goroutine locked to it exits), so a child started
// from a thread of its own would have to keep that thread locked until it
// exits: a thread per running child, and a locked goroutine's wake-ups
// cost the worker CPU. One thread that never ends serves them all.
var spawner struct {
	once sync.Once
	reqs chan spawnRequest
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// startFromSpawner starts cmd from the spawner's thread.
func startFromSpawner(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: the goroutine never returns
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

// retire stops a process that never got a job.
func (c *forkChild) retire() {
	_ = c.cmd.Process.Kill()
	c.stdin.Close()
	c.result.Close()
}

// take returns worker id's process started ahead, if one is ready (nil
// otherwise), and starts the next one for id.
func (p *ForkPool) take(id string) *forkChild {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, starting := p.ready[id]
	if c != nil {
		delete(p.ready, id)
		starting = false
		c.idle.Stop() // its function finds it gone and leaves it
		select {
		case <-c.exited: // died waiting (killed by someone): not a job's failure
			c.stdin.Close()
			c.result.Close()
			c = nil
		default:
		}
	}
	if !p.closed && !starting {
		p.ready[id] = nil
		go p.startAhead(id)
	}
	return c
}

func (p *ForkPool) startAhead(id string) {
	c, err := p.start("", id)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		delete(p.ready, id) // the next job starts its own and reports the error
		return
	}
	if p.closed {
		c.retire()
		return
	}
	p.ready[id] = c
	c.idle = time.AfterFunc(forkIdle, func() {
		p.mu.Lock()
		mine := p.ready[id] == c
		if mine {
			delete(p.ready, id)
		}
		p.mu.Unlock()
		if mine {
			c.retire()
		}
	})
}

// Handler returns the handler that runs each job in a process of the pool.
func (p *ForkPool) Handler() HandlerFunc {
	return func(ctx context.Context, job *Job) error {
		p.sweep.maybe()
		var c *forkChild
		if p.cfg.Prestart {
			c = p.take(job.WorkerID)
		}
		in := job.Payload
		if c != nil {
			h, _ := json.Marshal(forkHeader{Queue: job.Queue})
			in = append(append(append(make([]byte, 0, len(h)+1+len(in)), h...), '\n'), in...)
		} else {
			var err error
			if c, err = p.start(job.Queue, job.WorkerID); err != nil {
				return &Error{Exception: protocol.ExcExecFailed, Message: fmt.Sprintf("cannot start job process %q: %v", p.cfg.Command[0], err), Backtrace: []string{}}
			}
		}
		defer c.result.Close()
		go func() {
			// the child may not read it all (a pipe holds 64 KiB at most)
			_, _ = c.stdin.Write(in)
			c.stdin.Close()
		}()
		out := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(io.LimitReader(c.result, 1<<20))
			out <- b
		}()
		waitErr := c.wait(ctx, p.cfg.KillGrace)
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

// wait waits for the process (its own process group's leader). When ctx
// ends first, the group gets SIGTERM, then SIGKILL after grace.
func (c *forkChild) wait(ctx context.Context, grace time.Duration) error {
	select {
	case <-c.exited:
		return c.err
	case <-ctx.Done():
	}
	pgid := c.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-c.exited:
		return c.err
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-c.exited
		return c.err
	}
}

// RunChild is the child side of fork mode: it reads one payload from in,
// runs its handler from reg with the queue and worker id given, and writes
// the result as JSON to result. It returns the process exit code: 0 when a
// result was written (whatever the job's outcome), 1 otherwise. A process
// that a ForkPool started ahead of its job (ForkConfig.Prestart) has
// RESQUE_GO_FORK_HEADER set: its stdin starts with a line naming the job's
// queue, which then replaces queue and is set as RESQUE_QUEUE.
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
	if os.Getenv(forkHeaderEnv) != "" {
		// Started before its job (ForkConfig.Prestart): the queue comes
		// first. It goes into the environment, where it was for a process
		// started with its job, for what the job starts.
		_ = os.Unsetenv(forkHeaderEnv)
		br := bufio.NewReader(in)
		line, err := br.ReadBytes('\n')
		if err != nil {
			return 1
		}
		var h forkHeader
		if err := json.Unmarshal(line, &h); err != nil {
			return 1
		}
		queue, in = h.Queue, br
		_ = os.Setenv("RESQUE_QUEUE", queue)
	}
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
