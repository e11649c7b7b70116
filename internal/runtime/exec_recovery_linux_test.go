package runtime_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// alive reports whether pid can still run code: not a zombie, and not in
// the middle of exiting (its memory, and with it its environment, already
// gone: a SIGKILLed process reaches that before its state says Z).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil || strings.Contains(string(b), ") Z ") {
		return false
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	return err == nil && len(env) > 0
}

// A dead same-host worker's job still has a process here, one that left the
// job's process group where the exec guard cannot reach it: the recovering
// worker kills it before the job runs again.
func TestPruneKillsDeadWorkersJobProcesses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	id := fmt.Sprintf("testhost:%d:q", deadPid(t))
	old := exec.Command("sleep", "60")
	old.Env = append(os.Environ(), "RESQUE_WORKER="+id)
	old.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = old.Process.Kill(); _ = old.Wait() })
	ran := make(chan bool, 1)
	e.reg.Register("Again", func(ctx context.Context, j *worker.Job) error {
		ran <- alive(old.Process.Pid)
		return nil
	})
	now, err := e.client.Time(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]any{
		{"SET", k.Worker(id), string(protocol.EncodeWorkerRecord("q", now, []byte(`{"class":"Again","args":[]}`)))},
		{"SADD", k.Workers(), id},
	} {
		if _, err := e.client.Do(e.ctx(), cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	e.start(runtime.Config{Queues: "q", PruneInterval: 50 * time.Millisecond})
	select {
	case stillRunning := <-ran:
		if stillRunning {
			t.Error("the recovered job ran while the dead worker's job process still did")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the recovered job did not run")
	}
}
