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
	"strconv"
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
	// SIGKILL (counted from the cancel: the SIGTERM waits for the command
	// to have started, see waitGroup); default 5 s.
	KillGrace time.Duration
	// TailLines is how many stderr lines a failure keeps; default 20.
	TailLines int
	// ResultDir is where the handler makes its directory of
	// $RESQUE_RESULT files (resque-go-results-*; see resultDir); default
	// os.TempDir(). What killed workers left there is removed at the
	// handler's first job and hourly after (see sweepResults).
	ResultDir string
}

// MaxArgsEnv is the largest args JSON passed in RESQUE_ARGS. Linux refuses to
// start a process with one environment string over 128 KiB ("argument list
// too long"); above this size RESQUE_ARGS is left out and
// RESQUE_ARGS_OMITTED=1 is set instead: the args are in the payload on stdin.
const MaxArgsEnv = 32 << 10

// ExecHandler runs command with /bin/sh once per job. The raw payload is
// its standard input; RESQUE_CLASS, RESQUE_QUEUE, RESQUE_JOB_ID (when the
// payload has an id), RESQUE_WORKER, RESQUE_ARGS (the args JSON, unless
// larger than MaxArgsEnv: then RESQUE_ARGS_OMITTED=1) and RESQUE_RESULT are
// in its environment, with the worker's own environment less the variables
// that hold resque-go's secrets (see jobEnv). Exit status 0 is success;
// anything else is a failure whose message is the last stderr line and
// whose backtrace is the stderr tail. When the job's context ends (timeout,
// stop) the whole process group gets SIGTERM, then SIGKILL after KillGrace;
// what the command leaves in the group when it ends is killed then.
//
// The command runs in its own process group under a small guard shell (see
// execGuard), which kills the whole group when the worker dies, so no
// process a job started outlives its worker by more than an instant. A
// process that leaves the group still carries RESQUE_WORKER, by which
// KillJobProcesses finds it.
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
	if opt.ResultDir == "" {
		opt.ResultDir = os.TempDir()
	}
	script := execGuard(command)
	results := &resultDir{parent: opt.ResultDir}
	sweep := &resultSweeper{dir: opt.ResultDir, own: results}
	return func(ctx context.Context, job *Job) error {
		child := inForkChild(ctx)
		if !child {
			sweep.maybe()
		}
		tail := &tailBuffer{max: 16 << 10}
		cmd := exec.Command("/bin/sh", "-c", script)
		if stdin := filledPipe(job.Payload); stdin != nil {
			defer stdin.Close()
			cmd.Stdin = stdin
		} else {
			cmd.Stdin = bytes.NewReader(job.Payload)
		}
		cmd.Stdout = opt.Stdout
		cmd.Stderr = io.MultiWriter(opt.Stderr, tail)
		// SIGTERM, not SIGKILL: the guard traps it and kills the whole group.
		cmd.SysProcAttr = jobProcAttr(syscall.SIGTERM)
		vars := []string{"RESQUE_CLASS=" + job.Class, "RESQUE_QUEUE=" + job.Queue, "RESQUE_WORKER=" + job.WorkerID}
		args := string(job.Args)
		if args == "" {
			args = "null"
		}
		if len(args) > MaxArgsEnv {
			vars = append(vars, "RESQUE_ARGS_OMITTED=1")
		} else {
			vars = append(vars, "RESQUE_ARGS="+args)
		}
		if job.ID != "" {
			vars = append(vars, "RESQUE_JOB_ID="+job.ID)
		}
		// The reply's file: named in the handler's directory, or (a fork
		// child, which runs one job) created and locked on its own.
		var resultPath string
		var resultFile *os.File
		var ferr error
		if child {
			if resultFile, ferr = createResultFile(opt.ResultDir); ferr == nil {
				defer removeResultFile(resultFile)
				resultPath = resultFile.Name()
			}
		} else {
			resultPath, ferr = results.name()
		}
		if ferr == nil {
			vars = append(vars, "RESQUE_RESULT="+resultPath)
		}
		cmd.Env = jobEnv(vars...)
		ready, err := startGuard(cmd)
		if err != nil {
			if ferr == nil && !child {
				results.done(resultPath)
			}
			return &Error{Exception: "ResqueGo::ExecFailed", Message: fmt.Sprintf("cannot start %q: %v", command, err), Backtrace: []string{}}
		}
		err = waitGroup(ctx, cmd, opt.KillGrace, ready)
		ready.Close()
		var reply []byte
		if ferr == nil {
			if child {
				reply, _ = os.ReadFile(resultPath)
			} else {
				reply = results.done(resultPath)
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("command stopped (%v): %w", err, context.Cause(ctx))
		}
		lines := tail.lines(opt.TailLines)
		if ctl := execReply(reply, lines); ctl != nil {
			return ctl
		}
		switch exitCode(err) {
		case 0:
			return nil
		case ExitRetry:
			return Retry(&Error{Exception: "ResqueGo::ExecRetry", Message: lastLine(lines, "command asked for a retry (exit 75)"), Backtrace: lines}, 0)
		case ExitDiscard:
			return Discard(lastLine(lines, "command discarded the job (exit 76)"))
		case ExitRateLimited:
			return RateLimited(0)
		}
		msg := exitMessage(err, "command")
		if len(lines) > 0 {
			msg += ": " + lines[len(lines)-1]
		}
		return &Error{Exception: "ResqueGo::ExecFailed", Message: msg, Backtrace: lines}
	}
}

