package runtime_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// A cap of 3 on a class, served by 3 workers of 8 slots: at most 3 of its
// jobs run at once (counted inside the handler), every job runs once, and
// another class on the same queue keeps running while the capped one waits.
func TestLimitsCapAcrossWorkers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n, capN = 60, 3
	var mu sync.Mutex
	running, most, capped, other := 0, 0, 0, 0
	otherWhileBusy := 0
	done := make(chan struct{})
	e.reg.Register("Capped", func(ctx context.Context, j *worker.Job) error {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		<-time.After(5 * time.Millisecond)
		mu.Lock()
		running--
		capped++
		if capped == n {
			close(done)
		}
		mu.Unlock()
		return nil
	})
	e.reg.Register("Other", func(ctx context.Context, j *worker.Job) error {
		mu.Lock()
		other++
		if capped < n {
			otherWhileBusy++
		}
		mu.Unlock()
		return nil
	})
	for i := range n {
		e.push("q", `{"class":"Capped","args":[`+strconv.Itoa(i)+`]}`)
	}
	for i := range n {
		e.push("q", `{"class":"Other","args":[`+strconv.Itoa(i)+`]}`)
	}
	l, err := protocol.ParseLimit("Capped=" + strconv.Itoa(capN))
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"host-a", "host-b", "host-c"} {
		e.start(runtime.Config{Queues: "q", Concurrency: 8, Hostname: host, Limits: []protocol.Limit{l}})
	}
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		mu.Lock()
		c := capped
		mu.Unlock()
		k := e.client.Keys()
		t.Fatalf("capped jobs ran %d of %d; queue %d, parked %d", c, n, llen(e, k.Queue("q")), llen(e, k.LimitBase("class:Capped")+protocol.LimitParkedSuffix))
	}
	redistest.Eventually(t, 0, func() bool { mu.Lock(); defer mu.Unlock(); return other == n }, "every other job ran")
	mu.Lock()
	defer mu.Unlock()
	if most > capN {
		t.Errorf("%d capped jobs ran at once, cap %d", most, capN)
	}
	if otherWhileBusy == 0 {
		t.Errorf("no job of another class ran while the capped class was worked")
	}
	k := e.client.Keys()
	if n := llen(e, k.LimitBase("class:Capped")+protocol.LimitParkedSuffix); n != 0 {
		t.Errorf("parked left: %d", n)
	}
}

func llen(e *env, key string) int64 {
	v, err := e.client.Do(e.ctx(), "LLEN", key)
	if err != nil {
		e.t.Fatal(err)
	}
	return v.(int64)
}

// A job parked behind a holder killed without its finish goes back to its
// queue when the holder's lease ends, moved by the limits' sweep: the push
// wakes an idle slot of the worker (its wakers block on the queue), which
// runs the job without waiting for the safety claim.
func TestLimitsSweepWakesIdleSlot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ran := make(chan struct{})
	e.reg.Register("Capped", func(ctx context.Context, j *worker.Job) error {
		close(ran)
		return nil
	})
	l, err := protocol.ParseLimit("Capped=1")
	if err != nil {
		t.Fatal(err)
	}
	e.start(runtime.Config{Queues: "q", Concurrency: 4, Limits: []protocol.Limit{l}})
	// idle: the worker's waker blocks on the empty queue
	redistest.Eventually(t, 0, func() bool {
		v, err := e.client.Do(e.ctx(), "CLIENT", "LIST")
		return err == nil && strings.Contains(string(v.([]byte)), "cmd=blmove")
	}, "the worker idle, blocked on its queue")
	k := e.client.Keys()
	base := k.LimitBase(l.Name())
	// the cap's one slot held by a killed holder whose lease has ended, and
	// a job parked behind it
	past := time.Now().Add(-time.Second).UnixMilli()
	for _, cmd := range [][]any{
		{"ZADD", base + protocol.LimitHoldersSuffix, past, "dead-host:1:q:1"},
		{"RPUSH", base + protocol.LimitParkedSuffix, `{"queue":"q","payload":"{\"class\":\"Capped\",\"args\":[1]}"}`},
		{"SADD", k.LimitsIndex(), l.Name()},
	} {
		if _, err := e.client.Do(e.ctx(), cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	redistest.Eventually(t, 0, func() bool {
		select {
		case <-ran:
			return true
		default:
			return false
		}
	}, "the parked job ran")
	t.Logf("ran %v after it was parked", time.Since(start))
	if n := llen(e, base+protocol.LimitParkedSuffix); n != 0 {
		t.Errorf("parked left: %d", n)
	}
}
