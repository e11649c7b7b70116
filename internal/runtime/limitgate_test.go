package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// concurrency counts a handler's runs at once.
type concurrency struct {
	mu            sync.Mutex
	running, most int
	done          atomic.Int64
}

func (c *concurrency) handler(d time.Duration) worker.HandlerFunc {
	return func(ctx context.Context, j *worker.Job) error {
		c.mu.Lock()
		c.running++
		c.most = max(c.most, c.running)
		c.mu.Unlock()
		<-time.After(d)
		c.mu.Lock()
		c.running--
		c.mu.Unlock()
		c.done.Add(1)
		return nil
	}
}

func (c *concurrency) max() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.most
}

// holders are a cap's holders, by member.
func holders(e *env, l protocol.Limit) []string {
	v, err := e.client.Do(e.ctx(), "ZRANGE", e.client.Keys().LimitBase(l.Name())+protocol.LimitHoldersSuffix, 0, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, m := range v.([]any) {
		out = append(out, string(m.([]byte)))
	}
	return out
}

// A cap with room for every slot of the worker is taken as a lease, one
// member a slot: its jobs take no hold of their own and their claims send
// no limits (no claim script decides a job: the cap's holders are the
// lease's members alone while the jobs run). The lease goes at the stop.
func TestLimitGateLeaseTakesNoHolds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var c concurrency
	e.reg.Register("Capped", c.handler(2*time.Millisecond))
	l, err := protocol.ParseLimit("Capped=10")
	if err != nil {
		t.Fatal(err)
	}
	w := e.start(runtime.Config{Queues: "q", Concurrency: 4, Limits: []protocol.Limit{l}})
	redistest.Eventually(t, 0, func() bool { return len(holders(e, l)) == 4 }, "the worker's lease taken")
	states, err := e.client.Limits(e.ctx(), time.Now())
	if err != nil || len(states) != 1 || states[0].Holders != 4 || states[0].Leased != 4 {
		t.Errorf("limits shown with the lease held: %+v, %v", states, err)
	}
	const n = 400
	var stray atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, m := range holders(e, l) {
				// a slot's first claim may have been sent before the
				// lease was taken (and held up while Redis loaded the
				// scripts): its hold is its own, claim sequence 1
				if !strings.HasSuffix(m, ":lease") && !strings.HasSuffix(m, ":1") {
					if stray.Add(1) == 1 {
						t.Logf("a hold of its own: %s", m)
					}
				}
			}
		}
	}()
	for i := range n {
		e.push("q", fmt.Sprintf(`{"class":"Capped","args":[%d]}`, i))
	}
	redistest.Eventually(t, 0, func() bool { return c.done.Load() == n }, "every job ran")
	close(stop)
	<-watched
	if s := stray.Load(); s > 0 {
		t.Errorf("%d reads of the holders found a hold of a job of its own under the lease", s)
	}
	if m := c.max(); m > 4 {
		t.Errorf("%d jobs ran at once on 4 slots", m)
	}
	w.Stop()
	if h := holders(e, l); len(h) != 0 {
		t.Errorf("holders after the stop: %q", h)
	}
}

// A cap of 10 worked by 3 workers of 8 slots: one worker's lease has room
// (8), the others decide each job in Redis and park what finds the cap
// full; the leaseholder gives its lease back then, and the parked jobs
// come back. At most 10 run at once, every job runs, none is left parked.
func TestLimitGateLeaseAndParkedJobsShareACap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var c concurrency
	e.reg.Register("Capped", c.handler(5*time.Millisecond))
	var other atomic.Int64
	e.reg.Register("Other", func(ctx context.Context, j *worker.Job) error { other.Add(1); return nil })
	l, err := protocol.ParseLimit("Capped=10")
	if err != nil {
		t.Fatal(err)
	}
	// a few seconds of work: the leases' steps (one a second) take, renew
	// and give back
	const n = 4000
	for _, host := range []string{"host-a", "host-b", "host-c"} {
		e.start(runtime.Config{Queues: "q", Concurrency: 8, Hostname: host, Limits: []protocol.Limit{l}})
	}
	redistest.Eventually(t, 0, func() bool { return len(holders(e, l)) == 8 }, "one worker's lease taken")
	for i := range n {
		e.push("q", fmt.Sprintf(`{"class":"Capped","args":[%d]}`, i), fmt.Sprintf(`{"class":"Other","args":[%d]}`, i))
	}
	// what the holders were made of while the jobs ran
	var leased, own, both int
	redistest.Eventually(t, 0, func() bool {
		var le, ow bool
		for _, m := range holders(e, l) {
			if strings.HasSuffix(m, ":lease") {
				le = true
			} else {
				ow = true
			}
		}
		switch {
		case le && ow:
			both++
		case le:
			leased++
		case ow:
			own++
		}
		return c.done.Load() == n && other.Load() == n
	}, "every job ran")
	t.Logf("holders read: %d times a lease alone, %d holds of jobs alone, %d both", leased, own, both)
	if m := c.max(); m > 10 {
		t.Errorf("%d capped jobs ran at once, cap 10", m)
	}
	if p := llen(e, e.client.Keys().LimitBase(l.Name())+protocol.LimitParkedSuffix); p != 0 {
		t.Errorf("parked left: %d", p)
	}
}

