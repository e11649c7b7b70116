package massio_test

import (
	"context"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// unitBatches puts one committed batch per source (n jobs each) on unit
// n1-0 of pool imports, the only live unit.
func (e *env) unitBatches(jobs map[string]int) {
	e.t.Helper()
	e.beat("imports", "n1-0")
	for s, n := range jobs {
		e.releasedBatch(s, "import", n)
	}
	st := e.pass(e.allocator(mustConfig(e.t, testConfig), newClock()))
	if st.Batches[rdb.BatchAssigned] != len(jobs) {
		e.t.Fatalf("allocation: %+v", st)
	}
}

// In a batch pool, a source's weight gives its batch that many claims in a
// row on its unit, and its limit caps how many of its jobs run at once.
func TestUnitWeightAndLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("weight", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		if err := massio.SetWeight(ctx, e.c, "w3", 3); err != nil {
			t.Fatal(err)
		}
		e.unitBatches(map[string]int{"w3": 600, "w1": 300})
		w := e.worker(1, protocol.UnitSource("imports", "n1-0"))
		got := map[string]int{}
		for i := 0; i < 400; i++ {
			res, ok := w.claim()
			if !ok {
				t.Fatal("no job")
			}
			got[sourceOf(t, res.Payload)]++
			w.finish(res, rdb.OutcomeOK)
		}
		if got["w3"] != 300 || got["w1"] != 100 {
			t.Errorf("400 claims: %v, want w3 300, w1 100", got)
		}
	})
	t.Run("limit", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.unitBatches(map[string]int{"capped": 50, "free": 50})
		if err := massio.SetLimit(ctx, e.c, "capped", 1); err != nil {
			t.Fatal(err)
		}
		src := protocol.UnitSource("imports", "n1-0")
		var cappedW *worker
		var cappedRes rdb.ClaimResult
		for i := 0; i < 4; i++ {
			w := e.worker(i, src)
			res, ok := w.claim()
			if !ok {
				t.Fatal("no job")
			}
			if sourceOf(t, res.Payload) == "capped" {
				if cappedW != nil {
					t.Fatal("two jobs of the capped source running at once")
				}
				cappedW, cappedRes = w, res
			}
		}
		if cappedW == nil {
			t.Fatal("the capped source got no job")
		}
		cappedW.finish(cappedRes, rdb.OutcomeOK)
		got := map[string]int{}
		for i := 10; i < 12; i++ {
			res, ok := e.worker(i, src).claim()
			if !ok {
				t.Fatal("no job")
			}
			got[sourceOf(t, res.Payload)]++
		}
		if got["capped"] != 1 {
			t.Errorf("after the capped job ended: %v, want one more capped job", got)
		}
	})
}

// 8 slots of a unit draining concurrently (finish-and-claim, as the runtime
// does, so slots share script calls): the capped source never has more than
// its limit running, and every job runs once.
func TestUnitConcurrentDrainKeepsLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if err := massio.SetLimit(ctx, e.c, "capped", 1); err != nil {
		t.Fatal(err)
	}
	if err := massio.SetWeight(ctx, e.c, "heavy", 2); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"capped": 100, "heavy": 200, "plain": 100}
	e.unitBatches(want)
	l := e.drainConcurrently(protocol.UnitSource("imports", "n1-0"), 8)
	l.check(t, want)
	if m := l.most["capped"]; m > 1 {
		t.Errorf("the capped source had %d jobs running at once, limit 1", m)
	}
}

// A weighted source's batch that ends in the middle of its turn leaves no
// count behind in its unit's turns hash once the allocator finishes it, nor
// does a dead unit's when its batches are handed back.
func TestUnitTurnsClearedWithBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if err := massio.SetWeight(ctx, e.c, "w3", 3); err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	a := e.allocator(mustConfig(t, testConfig), clk)
	e.beat("imports", "n1-0")
	e.releasedBatch("w3", "import", 2)
	if st := e.pass(a); st.Batches[rdb.BatchAssigned] != 1 {
		t.Fatalf("allocation: %+v", st)
	}
	turns := e.ns + ":resque-go:unit_turns:imports:n1-0"
	w := e.worker(1, protocol.UnitSource("imports", "n1-0"))
	for i := 0; i < 2; i++ {
		res, ok := w.claim()
		if !ok {
			t.Fatal("no job")
		}
		w.finish(res, rdb.OutcomeOK)
	}
	if n := e.int("HLEN", turns); n != 1 {
		t.Fatalf("turns after 2 of 3 claims: %d fields, want 1", n)
	}
	clk.Add(100 * time.Millisecond) // the next sweep
	if st := e.pass(a); st.Finished != 1 {
		t.Fatalf("the done batch was not finished: %+v", st)
	}
	if n := e.int("EXISTS", turns); n != 0 {
		t.Errorf("the unit's turns outlive its finished batch: %v", e.strs("HGETALL", turns))
	}

	// a dead unit's turns go with it
	e.releasedBatch("w3", "import", 5)
	if st := e.pass(a); st.Batches[rdb.BatchAssigned] != 1 {
		t.Fatalf("allocation: %+v", st)
	}
	res, ok := w.claim()
	if !ok {
		t.Fatal("no job")
	}
	w.finish(res, rdb.OutcomeOK)
	if n := e.int("HLEN", turns); n != 1 {
		t.Fatalf("turns after a claim: %d fields, want 1", n)
	}
	clk.Add(time.Hour) // n1-0 beats no more: dead
	if st := e.pass(a); st.HandedBack != 1 {
		t.Fatalf("the dead unit's batch was not handed back: %+v", st)
	}
	if n := e.int("EXISTS", turns); n != 0 {
		t.Errorf("the dead unit's turns outlive it: %v", e.strs("HGETALL", turns))
	}
}
