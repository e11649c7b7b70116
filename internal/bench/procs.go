package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is one worker process: the WorkerCommand with the run's queues,
// slots and namespace.
type child struct {
	cmd    *exec.Cmd
	stderr *tail
	done   chan struct{} // closed when the process has exited
	err    error         // Wait's error, set before done closes
}

// usage is what the kernel reports about a process that exited.
type usage struct {
	cpu     time.Duration // user + system
	peakRSS int64         // bytes
}

// childSpec describes the worker processes of one run.
type childSpec struct {
	procs, slots int
	queues       string
	namespace    string
	exec         string // "Class=command" for --exec, or ""
	fork         bool   // --fork
	mass         string // --mass static:POOL instead of --queues, or ""
	flags        []string
}

// staticPoll is the static scenarios' poll interval: a worker of a mass
// pool polls its ring (1 s by default) instead of a blocking wait, so the
// window would otherwise start with up to a second of idle slots.
const staticPoll = "10ms"

// startChildren starts spec.procs worker processes. The Redis URL travels
// in the environment (REDIS_URL), not on the command line, where ps would
// show its password.
func (b *bencher) startChildren(spec childSpec) ([]*child, error) {
	var out []*child
	for range spec.procs {
		argv := append(append([]string{}, b.cfg.WorkerCommand...),
			"--namespace", spec.namespace, "--concurrency", strconv.Itoa(spec.slots), "--log-level", "warn", "--log-format", "json")
		if spec.mass != "" {
			argv = append(argv, "--mass", spec.mass, "--interval", staticPoll)
		} else {
			argv = append(argv, "--queues", spec.queues)
		}
		if spec.exec != "" {
			argv = append(argv, "--exec", spec.exec)
		}
		if spec.fork {
			argv = append(argv, "--fork")
		}
		argv = append(argv, spec.flags...)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(append(os.Environ(), b.cfg.WorkerEnv...), "REDIS_URL="+b.url)
		ch := &child{cmd: cmd, stderr: &tail{max: 4 << 10}, done: make(chan struct{})}
		cmd.Stdout = ch.stderr
		cmd.Stderr = ch.stderr
		if err := cmd.Start(); err != nil {
			stopChildren(out)
			return nil, fmt.Errorf("start worker %q: %w", argv[0], err)
		}
		go func() {
			ch.err = cmd.Wait()
			close(ch.done)
		}()
		out = append(out, ch)
	}
	return out, nil
}

// exited returns an error when a child is no longer running.
func exited(children []*child) error {
	for _, ch := range children {
		select {
		case <-ch.done:
			return fmt.Errorf("worker process %d exited early (%v): %s", ch.cmd.Process.Pid, ch.err, ch.stderr.lastLine())
		default:
		}
	}
	return nil
}

// stopTimeout is how long a worker gets to finish after QUIT.
const stopTimeout = 30 * time.Second

// stopChildren sends QUIT (finish and exit) to every child, waits for them
// (killing those that take longer than stopTimeout) and returns their
// usage. A child that exits with an error is an error.
func stopChildren(children []*child) ([]usage, error) {
	// each child's peak so far (the drain's), before it is told to stop
	peaks := make([]int64, len(children))
	for i, ch := range children {
		if p, ok := peakRSS(ch.cmd.Process.Pid); ok {
			peaks[i] = p
		}
	}
	for _, ch := range children {
		_ = ch.cmd.Process.Signal(syscall.SIGQUIT)
	}
	var errs []error
	var out []usage
	for i, ch := range children {
		select {
		case <-ch.done:
		case <-time.After(stopTimeout):
			_ = ch.cmd.Process.Kill()
			<-ch.done
			errs = append(errs, fmt.Errorf("worker process %d did not exit within %s of QUIT", ch.cmd.Process.Pid, stopTimeout))
		}
		if ch.err != nil && len(errs) == 0 {
			errs = append(errs, fmt.Errorf("worker process %d: %v: %s", ch.cmd.Process.Pid, ch.err, ch.stderr.lastLine()))
		}
		u := processUsage(ch.cmd.ProcessState)
		if peaks[i] > 0 {
			u.peakRSS = peaks[i]
		}
		out = append(out, u)
	}
	return out, errors.Join(errs...)
}

// processUsage reads CPU time and the peak resident set (ru_maxrss, which
// stopChildren replaces with VmHWM on Linux: see peakRSS) from wait4's
// rusage.
func processUsage(ps *os.ProcessState) usage {
	if ps == nil {
		return usage{}
	}
	u := usage{cpu: ps.UserTime() + ps.SystemTime()}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		u.peakRSS = maxRSSBytes(ru.Maxrss)
	}
	return u
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

// lastLine is the last non-empty line written, or "(no output)".
func (t *tail) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(t.buf), []byte("\n"))
	if last := strings.TrimSpace(string(lines[len(lines)-1])); last != "" {
		return last
	}
	return "(no output)"
}
