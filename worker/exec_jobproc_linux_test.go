package worker_test

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

	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/worker"
)

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// KillJobProcesses finds the processes of a dead worker's job by their
// RESQUE_WORKER variable, even those that left the job's process group and
// session, kills them and waits until they are gone; it spares any other.
func TestKillJobProcesses(t *testing.T) {
	t.Parallel()
	id := "testhost:" + strconv.Itoa(os.Getpid()) + ":" + filepath.Base(t.TempDir())
	pidFile := filepath.Join(t.TempDir(), "pid")
	job := exec.Command("/bin/sh", "-c", fmt.Sprintf(`sleep 60 & echo $! > %q; sleep 60; :`, pidFile))
	job.Env = append(os.Environ(), "RESQUE_WORKER="+id)
	job.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	spared := []*exec.Cmd{exec.Command("sleep", "60"), exec.Command("sleep", "60"), exec.Command("sleep", "60")}
	spared[0].Env = append(os.Environ(), "RESQUE_WORKER="+id+"x")
	spared[1].Env = append(os.Environ(), "OTHER_RESQUE_WORKER="+id)
	spared[2].Env = append(os.Environ(), "RESQUE_WORKER=x"+id)
	for _, c := range append(spared, job) {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	}
	var grandchild int
	redistest.Eventually(t, 0, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		grandchild, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, "job started")
	n, err := worker.KillJobProcesses(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("killed %d processes, want 3 (the shell and its two sleeps)", n)
	}
	if alive(job.Process.Pid) || alive(grandchild) {
		t.Errorf("job processes still alive: shell %v, grandchild %v", alive(job.Process.Pid), alive(grandchild))
	}
	for _, c := range spared {
		if !alive(c.Process.Pid) {
			t.Errorf("%v was killed", c.Env[len(c.Env)-1])
		}
	}
	if n, err := worker.KillJobProcesses(context.Background(), id); n != 0 || err != nil {
		t.Errorf("second call: %d, %v", n, err)
	}
	if _, err := worker.KillJobProcesses(context.Background(), ""); err == nil {
		t.Error("an empty id was accepted")
	}
}
