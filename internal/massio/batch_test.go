package massio_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

func (e *env) units(pool, unit string) []string {
	return e.strs("LRANGE", e.ns+":pool:"+pool+":"+unit+":queues", 0, -1)
}

// Batches go to the least-loaded live unit (ties: lowest id); a source with
// an active batch waits in its backlog; a finished batch hands the next on.
func TestBatchAllocation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	clk := newClock()
	a := e.allocator(mustConfig(t, testConfig), clk)
	e.beat("imports", "n1-10", "n1-2", "n0-5")
	e.do("ZADD", e.ns+":pool:imports:unit_queues", 0, "pool:imports:dead-0:queues") // registered, never beat
	b1 := e.releasedBatch("s1", "import", 3)
	b2 := e.releasedBatch("s1", "import", 2)
	b3 := e.releasedBatch("s2", "import", 1)
	b4 := e.releasedBatch("s4", "import", 1)
	b5 := e.releasedBatch("s5", "import", 1)
	miss := e.releasedBatch("s3", "report", 1)
	st := e.pass(a)
	if st.Batches[rdb.BatchAssigned] != 4 || st.Batches[rdb.BatchBacklog] != 1 || st.Batches[rdb.BatchFailed] != 1 {
		t.Fatalf("pass: %+v", st)
	}
	// ties go to the lowest id: node n0 before n1, then by number (2 < 10)
	if got := e.units("imports", "n0-5"); len(got) != 2 || got[1] != b1 || got[0] != b5 {
		t.Errorf("n0-5: %q", got)
	}
	if got := e.units("imports", "n1-2"); len(got) != 1 || got[0] != b3 {
		t.Errorf("n1-2: %q", got)
	}
	if got := e.units("imports", "n1-10"); len(got) != 1 || got[0] != b4 {
		t.Errorf("n1-10: %q", got)
	}
	if got := e.strs("LRANGE", e.ns+":pool:imports:backlog:s1", 0, -1); len(got) != 1 || got[0] != b2 {
		t.Errorf("backlog: %q", got)
	}
	if got := e.str("HGET", e.ns+":pool:imports", "s1"); got != "n0-5" {
		t.Errorf("pool:imports s1 = %q", got)
	}
	fs, _ := massio.Failures(ctx, e.c)
	if len(fs) != 1 || fs[0].ID != miss || fs[0].Kind != massqueue.KindBatch ||
		fs[0].Reason != "batch pool missing_batch (from mapping.batch.s3.report) does not exist" {
		t.Errorf("failures: %+v", fs)
	}
	// b1 drains: the sweep finishes it and b2 goes to committed, then to a unit
	e.do("DEL", e.ns+":committed:"+b1)
	clk.Add(time.Second)
	st = e.pass(a)
	if st.Finished != 1 {
		t.Fatalf("finish pass: %+v", st)
	}
	if got := e.units("imports", "n0-5"); len(got) != 1 || got[0] != b5 {
		t.Errorf("n0-5 after finish: %q", got)
	}
	e.pass(a)
	if got := e.str("HGET", e.ns+":pool:imports", "s1"); got == "" || !strings.Contains(strings.Join(e.units("imports", got), ","), b2) {
		t.Errorf("b2 not active after b1 finished (s1 on %q)", got)
	}
	if e.int("EXISTS", e.ns+":pool:imports:backlog:s1") != 0 {
		t.Error("backlog left")
	}
	// the failure is re-allocatable once its pool exists
	_ = massio.SetRoute(ctx, e.c, "s3", "report", "imports")
	if n, _ := massio.ReallocateAll(ctx, e.c); n != 1 {
		t.Fatal("reallocate")
	}
	if st := e.pass(a); st.Batches[rdb.BatchAssigned] != 1 {
		t.Errorf("reallocated batch: %+v", st)
	}
}

