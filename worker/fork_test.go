package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testChildEnv makes this test binary a fork-mode child (TestMain).
const testChildEnv = "RESQUE_GO_TEST_WORKER_CHILD"

var processStart = time.Now()

func TestMain(m *testing.M) {
	if os.Getenv(testChildEnv) == "1" {
		reg := NewRegistry()
		// Age reports how long its process had lived when the job came,
		// and what it was told of the job.
		reg.Register("Age", func(ctx context.Context, j *Job) error {
			return Discard(fmt.Sprintf("%d %s %s %s %s", time.Since(processStart).Milliseconds(), j.Queue, j.WorkerID,
				os.Getenv("RESQUE_QUEUE"), os.Getenv("RESQUE_WORKER")))
		})
		os.Exit(RunChild(context.Background(), reg, os.Getenv("RESQUE_QUEUE"), os.Getenv("RESQUE_WORKER"), os.Stdin, os.NewFile(3, "result")))
	}
	os.Exit(m.Run())
}

// runAge runs an Age job through h and returns its process's age at the
// job and what the job saw ("queue worker $RESQUE_QUEUE $RESQUE_WORKER").
func runAge(t *testing.T, h HandlerFunc, queue, worker string) (time.Duration, string) {
	t.Helper()
	err := h(context.Background(), &Job{Queue: queue, Class: "Age", Payload: []byte(`{"class":"Age","args":[]}`), WorkerID: worker})
	var d *DiscardError
	if !errors.As(err, &d) {
		t.Fatalf("the child answered %v", err)
	}
	ms, seen, _ := strings.Cut(d.Reason, " ")
	n, _ := strconv.Atoi(ms)
	return time.Duration(n) * time.Millisecond, seen
}

func gone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }

// With Prestart, a job finds its slot's process started ahead (it has lived
// since before the job) and learns its queue from the header; each slot
// has its own; Close stops the waiting ones. Without, each job's process
// starts with the job.
func TestForkPoolStartsAhead(t *testing.T) {
	cfg := ForkConfig{Command: []string{os.Args[0]}, Env: []string{testChildEnv + "=1"}}
	// A process started ahead has lived about wait when its job comes;
	// one started with its job, a few ms (some 100 under the race
	// detector): half of wait tells them apart.
	const wait = time.Second
	const ahead = wait / 2
	plain := ForkHandler(cfg)
	runAge(t, plain, "q1", "host:1:q1")
	time.Sleep(wait)
	if age, seen := runAge(t, plain, "q2", "host:1:q1"); age >= ahead || seen != "q2 host:1:q1 q2 host:1:q1" {
		t.Errorf("without Prestart: age %v, saw %q", age, seen)
	}

	cfg.Prestart = true
	p := NewForkPool(cfg)
	h := p.Handler()
	if age, seen := runAge(t, h, "q1", "host:1:q1"); age >= ahead || seen != "q1 host:1:q1 q1 host:1:q1" {
		t.Errorf("first job: age %v, saw %q", age, seen)
	}
	time.Sleep(wait)
	if age, seen := runAge(t, h, "q2", "host:1:q1"); age < ahead || seen != "q2 host:1:q1 q2 host:1:q1" {
		t.Errorf("second job: age %v (want a process started ahead), saw %q", age, seen)
	}
	if age, seen := runAge(t, h, "q1", "host:1:q1-2"); age >= ahead || seen != "q1 host:1:q1-2 q1 host:1:q1-2" {
		t.Errorf("another slot's first job: age %v, saw %q", age, seen)
	}
	var pids []int
	waitFor(t, "a process ready for each slot", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		pids = pids[:0]
		for _, c := range p.ready {
			if c != nil {
				pids = append(pids, c.cmd.Process.Pid)
			}
		}
		return len(pids) == 2
	})
	p.Close()
	for _, pid := range pids {
		waitFor(t, fmt.Sprintf("process %d stopped by Close", pid), func() bool { return gone(pid) })
	}
	if age, _ := runAge(t, h, "q1", "host:1:q1"); age >= ahead {
		t.Errorf("a job after Close got a process started ahead (age %v)", age)
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
	waitFor(t, "a process started ahead", func() bool { c = ready(); return c != nil })
	pid := c.cmd.Process.Pid
	waitFor(t, "the idle process stopped", func() bool { return ready() == nil && gone(pid) })

	forkIdle = time.Minute
	runAge(t, h, "q", "host:1:q")
	waitFor(t, "a process started ahead", func() bool { c = ready(); return c != nil })
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.exited
	if _, seen := runAge(t, h, "q", "host:1:q"); seen != "q host:1:q q host:1:q" {
		t.Errorf("after the ready process died the job saw %q", seen)
	}
}

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