// execGuard wraps command in the script the job's shell runs. The shell is
// the worker's direct child and the leader of the job's process group; it
// gets SIGTERM when the worker dies (Pdeathsig) and then SIGKILLs the whole
// group, grandchildren included. To be able to run a trap the shell must not
// wait for a foreground command (traps wait for those), so the command runs
// in the background with the saved stdin, and the shell waits for it and
// exits with its status.
//
//   - The command text goes in unchanged on the script's first line, so $0,
//     $#, $$ (the group leader) and the shell's messages ("sh: 1: ...") are
//     as with sh -c command; no variable of the guard is set before the
//     command starts.
//   - The same SIGTERM comes from a cancelled job (sent to the group), and
//     Go's Pdeathsig fires when the thread that started the child ends, not
//     the process (go.dev/issue/27505; Go ends a thread when a goroutine
//     locked to it exits). So the trap kills the group only when the
//     guard's parent is no longer the worker: the kernel reparents before it
//     signals, and a thread's end reparents to another thread of the same
//     process, whose pid getppid still reports. Otherwise the signal only
//     interrupts the wait: a cancelled command keeps its KillGrace, and the
//     guard lives as long as the command. This is why the worker needs no
//     runtime.LockOSThread around the job.
//   - HUP, INT, QUIT, USR1, USR2 and ALRM sent to the group are handled the
//     same way. The background command gets the default action for each (a
//     subshell resets caught traps), except that dash and ash start
//     background commands with SIGINT and SIGQUIT ignored, as POSIX asks of
//     non-interactive shells; resque-go itself never sends those to a job.
//   - The guard lets go of stdin, stdout and stderr once the command has
//     them (no "Killed" of its own in the command's stderr tail).
//   - fd 3 is the write end of startGuard's pipe. The command's subshell
//     writes a line to it and closes it first thing, when it has reset the
//     guard's traps: until then a SIGTERM would be caught and lost, so
//     waitGroup sends none before that line. The guard keeps it until it
//     exits, so EOF tells waitGroup the guard is gone, whatever holds the
//     command's output. The command never has it.
//   - A wait interrupted by a trap is repeated; when the command had
//     already been reported, the second wait answers 127 (bash 5.2: -1, when
//     the command ended as the signal came) and the status of the first
//     stands.
//   - A command killed by a signal that does not dump core (SIGKILL from
//     the OOM killer, SIGTERM...) is reported as such: the guard, its traps
//     reset, sends itself the same signal. Other statuses above 128 are
//     plain exit statuses.
func execGuard(command string) string {
	var reraised []string
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGKILL, syscall.SIGUSR1,
		syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGALRM, syscall.SIGTERM} {
		reraised = append(reraised, strconv.Itoa(128+int(sig)))
	}
	return `trap 'f=1; if read -r t </proc/$$/stat; then set -- ${t##*) }; else set -- x $(ps -o ppid= -p $$); fi; [ "$2" = "$PPID" ] || kill -KILL 0' ` + guardTraps + `; exec 4<&0; { echo >&3; exec 3>&-; ` + command + `
} <&4 4<&- &
exec 4<&- 0</dev/null >/dev/null 2>&1
p=$! s=
while :; do
	f=
	wait "$p"
	r=$?
	case $r in 127|-*) if [ -n "$s" ]; then r=$s; break; fi;; esac
	if [ -z "$f" ]; then break; fi
	s=$r
done
case $r in ` + strings.Join(reraised, "|") + `) trap - ` + guardTraps + `; kill -$((r - 128)) $$;; esac
exit "$r"`
}

// guardTraps are the signals the guard catches.
const guardTraps = "HUP INT QUIT TERM USR1 USR2 ALRM"

// filledPipe returns the read end of a pipe that already holds payload and
// whose write end is closed, so the command's stdin needs no goroutine to
// copy it; nil when the payload may not fit a pipe without blocking (a pipe
// holds at least one page) or the pipe cannot be made.
func filledPipe(payload []byte) *os.File {
	if len(payload) > 4096 {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	_, err = w.Write(payload)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil
	}
	return r
}

// jobEnv is the environment of a job process: the worker's own, less the
// variables that carry resque-go's secrets and the job variables an outer
// environment may hold, plus vars.
func jobEnv(vars ...string) []string {
	env := os.Environ()
	out := make([]string, 0, len(env)+len(vars))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !hiddenFromJobs(name) {
			out = append(out, kv)
		}
	}
	return append(out, vars...)
}