// The gate's rdb steps against garbage: holders or parked keys of
// another type leave the cap without a lease (its jobs are decided one by
// one), a rate's waiting list of another type gives no block.
func TestLimitGateGarbageKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	l, _ := protocol.ParseLimit("A=5")
	r, _ := protocol.ParseRate("B=100/1s")
	for _, cmd := range [][]any{
		{"SET", k.LimitBase(l.Name()) + protocol.LimitParkedSuffix, "x"},
		{"SET", k.LimitBase(r.Name()) + protocol.LimitWaitingSuffix, "x"},
	} {
		e.do(cmd[0].(string), cmd[1:]...)
	}
	held, err := e.client.LeaseLimits(e.ctx(), []rdb.CapLease{{Limit: l, Mode: rdb.LeaseTake, Members: []string{"h:1:q:1:lease"}}}, time.Now(), time.Minute)
	if err != nil || held[0] {
		t.Errorf("lease with a parked key of another type: %v, %v", held, err)
	}
	n, err := e.client.TakeRate(e.ctx(), r, 10, time.Now())
	if err != nil || n != 0 {
		t.Errorf("block with a waiting key of another type: %d, %v", n, err)
	}
	e.do("DEL", k.LimitBase(r.Name())+protocol.LimitWaitingSuffix)
	e.do("SET", k.LimitBase(r.Name())+protocol.LimitTATSuffix, "not a number")
	if n, err := e.client.TakeRate(e.ctx(), r, 10, time.Now()); err != nil || n != 2 {
		// 100/1s: a 10 ms interval, a tolerance of 10 ms: two starts now
		t.Errorf("block with a tat that is no number: %d, %v; want 2", n, err)
	}
}

// An entry of a cap's parked list that is not a job's (written by hand)
// goes to failed at the worker's next sweep, named there and in the
// worker's log; the list empties, so the worker takes the cap's lease.
// Before, the entry went round at the list's tail for good and the cap
// was never leased again.
func TestLimitGateGarbageParkedEntrySetAside(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var c concurrency
	e.reg.Register("Capped", c.handler(time.Millisecond))
	l, _ := protocol.ParseLimit("Capped=10")
	parked := e.client.Keys().LimitBase(l.Name()) + protocol.LimitParkedSuffix
	e.do("RPUSH", parked, "written by hand")
	e.start(runtime.Config{Queues: "q", Concurrency: 4, Limits: []protocol.Limit{l}})
	redistest.Eventually(t, 0, func() bool {
		n := 0
		for _, m := range holders(e, l) {
			if strings.HasSuffix(m, ":lease") {
				n++
			}
		}
		return n == 4
	}, "the worker's lease taken")
	if p := llen(e, parked); p != 0 {
		t.Errorf("parked: %d entries left", p)
	}
	failed := e.list(e.client.Keys().Failed())
	if len(failed) != 1 {
		t.Fatalf("failed: %q, want the entry set aside", failed)
	}
	f := decodeFailed(t, failed[0])
	if f.Exception != protocol.ExcBadPayload || !strings.Contains(f.Error, parked) || string(f.Payload) != `"written by hand"` {
		t.Errorf("failed entry: %s %q payload %s, want %s naming %s", f.Exception, f.Error, f.Payload, protocol.ExcBadPayload, parked)
	}
	for i := range 20 {
		e.push("q", fmt.Sprintf(`{"class":"Capped","args":[%d]}`, i))
	}
	redistest.Eventually(t, 0, func() bool { return c.done.Load() == 20 }, "the jobs ran")
}
