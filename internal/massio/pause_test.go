package massio_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

// ledger counts the jobs finished OK, by source and number.
type ledger map[string]int

func (l ledger) add(t testing.TB, p []byte) string {
	v := view(t, p)
	l[fmt.Sprintf("%s/%d", v.SourceID, v.Args.N)]++
	return v.SourceID
}

// exactlyOnce checks that every job of the sources (n jobs each) finished
// once.
func (l ledger) exactlyOnce(t testing.TB, n map[string]int) {
	t.Helper()
	want := 0
	for s, k := range n {
		want += k
		for i := 0; i < k; i++ {
			if got := l[fmt.Sprintf("%s/%d", s, i)]; got != 1 {
				t.Errorf("job %s/%d finished %d times", s, i, got)
			}
		}
	}
	if len(l) != want {
		t.Errorf("%d jobs finished, want %d: %v", len(l), want, l)
	}
}

// drain claims and finishes (OK) every job w can get, recording each, and
// returns the sources served in order.
func (w *worker) drain(l ledger) []string {
	w.e.t.Helper()
	var srcs []string
	for {
		res, ok := w.claim()
		if !ok {
			return srcs
		}
		srcs = append(srcs, l.add(w.e.t, res.Payload))
		w.finish(res, rdb.OutcomeOK)
	}
}

