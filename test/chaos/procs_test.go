package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// proc is a running resque-go process whose output goes to a log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

// startProc starts resque-go with args, its output appended to log.
func startProc(t *testing.T, name, log string, args ...string) *proc {
	t.Helper()
	f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// kill9 kills the process with SIGKILL and waits for it.
func (p *proc) kill9() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// quit sends QUIT (jobs finish, then it exits) and waits up to timeout.
func (p *proc) quit(timeout time.Duration) error {
	_ = p.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("%s (pid %d) did not exit within %s of QUIT", p.name, p.pid(), timeout)
	}
}

// child is a process started by a pool manager.
type child struct {
	pid       int
	scheduler bool // a scheduler child, not a worker
}

// children lists the resque-go processes whose parent is pid (job
// handlers, which are grandchildren, are not among them).
func children(pid int) []child {
	entries, _ := os.ReadDir("/proc")
	var out []child
	for _, e := range entries {
		cpid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ")"
		_, rest, ok := strings.Cut(string(stat), ") ")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) < 2 || fields[0] == "Z" || fields[1] != strconv.Itoa(pid) {
			continue
		}
		// Workers rewrite their command line (their process title), so
		// the binary is recognised by its executable.
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err != nil || exe != binary {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, child{pid: cpid, scheduler: strings.Contains(string(cmdline), "--scheduler-config-fd")})
	}
	return out
}

// processes lists the live processes of the resque-go binary.
func processes() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == binary && !zombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func zombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(rest, "Z")
}

// runCLI runs a one-shot resque-go command and returns its exit code,
// stdout and stderr.
func runCLI(ctx context.Context, args ...string) (int, string, string) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); cmd.ProcessState == nil {
		return -1, "", err.Error()
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// pollProgress calls cond every 50 ms until it holds. It gives up only
// when progress (a snapshot of what is left or done) has not changed for
// stall: a slow machine gets there slowly, a stuck one never.
func pollProgress(stall time.Duration, cond func() bool, progress func() string) bool {
	last, moved := progress(), time.Now()
	for !cond() {
		if time.Since(moved) > stall {
			return false
		}
		<-time.After(50 * time.Millisecond) // bounded poll
		if v := progress(); v != last {
			last, moved = v, time.Now()
		}
	}
	return true
}

// poll calls cond every 50 ms until it holds or timeout passes.
func poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-time.After(50 * time.Millisecond) // bounded poll
	}
	return true
}