// hiddenFromJobs names the variables a job process never inherits: those
// that carry a secret resque-go reads for itself (the Redis URL, which may
// hold a password, the Sentinels' password, the --http bearer token and the
// /metrics token; a fork-mode job process gets the --http token in its
// environment), and the job variables the handler sets.
func hiddenFromJobs(name string) bool {
	switch name {
	case "REDIS_URL", "REDIS_BACKEND", "REDIS_SENTINEL_PASSWORD", "RESQUE_HTTP_TOKEN", "RESQUE_METRICS_TOKEN",
		"RESQUE_CLASS", "RESQUE_QUEUE", "RESQUE_WORKER", "RESQUE_JOB_ID",
		"RESQUE_ARGS", "RESQUE_ARGS_OMITTED", "RESQUE_RESULT":
		return true
	}
	return false
}

// Exit codes an exec command uses to steer its job (docs/jobs.md#the-exec-contract).
const (
	ExitRetry   = 75 // EX_TEMPFAIL: retry with the class's backoff
	ExitDiscard = 76 // drop the job without a failed entry
	// ExitRateLimited: run the job again after DefaultRateLimitDelay (or
	// the delay of {"rate_limited": seconds} in $RESQUE_RESULT), without
	// counting a failed attempt. 79 is outside sysexits.h's range (64-78).
	ExitRateLimited = 79
)

// execResult is what a command may write to $RESQUE_RESULT: the same reply
// an HTTP endpoint gives.
type execResult struct {
	Message         string   `json:"message"`
	Retry           bool     `json:"retry"`
	RescheduleDelay *float64 `json:"rescheduleDelay"`
	Discard         bool     `json:"discard"`
	RateLimited     *float64 `json:"rate_limited"`
}

// execReply honours a JSON reply b the command left in its result file;
// nil means there was none and the exit status decides.
func execReply(b []byte, lines []string) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	var r execResult
	if err := json.Unmarshal(b, &r); err != nil {
		return &Error{Exception: "ResqueGo::ExecFailed", Message: fmt.Sprintf("$RESQUE_RESULT is not valid JSON: %v", err), Backtrace: lines}
	}
	switch {
	case r.RateLimited != nil:
		return RateLimited(seconds(*r.RateLimited))
	case r.RescheduleDelay != nil && *r.RescheduleDelay > 0:
		return Reschedule(time.Duration(*r.RescheduleDelay * float64(time.Second)))
	case r.Discard:
		return Discard(r.Message)
	case r.Retry:
		return Retry(&Error{Exception: "ResqueGo::ExecRetry", Message: lastLine([]string{r.Message}, "command asked for a retry"), Backtrace: lines}, 0)
	}
	return nil
}

// seconds turns a reply's delay in seconds into a duration, bounded so
// that no reply overflows it (a century is already "never").
func seconds(s float64) time.Duration {
	const limit = 100 * 365 * 24 * time.Hour
	if s*float64(time.Second) >= float64(limit) {
		return limit
	}
	return time.Duration(s * float64(time.Second))
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

// startGuard starts cmd, the guard (see execGuard), with the write end of
// a pipe as its fd 3, and returns the read end, for waitGroup: it reads a
// line once the command has its own signal dispositions, and EOF once the
// guard has exited.
func startGuard(cmd *exec.Cmd) (ready *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{w}
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// waitGroup waits for cmd, the guard started by startGuard with Setpgid.
// When ctx ends first, the whole process group gets SIGTERM, then SIGKILL
// once grace has passed since ctx ended. Once the guard has exited (its
// command has ended), whatever is left in the group gets SIGKILL at once:
// a process the command started just as the SIGTERM came missed it, and
// would outlive the stopped job, and the job would wait for the grace
// while that process held the command's stderr.
//
// The SIGTERM waits for the line on ready: a SIGTERM that came before the
// guard had started the command would reach the guard alone, which catches
// it, and one that came before the command's subshell had reset the
// guard's traps would be caught there and lost; either way the command
// would run until the SIGKILL. The wait is the rest of the guard's start,
// a few milliseconds.
func waitGroup(ctx context.Context, cmd *exec.Cmd, grace time.Duration, ready *os.File) error {
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err := <-waitErr:
		return err
	case <-ctx.Done():
	}
	kill := time.NewTimer(grace)
	defer kill.Stop()
	pgid := cmd.Process.Pid
	armed, gone := make(chan struct{}), make(chan struct{})
	go func() {
		// the line, then EOF (or an error once the handler closes ready)
		_, err := ready.Read(make([]byte, 1))
		close(armed)
		if err == nil {
			_, _ = io.Copy(io.Discard, ready)
		}
		close(gone)
	}()
	select {
	case err := <-waitErr:
		return killRest(pgid, err)
	case <-armed:
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
	case <-kill.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return killRest(pgid, <-waitErr)
	}
	select {
	case err := <-waitErr:
		return killRest(pgid, err)
	case <-gone:
		_ = killRest(pgid, nil)
	case <-kill.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return killRest(pgid, <-waitErr)
	}
	select {
	case err := <-waitErr:
		return err
	case <-kill.C:
		// a process that left the group holds the command's output
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-waitErr
	}
}

// killRest kills what is left in process group pgid once its leader, the
// guard, has exited, and returns err. The group's id is not reused while a
// member is left.
func killRest(pgid int, err error) error {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return err
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
