package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
)

// testChildEnv makes this test binary a fork-mode child (TestMain).
const testChildEnv = "RESQUE_GO_TEST_WORKER_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(testChildEnv) == "1" {
		reg := NewRegistry()
		// Who reports its process's pid and what it was told of the job.
		reg.Register("Who", func(ctx context.Context, j *Job) error {
			return Discard(fmt.Sprintf("%d %s %s %s %s", os.Getpid(), j.Queue, j.WorkerID,
				os.Getenv("RESQUE_QUEUE"), os.Getenv("RESQUE_WORKER")))
		})
		os.Exit(RunChild(context.Background(), reg, os.Getenv("RESQUE_QUEUE"), os.Getenv("RESQUE_WORKER"), os.Stdin, os.NewFile(3, "result")))
	}
	// The examples read a real server's URL from REDIS_URL.
	os.Exit(redistest.Main(m, "REDIS_URL"))
}

// runWho runs a Who job through h and returns the pid of its process and
// what the job saw ("queue worker $RESQUE_QUEUE $RESQUE_WORKER").
func runWho(t *testing.T, h HandlerFunc, queue, worker string) (int, string) {
	t.Helper()
	err := h(context.Background(), &Job{Queue: queue, Class: "Who", Payload: []byte(`{"class":"Who","args":[]}`), WorkerID: worker})
	var d *DiscardError
	if !errors.As(err, &d) {
		t.Fatalf("the child answered %v", err)
	}
	pid, seen, _ := strings.Cut(d.Reason, " ")
	n, _ := strconv.Atoi(pid)
	return n, seen
}

func gone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }

// readyPID waits until worker id has a process started ahead and returns
// its pid.
func readyPID(t *testing.T, p *ForkPool, id string) int {
	t.Helper()
	pid := 0
	redistest.Eventually(t, 0, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		if c := p.ready[id]; c != nil {
			pid = c.cmd.Process.Pid
		}
		return pid != 0
	}, "a process started ahead for "+id)
	return pid
}

// With Prestart, a job runs in the process its slot started ahead and
// learns its queue from the header; each slot has its own; Close stops the
// waiting ones. Without, no process is started ahead.
func TestForkPoolStartsAhead(t *testing.T) {
	cfg := ForkConfig{Command: []string{os.Args[0]}, Env: []string{testChildEnv + "=1"}}
	plain := NewForkPool(cfg)
	h := plain.Handler()
	for _, q := range []string{"q1", "q2"} {
		if _, seen := runWho(t, h, q, "host:1:q1"); seen != q+" host:1:q1 "+q+" host:1:q1" {
			t.Errorf("without Prestart: saw %q", seen)
		}
	}
	if len(plain.ready) != 0 {
		t.Errorf("without Prestart %d processes were started ahead", len(plain.ready))
	}

	cfg.Prestart = true
	p := NewForkPool(cfg)
	h = p.Handler()
	first, seen := runWho(t, h, "q1", "host:1:q1")
	if seen != "q1 host:1:q1 q1 host:1:q1" {
		t.Errorf("first job saw %q", seen)
	}
	ahead := readyPID(t, p, "host:1:q1")
	if ahead == first {
		t.Fatalf("the process started ahead is the first job's (%d)", first)
	}
	if pid, seen := runWho(t, h, "q2", "host:1:q1"); pid != ahead || seen != "q2 host:1:q1 q2 host:1:q1" {
		t.Errorf("second job: ran in %d, want %d (started ahead); saw %q", pid, ahead, seen)
	}
	if _, seen := runWho(t, h, "q1", "host:1:q1-2"); seen != "q1 host:1:q1-2 q1 host:1:q1-2" {
		t.Errorf("another slot's first job saw %q", seen)
	}
	pids := []int{readyPID(t, p, "host:1:q1"), readyPID(t, p, "host:1:q1-2")}
	p.Close()
	for _, pid := range pids {
		redistest.Eventually(t, 0, func() bool { return gone(pid) }, fmt.Sprintf("process %d stopped by Close", pid))
	}
	if pid, _ := runWho(t, h, "q1", "host:1:q1"); slices.Contains(pids, pid) {
		t.Errorf("a job after Close ran in a process started ahead (%d)", pid)
	}
	p.mu.Lock()
	n := len(p.ready)
	p.mu.Unlock()
	if n != 0 {
		t.Errorf("%d processes started ahead after Close", n)
	}
}

// A process started ahead that waits forkIdle is stopped; one that died
// waiting is not given a job (the job gets a new one and succeeds).
func TestForkPoolIdleAndDeadProcesses(t *testing.T) {
	defer func(d time.Duration) { forkIdle = d }(forkIdle)
	forkIdle = 300 * time.Millisecond
	p := NewForkPool(ForkConfig{Command: []string{os.Args[0]}, Env: []string{testChildEnv + "=1"}, Prestart: true})
	defer p.Close()
	h := p.Handler()
	ready := func() *forkChild {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.ready["host:1:q"]
	}
	// what a job does first (a job's own process could outlive forkIdle
	// under the race detector)
	if c := p.take("host:1:q"); c != nil {
		t.Fatal("a process was ready before any job")
	}
	var c *forkChild
	redistest.Eventually(t, 0, func() bool { c = ready(); return c != nil }, "a process started ahead")
	pid := c.cmd.Process.Pid
	redistest.Eventually(t, 0, func() bool { return ready() == nil && gone(pid) }, "the idle process stopped")

	forkIdle = time.Minute
	runWho(t, h, "q", "host:1:q")
	redistest.Eventually(t, 0, func() bool { c = ready(); return c != nil }, "a process started ahead")
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.exited
	if _, seen := runWho(t, h, "q", "host:1:q"); seen != "q host:1:q q host:1:q" {
		t.Errorf("after the ready process died the job saw %q", seen)
	}
}