// A unit silent past DeadAfter is dead: its batches go back to committed
// (a batch with a job still held waits for it) and to the live units.
func TestDeadUnitHandback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clk := newClock()
	a := e.allocator(mustConfig(t, testConfig), clk)
	e.beat("imports", "n1-0", "n1-1")
	var ids []string
	for _, s := range []string{"s1", "s2", "s3", "s4"} {
		ids = append(ids, e.releasedBatch(s, "import", 2))
	}
	e.pass(a)
	dead := e.units("imports", "n1-1")
	if len(dead) != 2 {
		t.Fatalf("n1-1: %q", dead)
	}
	// a worker holds a job of one of n1-1's batches (claim sequence 7)
	e.do("HSET", e.ns+":resque-go:claim_seq", "w1", 7)
	e.do("HSET", e.ns+":batch:holders:"+dead[0], "w1", 7)
	// n1-0 keeps beating, n1-1 stops
	clk.Add(31 * time.Second)
	if err := e.c.UnitBeat(context.Background(), "imports", "n1-0", clk.Now()); err != nil {
		t.Fatal(err)
	}
	st := e.pass(a)
	if st.HandedBack != 1 {
		t.Fatalf("pass: %+v", st)
	}
	if got := e.units("imports", "n1-1"); len(got) != 1 || got[0] != dead[0] {
		t.Errorf("held batch left the dead unit: %q", got)
	}
	e.pass(a) // allocate the handed-back batch
	if got := e.units("imports", "n1-0"); len(got) != 3 {
		t.Errorf("n1-0: %q", got)
	}
	// the held job ends (its finish moves the sequence on)
	e.do("HINCRBY", e.ns+":resque-go:claim_seq", "w1", 1)
	clk.Add(2 * time.Second)
	e.pass(a)
	e.pass(a)
	if got := e.units("imports", "n1-0"); len(got) != 4 {
		t.Errorf("n1-0 after the held job ended: %q", got)
	}
	if e.int("EXISTS", e.ns+":pool:imports:n1-1:queues") != 0 || e.str("ZSCORE", e.ns+":pool:imports:unit_queues", "pool:imports:n1-1:queues") != "" {
		t.Error("dead unit still in the pool")
	}
	for _, s := range []string{"s1", "s2", "s3", "s4"} {
		if got := e.str("HGET", e.ns+":pool:imports", s); got != "n1-0" {
			t.Errorf("source %s on %q", s, got)
		}
	}
}

// A batch whose pool has keys written by hand with another type (a unit's
// list, a source's backlog, the pool's source map) is recorded in
// batch:allocation_failures with the reason, not lost with its id popped
// from committed, and nothing of it is written in the pool; once the key
// is fixed, `mass reallocate` places it.
func TestBatchAllocationSurvivesKeysOfTheWrongType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reason := func(e *env, id string) string {
		t.Helper()
		fs, err := massio.Failures(ctx, e.c)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if f.ID == id {
				return f.Reason
			}
		}
		return ""
	}
	retry := func(e *env, a *massio.Allocator, id string, want rdb.BatchResult) {
		t.Helper()
		if n, err := massio.Reallocate(ctx, e.c, id); err != nil || n != 1 {
			t.Fatalf("reallocate %s: %d %v", id, n, err)
		}
		if st := e.pass(a); st.Batches[want] != 1 {
			t.Fatalf("pass after reallocate: %+v, want %s", st, want)
		}
	}
	e := newEnv(t)
	cfg := mustConfig(t, testConfig)
	a := e.allocator(cfg, newClock())
	e.beat("imports", "n1-0")
	e.do("SET", e.ns+":pool:imports:n1-0:queues", "not a list")
	b1 := e.releasedBatch("s1", "import", 1)
	// a pass's sweep of the unit would stop on that list first (an error
	// the allocator logs, nothing popped): the allocation step alone
	r, err := e.c.AllocateBatch(ctx, rdb.AllocArgs{Routing: cfg.Routing(), Now: time.Unix(1700000000, 0), Alive: 30 * time.Second})
	if err != nil || r.Result != rdb.BatchFailed {
		t.Fatalf("allocate: %+v %v", r, err)
	}
	if r := reason(e, b1); !strings.Contains(r, "pool:imports:n1-0:queues: WRONGTYPE") {
		t.Errorf("b1's reason: %q", r)
	}
	if got := e.str("HGET", e.ns+":pool:imports", "s1"); got != "" {
		t.Errorf("s1 holds n1-0 without its batch there")
	}
	e.do("DEL", e.ns+":pool:imports:n1-0:queues")
	retry(e, a, b1, rdb.BatchAssigned)
	if got := e.units("imports", "n1-0"); len(got) != 1 || got[0] != b1 {
		t.Errorf("n1-0: %q", got)
	}
	// broken writes key with another type, commits a batch of source that
	// a pass must record with the reason saying want, then fixes the key
	// and reallocates the batch, which must end as after
	broken := func(e *env, a *massio.Allocator, key, source, want string, after rdb.BatchResult) {
		t.Helper()
		e.do("SET", e.ns+":"+key, "not a list or hash")
		id := e.releasedBatch(source, "import", 1)
		if st := e.pass(a); st.Batches[rdb.BatchFailed] != 1 {
			t.Fatalf("pass: %+v", st)
		}
		if r := reason(e, id); !strings.Contains(r, want) {
			t.Errorf("%s's reason: %q, want %q", id, r, want)
		}
		e.do("DEL", e.ns+":"+key)
		retry(e, a, id, after)
	}
	// s1 is active: its next batch waits in a backlog that is not a list
	broken(e, a, "pool:imports:backlog:s1", "s1", "pool:imports:backlog:s1: WRONGTYPE", rdb.BatchBacklog)
	// the pool's source map
	e2 := newEnv(t)
	a2 := e2.allocator(mustConfig(t, testConfig), newClock())
	e2.beat("imports", "n1-0")
	broken(e2, a2, "pool:imports", "s3", "pool:imports is a string, not a hash", rdb.BatchAssigned)
}
