package worker

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
)

// guardShells are the shells /bin/sh may be that are installed here: dash
// (Debian, Ubuntu), bash (Fedora, RHEL, Arch), busybox ash (Alpine).
func guardShells(t *testing.T) map[string][]string {
	shells := map[string][]string{}
	for name, argv := range map[string][]string{"dash": {"dash"}, "bash": {"bash"}, "busybox": {"busybox", "sh"}} {
		if p, err := exec.LookPath(argv[0]); err == nil {
			shells[name] = append([]string{p}, argv[1:]...)
		}
	}
	if len(shells) == 0 {
		t.Skip("no known shell installed")
	}
	return shells
}

func guardCmd(shell []string, command string) *exec.Cmd {
	c := exec.Command(shell[0], append(shell[1:], "-c", execGuard(command))...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// the guard's fd 3, which startGuard makes a pipe (closed when c's
	// last reference goes)
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		c.ExtraFiles = []*os.File{null}
	}
	return c
}

func waitFile(t *testing.T, path string) string {
	t.Helper()
	var b []byte
	redistest.Eventually(t, 0, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil && len(b) > 0 && b[len(b)-1] == '\n'
	}, path)
	return strings.TrimSpace(string(b))
}

func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// The guard script under each shell: stdin and statuses pass through, a
// signal to the group leaves the command its grace, and once the guard's
// parent is gone a signal makes it kill the whole group.
func TestExecGuardShells(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	for name, shell := range guardShells(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()

			c := guardCmd(shell, `read -r line; echo "$line|$#"; exit 3`)
			c.Stdin = strings.NewReader("payload\n")
			out, err := c.Output()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 || string(out) != "payload|0\n" {
				t.Errorf("status and stdin: %v %q", err, out)
			}

			err = guardCmd(shell, `kill -KILL $(sh -c 'echo $PPID')`).Run()
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Errorf("killed command: %v, want the guard killed by SIGKILL", err)
			}

			// A signal to the group (a cancelled job): the command's cleanup runs to its end.
			log := filepath.Join(dir, "log")
			c = guardCmd(shell, fmt.Sprintf(`trap 'sleep 0.2; echo cleaned >> %[1]q; exit 0' TERM; echo started >> %[1]q; sleep 30 & wait`, log))
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			waitFile(t, log)
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
			if err := c.Wait(); err != nil {
				t.Errorf("cancelled command: %v", err)
			}
			if b, _ := os.ReadFile(log); string(b) != "started\ncleaned\n" {
				t.Errorf("cancelled command's log: %q", b)
			}

			// The parent (here a shell leading the group) dies; the signal the
			// guard then gets makes it kill the group, grandchild included.
			// (While the parent lives, a signal leaves the job alone: above.)
			gpid, cpid := filepath.Join(dir, "guard.pid"), filepath.Join(dir, "child.pid")
			argv := strings.Join(append(append([]string{}, shell...), "-c", `"$1"`), " ")
			parent := exec.Command("/bin/sh", "-c", fmt.Sprintf(`%s & echo $! > %q; wait`, argv, gpid), "sh",
				execGuard(fmt.Sprintf(`sleep 60 & echo $! > %q; wait`, cpid)))
			parent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			guard, _ := strconv.Atoi(waitFile(t, gpid))
			child, _ := strconv.Atoi(waitFile(t, cpid))
			_ = parent.Process.Kill()
			_ = parent.Wait()
			_ = syscall.Kill(guard, syscall.SIGTERM) // what Pdeathsig sends
			deadline := time.Now().Add(10 * time.Second)
			for running(child) || running(guard) {
				if time.Now().After(deadline) {
					_ = syscall.Kill(-parent.Process.Pid, syscall.SIGKILL)
					t.Fatalf("orphaned guard did not kill its group (guard %v, child %v)", running(guard), running(child))
				}
				<-time.After(10 * time.Millisecond) // bounded poll
			}
		})
	}
}
