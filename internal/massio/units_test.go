package massio_test

import (
	"context"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/redistest"
)

// Heartbeats register units and static pools; a retired unit's batches are
// handed back at the next allocator pass.
func TestHeartbeatAndRetire(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	clk := newClock()
	hb, err := massio.NewHeartbeat(massio.HeartbeatConfig{Client: e.c, Now: clk.Now, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	hb.Set([]string{"elsewhere"}, map[string][]string{"imports": {"n1-0", "n1-1"}})
	hb.Start(ctx)
	hb.Start(ctx) // idempotent
	redistest.Eventually(t, 0, func() bool { return e.int("ZCARD", e.ns+":pool:imports:heartbeats") == 2 }, "first beat")
	hb.Stop()
	hb.Stop()
	if e.str("ZSCORE", e.ns+":static:pools", "elsewhere") == "" || e.int("ZCARD", e.ns+":pool:imports:unit_queues") != 2 {
		t.Fatal("not registered")
	}
	// a static pool that only another host's config has is routable
	cfg := mustConfig(t, `
pools: {static: {general: {worker_count: 1}}, batch: {imports: {unit_count: 2, workers_per_unit: 1}}}
mapping: {static: {default: {default: general, x: elsewhere}}, batch: {default: {default: imports}}}`)
	a := e.allocator(cfg, clk)
	e.released("s1", "x", 1)
	if st := e.pass(a); st.Static.Moved != 1 || len(e.queued("elsewhere", "s1")) != 1 {
		t.Fatalf("registered pool not routed to: %+v", st)
	}
	e.releasedBatch("s1", "imp", 2)
	e.releasedBatch("s2", "imp", 2)
	e.pass(a)
	if len(e.units("imports", "n1-1")) != 1 {
		t.Fatal("n1-1 got no batch")
	}
	// the pool shrinks: n1-1's workers stopped, it is retired
	hb.Set(nil, map[string][]string{"imports": {"n1-0"}})
	if err := massio.RetireUnit(ctx, e.c, "imports", "n1-1"); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Second)
	if st := e.pass(a); st.HandedBack != 1 {
		t.Fatalf("retired unit: %+v", st)
	}
	e.pass(a)
	if len(e.units("imports", "n1-0")) != 2 || e.int("EXISTS", e.ns+":pool:imports:n1-1:queues") != 0 {
		t.Errorf("n1-0 %q", e.units("imports", "n1-0"))
	}
}

// Start and Stop are idempotent; a stopped allocator leaves work alone.
func TestAllocatorStartStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	passes := make(chan massio.PassStats, 100)
	a, err := massio.NewAllocator(massio.AllocatorConfig{Client: e.c, Config: mustConfig(t, staticConfig),
		Interval: 20 * time.Millisecond, OnPass: func(st massio.PassStats) {
			select {
			case passes <- st:
			default:
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		a.Start(ctx)
		a.Start(ctx)
		e.released("s1", "n", i)
		redistest.Eventually(t, 0, func() bool { return len(e.queued("general", "s1")) == i+1 }, "allocation")
		a.Stop()
		a.Stop()
	}
	e.released("s1", "n", 9)
	<-time.After(50 * time.Millisecond) // stopped: nothing moves in this window
	if e.int("LLEN", e.ns+":unassigned") != 1 {
		t.Error("a stopped allocator moved a job")
	}
}