func (e *env) status() massqueue.Status {
	e.t.Helper()
	st, err := massio.GetStatus(context.Background(), e.c, nil, time.Unix(1700000000, 0), time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// sourceStatus is the source's entry in the imports pool's status.
func (e *env) sourceStatus(source string) massqueue.SourceBatches {
	e.t.Helper()
	for _, p := range e.status().Batch {
		if p.Pool != "imports" {
			continue
		}
		for _, s := range p.Sources {
			if s.Source == source {
				return s
			}
		}
	}
	return massqueue.SourceBatches{}
}

// Two sources' batches on one unit; pausing one parks its batch: the
// unit's workers serve only the other, its running job (here retried)
// finishes, and after resume the rest of its batch runs, every job once.
func TestBatchPauseResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	clk := newClock()
	a := e.allocator(mustConfig(t, testConfig), clk)
	e.beat("imports", "n1-0")
	b1 := e.releasedBatch("s1", "import", 5)
	b2 := e.releasedBatch("s2", "import", 5)
	e.pass(a)
	src := protocol.UnitSource("imports", "n1-0")
	w1, w2 := e.worker(1, src), e.worker(2, src)
	running, ok := w1.claim()
	if !ok || sourceOf(t, running.Payload) != "s1" {
		t.Fatalf("first claim: %s", running.Payload)
	}

	r, err := massio.PauseSource(ctx, e.c, "s1")
	if err != nil || r.Already || len(r.Batches) != 1 || r.Batches[0] != (massqueue.PausedBatch{Pool: "imports", ID: b1, Unit: "n1-0", New: true}) {
		t.Fatalf("pause: %+v %v", r, err)
	}
	if got := e.units("imports", "n1-0"); len(got) != 1 || got[0] != b2 {
		t.Fatalf("unit list while paused: %q", got)
	}
	if r, err := massio.PauseSource(ctx, e.c, "s1"); err != nil || !r.Already || len(r.Batches) != 1 || r.Batches[0].New {
		t.Fatalf("second pause: %+v %v", r, err)
	}
	s := e.sourceStatus("s1")
	if !s.Paused || !s.Parked || s.Active != b1 || s.Unit != "n1-0" || s.Remaining != 4 {
		t.Fatalf("status while paused: %+v", s)
	}
	if st := e.status(); len(st.Paused) != 1 || st.Paused[0] != "s1" {
		t.Fatalf("paused sources: %v", st.Paused)
	}

	l := ledger{}
	if got := w2.drain(l); len(got) != 5 {
		t.Fatalf("served %q while s1 is paused, want s2's 5 jobs", got)
	}
	if l["s1/1"]+l["s1/2"]+l["s1/3"]+l["s1/4"] != 0 {
		t.Fatal("a paused source's batch was served")
	}
	// the job running at the pause fails and is retried: it goes back to
	// its batch, which waits
	w1.finish(running, rdb.OutcomeRetry)
	if _, ok := w2.claim(); ok {
		t.Fatal("a job was served while the only other batch is parked")
	}
	clk.Add(time.Second)
	if st := e.pass(a); st.Finished != 1 { // s2's batch; the parked one has jobs left
		t.Fatalf("sweep while paused: %+v", st)
	}
	if e.str("HGET", e.ns+":pool:imports", "s1") != "n1-0" || e.str("HGET", e.ns+":batch:paused:imports", "s1") != b1 {
		t.Fatal("the sweep touched the parked batch")
	}

	rr, err := massio.ResumeSource(ctx, e.c, "s1", massqueue.ResumeOptions{Now: clk.Now()})
	if err != nil || !rr.WasPaused || len(rr.Batches) != 1 || rr.Batches[0] != (massqueue.ResumedBatch{Pool: "imports", ID: b1, Unit: "n1-0", Result: "unit"}) {
		t.Fatalf("resume: %+v %v", rr, err)
	}
	if rr, err := massio.ResumeSource(ctx, e.c, "s1", massqueue.ResumeOptions{Now: clk.Now()}); err != nil || rr.WasPaused || len(rr.Batches) != 0 {
		t.Fatalf("second resume: %+v %v", rr, err)
	}
	for _, got := range w1.drain(l) {
		if got != "s1" {
			t.Fatalf("served %s after resume", got)
		}
	}
	l.exactlyOnce(t, map[string]int{"s1": 5, "s2": 5})
	clk.Add(time.Second)
	if st := e.pass(a); st.Finished != 1 {
		t.Fatalf("finish after resume: %+v", st)
	}
	if e.int("HLEN", e.ns+":pool:imports") != 0 || e.int("EXISTS", e.ns+":batch:paused:imports") != 0 ||
		e.int("EXISTS", e.ns+":pool:imports:n1-0:queues") != 0 {
		t.Error("state left behind")
	}
}

// A paused batch whose unit dies (holding one of its jobs) is handed back
// once the job is recovered and parked on the live unit; resume runs it
// there, nothing lost.
func TestBatchPauseUnitDies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	clk := newClock()
	a := e.allocator(mustConfig(t, testConfig), clk)
	e.beat("imports", "n1-0", "n1-1")
	b1 := e.releasedBatch("s1", "import", 5)
	e.pass(a)
	if got := e.units("imports", "n1-0"); len(got) != 1 || got[0] != b1 {
		t.Fatalf("n1-0: %q", got)
	}
	dying := e.worker(1, protocol.UnitSource("imports", "n1-0"))
	held, ok := dying.claim()
	if !ok {
		t.Fatal("no job")
	}
	if err := massio.Pause(ctx, e.c, "s1"); err != nil {
		t.Fatal(err)
	}
	// n1-0 dies holding the job; n1-1 keeps beating
	clk.Add(time.Minute)
	if err := e.c.UnitBeat(ctx, "imports", "n1-1", clk.Now()); err != nil {
		t.Fatal(err)
	}
	if st := e.pass(a); st.HandedBack != 0 || e.str("HGET", e.ns+":pool:imports", "s1") != "n1-0" {
		t.Fatalf("handed back while a job is held: %+v", st)
	}
	// the recovery service prunes the dead worker: the job goes back to
	// its batch
	rec, err := e.c.WorkerRecord(ctx, dying.id)
	if err != nil || rec == nil {
		t.Fatalf("record: %s %v", rec, err)
	}
	pr, _ := protocol.ParseWorkerRecord(rec)
	if _, err := e.c.Prune(ctx, rdb.PruneArgs{WorkerID: dying.id, Record: rec, Queue: pr.Queue, Source: pr.SourceOf(), Payload: pr.Payload,
		MaxRecoveries: 3, Host: "h"}); err != nil {
		t.Fatal(err)
	}
	_ = held
	clk.Add(time.Second)
	if st := e.pass(a); st.HandedBack != 1 {
		t.Fatalf("handback: %+v", st)
	}
	if st := e.pass(a); st.Batches[rdb.BatchParked] != 1 {
		t.Fatalf("re-allocation while paused: %+v", st)
	}
	live := e.worker(2, protocol.UnitSource("imports", "n1-1"))
	if _, ok := live.claim(); ok {
		t.Fatal("served while paused")
	}
	if s := e.sourceStatus("s1"); !s.Parked || s.Unit != "n1-1" || s.Remaining != 5 || e.int("EXISTS", e.ns+":pool:imports:n1-0:queues") != 0 {
		t.Fatalf("status: %+v", s)
	}
	rr, err := massio.ResumeSource(ctx, e.c, "s1", massqueue.ResumeOptions{Now: clk.Now()})
	if err != nil || len(rr.Batches) != 1 || rr.Batches[0].Result != "unit" || rr.Batches[0].Unit != "n1-1" {
		t.Fatalf("resume: %+v %v", rr, err)
	}
	l := ledger{}
	live.drain(l)
	l.exactlyOnce(t, map[string]int{"s1": 5})
}

