package runtime_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// A serial queue served by 8 slots in 2 workers runs one job at a time, in
// FIFO order, and its lock outlives a job longer than the lock's time to
// live (refreshed); a normal queue on the same workers keeps draining.
func TestSerialQueueOneAtATime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 30
	var mu sync.Mutex
	running, most := 0, 0
	var order []int
	serialDone := make(chan struct{})
	normal := 0
	normalBeforeSerialEnd := -1
	e.reg.Register("S", func(ctx context.Context, j *worker.Job) error {
		var args []int
		if err := json.Unmarshal(j.Args, &args); err != nil {
			return err
		}
		mu.Lock()
		running++
		most = max(most, running)
		order = append(order, args[0])
		mu.Unlock()
		d := 2 * time.Millisecond
		if args[0]%10 == 0 {
			d = 800 * time.Millisecond // longer than the lock's time to live
		}
		<-time.After(d)
		mu.Lock()
		running--
		if len(order) == n && running == 0 {
			normalBeforeSerialEnd = normal
			close(serialDone)
		}
		mu.Unlock()
		return nil
	})
	e.reg.Register("N", func(ctx context.Context, j *worker.Job) error {
		mu.Lock()
		normal++
		mu.Unlock()
		return nil
	})
	for i := range n {
		e.push("serial", `{"class":"S","args":[`+strconv.Itoa(i)+`]}`)
		e.push("normal", `{"class":"N","args":[`+strconv.Itoa(i)+`]}`)
	}
	for _, host := range []string{"host-a", "host-b"} { // two processes
		e.start(runtime.Config{Queues: "serial,normal", Serial: []string{"serial"}, Concurrency: 4, Hostname: host,
			LockTTL: 600 * time.Millisecond, SerialPoll: 20 * time.Millisecond})
	}
	select {
	case <-serialDone:
	case <-time.After(30 * time.Second):
		t.Fatalf("serial jobs did not finish: %v", order)
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("%d serial jobs ran at once", most)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("serial order %v, want FIFO", order)
		}
	}
	if normalBeforeSerialEnd != n {
		t.Errorf("%d of %d normal jobs ran while the serial queue was worked", normalBeforeSerialEnd, n)
	}
	// the last job's finish releases the lock
	redistest.Eventually(t, 0, func() bool { return e.get(e.client.Keys().SerialLock("serial")) == "" }, "serial lock released")
}

// A lock whose holder died is taken once it expires.
func TestSerialLockOfDeadHolderExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	if _, err := e.client.Do(e.ctx(), "SET", k.SerialLock("serial"), "0123456789abcdef0123456789abcdef", "PX", 400); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	holder := make(chan string, 1)
	e.reg.Register("S", func(ctx context.Context, j *worker.Job) error {
		holder <- e.get(k.SerialLock("serial"))
		return nil
	})
	e.push("serial", `{"class":"S","args":[]}`)
	e.start(runtime.Config{Queues: "serial", Serial: []string{"serial"}, OnFinish: rec.add, SerialPoll: 20 * time.Millisecond})
	rec.waitN(t, 1)
	if h := <-holder; h == "" || h == "0123456789abcdef0123456789abcdef" {
		t.Errorf("the job ran under lock %q: the dead holder's, or none", h)
	}
	if v := e.get(k.SerialLock("serial")); v != "" {
		t.Errorf("lock left behind: %q", v)
	}
}

// Drain (Ruby's INTERVAL=0) with a serial queue: a worker that finds the
// queue locked by another holder is not done while the queue has jobs; it
// waits for the lock and runs every job before it stops by itself.
func TestDrainWithSerialQueueRunsEveryJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	// another process holds the lock for a while
	if _, err := e.client.Do(e.ctx(), "SET", k.SerialLock("serial"), "0123456789abcdef0123456789abcdef", "PX", 300); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	e.reg.Register("S", func(ctx context.Context, j *worker.Job) error { return nil })
	const n = 12
	for range n {
		e.push("serial", `{"class":"S","args":[]}`)
	}
	w := e.start(runtime.Config{Queues: "serial", Serial: []string{"serial"}, Concurrency: 2, Drain: true,
		OnFinish: rec.add, SerialPoll: 10 * time.Millisecond})
	select {
	case <-w.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the draining worker did not stop")
	}
	if got := len(rec.all()); got != n {
		t.Errorf("%d of %d jobs ran before the worker stopped", got, n)
	}
}