// Resumed after its unit died (before any allocator noticed), a parked
// batch goes back to committed and lands on the live unit; a retired unit
// (a pool that shrank) hands its parked batch back the same way.
func TestBatchResumeAfterUnitDied(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	clk := newClock()
	a := e.allocator(mustConfig(t, testConfig), clk)
	e.beat("imports", "n1-0", "n1-1")
	b1 := e.releasedBatch("s1", "import", 3)
	b2 := e.releasedBatch("s2", "import", 4)
	e.pass(a)
	if e.str("HGET", e.ns+":pool:imports", "s1") != "n1-0" || e.str("HGET", e.ns+":pool:imports", "s2") != "n1-1" {
		t.Fatalf("allocation: %v", e.strs("HGETALL", e.ns+":pool:imports"))
	}
	for _, s := range []string{"s1", "s2"} {
		if err := massio.Pause(ctx, e.c, s); err != nil {
			t.Fatal(err)
		}
	}
	clk.Add(time.Minute)
	if err := e.c.UnitBeat(ctx, "imports", "n1-1", clk.Now()); err != nil {
		t.Fatal(err)
	}
	rr, err := massio.ResumeSource(ctx, e.c, "s1", massqueue.ResumeOptions{Now: clk.Now()})
	if err != nil || len(rr.Batches) != 1 || rr.Batches[0] != (massqueue.ResumedBatch{Pool: "imports", ID: b1, Unit: "n1-0", Result: "committed"}) {
		t.Fatalf("resume: %+v %v", rr, err)
	}
	if st := e.pass(a); st.Batches[rdb.BatchAssigned] != 1 || e.str("HGET", e.ns+":pool:imports", "s1") != "n1-1" {
		t.Fatalf("after resume: %+v %v", st, e.strs("HGETALL", e.ns+":pool:imports"))
	}
	// the pool shrinks to one unit: n1-1 retires while s2's batch is
	// parked on it; it goes back to committed and waits for a live unit
	if err := massio.RetireUnit(ctx, e.c, "imports", "n1-1"); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Second)
	if st := e.pass(a); st.HandedBack != 2 { // s1's (listed) and s2's (parked)
		t.Fatalf("retire: %+v", st)
	}
	if e.int("EXISTS", e.ns+":batch:paused:imports") != 0 || e.int("HLEN", e.ns+":pool:imports") != 0 {
		t.Fatal("parked batch left on a retired unit")
	}
	if err := e.c.UnitBeat(ctx, "imports", "n1-2", clk.Now()); err != nil {
		t.Fatal(err)
	}
	if st := e.pass(a); st.Batches[rdb.BatchAssigned] != 1 || st.Batches[rdb.BatchParked] != 1 {
		t.Fatalf("re-allocation: %+v", st)
	}
	if s := e.sourceStatus("s2"); !s.Parked || s.Unit != "n1-2" || s.Active != b2 {
		t.Fatalf("s2: %+v", s)
	}
	w := e.worker(1, protocol.UnitSource("imports", "n1-2"))
	l := ledger{}
	for _, s := range w.drain(l) {
		if s != "s1" {
			t.Fatalf("served %s while paused", s)
		}
	}
	if _, err := massio.ResumeSource(ctx, e.c, "s2", massqueue.ResumeOptions{Now: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	w.drain(l)
	l.exactlyOnce(t, map[string]int{"s1": 3, "s2": 4})
}

// Paused with no batch in the pool, a source's batch committed later is
// parked when allocated (later ones wait in its backlog) and runs only
// after resume; a parked batch emptied meanwhile (jobs removed) is
// finished by the sweep and the next one parked in its place.
func TestBatchPauseBeforeCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	clk := newClock()
	a := e.allocator(mustConfig(t, testConfig), clk)
	e.beat("imports", "n1-0")
	r, err := massio.PauseSource(ctx, e.c, "s1")
	if err != nil || r.Already || len(r.Batches) != 0 {
		t.Fatalf("pause: %+v %v", r, err)
	}
	b0 := e.releasedBatch("s1", "import", 2)
	b1 := e.releasedBatch("s1", "import", 3)
	b2 := e.releasedBatch("s1", "import", 4)
	if st := e.pass(a); st.Batches[rdb.BatchParked] != 1 || st.Batches[rdb.BatchBacklog] != 2 {
		t.Fatalf("allocation while paused: %+v", st)
	}
	w := e.worker(1, protocol.UnitSource("imports", "n1-0"))
	if _, ok := w.claim(); ok {
		t.Fatal("a paused source's batch was served")
	}
	if s := e.sourceStatus("s1"); !s.Parked || s.Active != b0 || len(s.Backlog) != 2 || s.Backlog[0] != b1 {
		t.Fatalf("status: %+v", s)
	}
	// the parked batch's jobs are removed (an operator cleared its list)
	e.do("DEL", e.ns+":committed:"+b0)
	clk.Add(time.Second)
	if st := e.pass(a); st.Finished != 1 {
		t.Fatalf("sweep of an emptied parked batch: %+v", st)
	}
	if st := e.pass(a); st.Batches[rdb.BatchParked] != 1 || e.str("HGET", e.ns+":batch:paused:imports", "s1") != b1 {
		t.Fatalf("next batch: %+v", st)
	}
	if _, ok := w.claim(); ok {
		t.Fatal("served while paused")
	}
	if _, err := massio.ResumeSource(ctx, e.c, "s1", massqueue.ResumeOptions{Now: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	l := ledger{}
	w.drain(l)
	clk.Add(time.Second)
	if st := e.pass(a); st.Finished != 1 {
		t.Fatalf("finish: %+v", st)
	}
	if st := e.pass(a); st.Batches[rdb.BatchAssigned] != 1 {
		t.Fatalf("backlog after resume: %+v", st)
	}
	w.drain(l)
	// b1 (3 jobs, n 0..2) and b2 (4 jobs, n 0..3) share numbers: count per batch
	if len(l) != 4 || l["s1/0"] != 2 || l["s1/1"] != 2 || l["s1/2"] != 2 || l["s1/3"] != 1 {
		t.Errorf("jobs: %v", l)
	}
	_ = b2
}
