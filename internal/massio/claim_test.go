package massio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

const staticConfig = `
pools: {static: {general: {worker_count: 16}}}
mapping: {static: {default: {default: general}}}
`

// worker claims through jobpath/claim.lua like a runtime slot of a static pool or
// a unit.
type worker struct {
	e   *env
	id  string
	src protocol.Source
}

func (e *env) worker(i int, src protocol.Source) *worker {
	return &worker{e, fmt.Sprintf("h:%d:mass", i), src}
}

func (w *worker) claim() (rdb.ClaimResult, bool) {
	w.e.t.Helper()
	res, err := w.e.c.Claim(context.Background(), rdb.ClaimArgs{WorkerID: w.id, Host: "h", Sources: []protocol.Source{w.src}, Now: time.Now()})
	if err != nil {
		w.e.t.Fatal(err)
	}
	return res, res.Payload != nil
}

func (w *worker) finish(res rdb.ClaimResult, kind rdb.OutcomeKind) {
	w.e.t.Helper()
	o := rdb.Outcome{Seq: res.Seq, Kind: kind, Class: "J", Now: time.Now()}
	if kind == rdb.OutcomeRetry {
		o.Push, o.Entry = res.Payload, []byte(`{}`)
	}
	if err := w.e.c.Finish(context.Background(), w.id, "h", res.Source, o); err != nil {
		w.e.t.Fatal(err)
	}
}

// finishAndClaim is finish then claim in one step (finish_claim.lua), the
// runtime's path while it keeps busy.
func (w *worker) finishAndClaim(res rdb.ClaimResult) (rdb.ClaimResult, bool) {
	w.e.t.Helper()
	o := rdb.Outcome{Seq: res.Seq, Kind: rdb.OutcomeOK, Class: "J", Now: time.Now()}
	a := rdb.ClaimArgs{WorkerID: w.id, Host: "h", Sources: []protocol.Source{w.src}, Now: time.Now()}
	ferr, next, err := w.e.c.FinishAndClaim(context.Background(), w.id, "h", res.Source, o, a)
	if err != nil || ferr != nil {
		w.e.t.Fatal(err, ferr)
	}
	return next, next.Payload != nil
}

func sourceOf(t testing.TB, payload []byte) string {
	var v struct {
		SourceID string `json:"sourceId"`
	}
	if err := json.Unmarshal(payload, &v); err != nil {
		t.Fatalf("%s: %v", payload, err)
	}
	return v.SourceID
}

// fill queues n static jobs of source (LPUSH to unassigned, as producers do).
func (e *env) fill(source string, n int) {
	e.t.Helper()
	args := []any{e.ns + ":unassigned"}
	for i := 0; i < n; i++ {
		args = append(args, fmt.Sprintf(`{"class":"J","sourceId":%q,"name":"n","args":{"i":%d},"id":"%s-%d","queue_time":1.5}`, source, i, source, i))
		if len(args) == 2001 || i == n-1 {
			e.do("LPUSH", args...)
			args = args[:1]
		}
	}
}

// allocate runs allocator passes until unassigned is empty.
func (e *env) allocate(a *massio.Allocator) {
	e.t.Helper()
	for e.int("LLEN", e.ns+":unassigned") > 0 {
		e.pass(a)
	}
}

// A source with 100,000 queued jobs delays another source's single job by
// at most one dispatch (the busy source's weight), with 16 workers busy.
func TestStaticFairnessBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.allocator(mustConfig(t, staticConfig), newClock())
	e.fill("big", 100000)
	e.allocate(a)
	src := protocol.StaticPoolSource("general")
	ws := make([]*worker, 16)
	held := make([]rdb.ClaimResult, 16)
	for i := range ws {
		ws[i] = e.worker(i, src)
		res, ok := ws[i].claim()
		if !ok {
			t.Fatal("no job")
		}
		held[i] = res
	}
	worst := 0
	for round := 0; round < 20; round++ {
		// the big source is being served (16 jobs running) when one job of
		// another source arrives
		small := fmt.Sprintf("small%d", round)
		e.fill(small, 1)
		e.allocate(a)
		for d := 1; ; d++ {
			i := d % len(ws)
			ws[i].finish(held[i], rdb.OutcomeOK)
			res, ok := ws[i].claim()
			if !ok {
				t.Fatal("no job")
			}
			held[i] = res
			if sourceOf(t, res.Payload) == small {
				worst = max(worst, d)
				break
			}
			if d > 100 {
				t.Fatalf("round %d: the single job waited more than 100 dispatches", round)
			}
		}
	}
	t.Logf("single job served by dispatch %d after it was allocated, i.e. behind at most %d dispatch(es) of the source with 100,000 queued jobs (16 workers)", worst, worst-1)
	if worst > 2 {
		t.Errorf("single job waited %d dispatches, want <= 2 (the busy source's turn, then its own)", worst)
	}
}

// Three sources with weights 3:2:1 and full backlogs share the pool 3:2:1.
func TestStaticWeights(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a := e.allocator(mustConfig(t, staticConfig), newClock())
	for s, w := range map[string]int{"w3": 3, "w2": 2, "w1": 1} {
		if err := massio.SetWeight(ctx, e.c, s, w); err != nil {
			t.Fatal(err)
		}
		e.fill(s, 5000)
	}
	e.allocate(a)
	w := e.worker(1, protocol.StaticPoolSource("general"))
	count := map[string]int{}
	const n = 6000
	res, ok := w.claim()
	for i := 0; i < n; i++ {
		if !ok {
			t.Fatal("no job")
		}
		count[sourceOf(t, res.Payload)]++
		res, ok = w.finishAndClaim(res)
	}
	t.Logf("shares of %d dispatches: w3 %d, w2 %d, w1 %d", n, count["w3"], count["w2"], count["w1"])
	for s, want := range map[string]int{"w3": 3000, "w2": 2000, "w1": 1000} {
		if d := count[s] - want; d > want/10 || d < -want/10 {
			t.Errorf("%s: %d dispatches, want %d +-10%%", s, count[s], want)
		}
	}
}

// A source's limit holds across workers; a slot comes back when its job
// ends and when its worker dies (recovery), never leaks.
func TestStaticLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a := e.allocator(mustConfig(t, staticConfig), newClock())
	if err := massio.SetLimit(ctx, e.c, "big", 2); err != nil {
		t.Fatal(err)
	}
	e.fill("big", 100)
	e.fill("other", 100)
	e.allocate(a)
	src := protocol.StaticPoolSource("general")
	running := map[string]int{}
	held := map[*worker]rdb.ClaimResult{}
	var ws []*worker
	for i := 0; i < 8; i++ {
		w := e.worker(i, src)
		res, ok := w.claim()
		if !ok {
			t.Fatal("no job")
		}
		held[w] = res
		ws = append(ws, w)
		running[sourceOf(t, res.Payload)]++
	}
	if running["big"] != 2 || running["other"] != 6 {
		t.Fatalf("running %v, want big 2 other 6", running)
	}
	var bigW []*worker
	for _, w := range ws {
		if sourceOf(t, held[w].Payload) == "big" {
			bigW = append(bigW, w)
		}
	}
	// a big job ends: its slot is free, the next claims take one big job
	bigW[0].finish(held[bigW[0]], rdb.OutcomeOK)
	extra := e.worker(100, src)
	got := map[string]int{}
	for i := 0; i < 3; i++ {
		res, ok := extra.claim()
		if !ok {
			t.Fatal("no job")
		}
		got[sourceOf(t, res.Payload)]++
		held[extra] = res
		extra = e.worker(101+i, src)
	}
	if got["big"] != 1 {
		t.Fatalf("after a big job ended: %v, want exactly one more big job", got)
	}
	// a worker holding a big job dies: recovery puts the job back and frees
	// its slot (no finish ever comes)
	dead := bigW[1]
	rec, err := e.c.WorkerRecord(ctx, dead.id)
	if err != nil || rec == nil {
		t.Fatalf("record: %s %v", rec, err)
	}
	r, _ := protocol.ParseWorkerRecord(rec)
	if !strings.HasPrefix(r.Source, "static:queue:general:big") || r.Queue != "static:queue:general" {
		t.Fatalf("record source %q queue %q", r.Source, r.Queue)
	}
	pr, err := e.c.Prune(ctx, rdb.PruneArgs{WorkerID: dead.id, Record: rec, Queue: r.Queue, Source: r.SourceOf(), Payload: r.Payload, MaxRecoveries: 3, Host: "h"})
	if err != nil || pr != rdb.PruneRequeued {
		t.Fatalf("prune: %v %v", pr, err)
	}
	if first := e.strs("LRANGE", e.ns+":static:queue:general:big", 0, 0); len(first) != 1 || first[0] != string(r.Payload) {
		t.Fatalf("recovered job not at the head of its FIFO: %q", first)
	}
	got = map[string]int{}
	for i := 0; i < 4; i++ {
		res, ok := e.worker(200+i, src).claim()
		if !ok {
			t.Fatal("no job")
		}
		got[sourceOf(t, res.Payload)]++
		if sourceOf(t, res.Payload) == "big" && string(res.Payload) != string(r.Payload) {
			t.Errorf("the recovered job was not served first: %s", res.Payload)
		}
	}
	if got["big"] != 1 {
		t.Fatalf("after the holder died: %v, want exactly one more big job", got)
	}
}

func TestStaticPauseResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a := e.allocator(mustConfig(t, staticConfig), newClock())
	e.fill("a", 10)
	e.fill("b", 10)
	e.allocate(a)
	if err := massio.Pause(ctx, e.c, "b"); err != nil {
		t.Fatal(err)
	}
	e.fill("b", 5) // queues up while paused
	e.allocate(a)
	w := e.worker(1, protocol.StaticPoolSource("general"))
	for i := 0; i < 10; i++ {
		res, ok := w.claim()
		if !ok || sourceOf(t, res.Payload) != "a" {
			t.Fatalf("claim %d: %s %v", i, res.Payload, ok)
		}
		w.finish(res, rdb.OutcomeOK)
	}
	if _, ok := w.claim(); ok {
		t.Fatal("a paused source was served")
	}
	woke, err := massio.Resume(ctx, e.c, "b")
	if err != nil || len(woke) != 1 || woke[0] != "general" {
		t.Fatalf("resume: %v %v", woke, err)
	}
	for i := 0; i < 15; i++ {
		res, ok := w.claim()
		if !ok || sourceOf(t, res.Payload) != "b" {
			t.Fatalf("claim %d after resume: %s %v", i, res.Payload, ok)
		}
		w.finish(res, rdb.OutcomeOK)
	}
	if _, ok := w.claim(); ok {
		t.Fatal("more jobs than queued")
	}
	if e.int("LLEN", e.ns+":static:ring:general") != 0 || e.int("EXISTS", e.ns+":static:state:general") != 0 {
		t.Error("drained sources left on the ring")
	}
}

// A drained source leaves the ring at once, even while its last job runs;
// a retry of that job puts it back, and the job is served again.
func TestStaticRetryKeepsSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.allocator(mustConfig(t, staticConfig), newClock())
	e.fill("s", 1)
	e.allocate(a)
	w := e.worker(1, protocol.StaticPoolSource("general"))
	res, ok := w.claim()
	if !ok {
		t.Fatal("no job")
	}
	if _, ok := e.worker(2, protocol.StaticPoolSource("general")).claim(); ok {
		t.Fatal("second job")
	}
	if e.int("LLEN", e.ns+":static:ring:general") != 0 || e.int("HEXISTS", e.ns+":static:state:general", "m:s") != 0 {
		t.Fatal("drained source stayed on the ring")
	}
	w.finish(res, rdb.OutcomeRetry)
	res2, ok := w.claim()
	if !ok || string(res2.Payload) != string(res.Payload) {
		t.Fatalf("retry not served: %s", res2.Payload)
	}
	w.finish(res2, rdb.OutcomeOK)
	if _, ok := w.claim(); ok {
		t.Fatal("job served twice")
	}
	if e.int("LLEN", e.ns+":static:ring:general") != 0 || e.int("EXISTS", e.ns+":static:holders:general:s") != 0 ||
		e.int("EXISTS", e.ns+":static:state:general") != 0 {
		t.Error("drained source left behind")
	}
}

// A job that goes back into its drained source's FIFO through a hard
// stop's requeue or a dead worker's recovery puts the source back on the
// ring, once, and is served again; the source's other place (parked) is
// respected.
func TestStaticRequeueAndRecoveryWakeSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, path := range []string{"requeue", "recovery"} {
		t.Run(path, func(t *testing.T) {
			e := newEnv(t)
			e.fill("s", 1)
			e.fill("o", 1)
			e.allocate(e.allocator(mustConfig(t, staticConfig), newClock()))
			src := protocol.StaticPoolSource("general")
			w := e.worker(1, src)
			var res rdb.ClaimResult
			for {
				r, ok := w.claim()
				if !ok {
					t.Fatal("source s not served")
				}
				if sourceOf(t, r.Payload) == "s" {
					res = r
					break
				}
				w.finish(r, rdb.OutcomeOK)
			}
			other := e.worker(2, src)
			for {
				r, ok := other.claim()
				if !ok {
					break
				}
				other.finish(r, rdb.OutcomeOK)
			}
			if e.int("LLEN", e.ns+":static:ring:general") != 0 {
				t.Fatal("drained sources stayed on the ring")
			}
			switch path {
			case "requeue":
				if err := e.c.Requeue(ctx, w.id, res.Source, res.Payload, "", rdb.JobEnd{}); err != nil {
					t.Fatal(err)
				}
			case "recovery":
				rec := e.str("GET", e.ns+":worker:"+w.id)
				r, err := protocol.ParseWorkerRecord([]byte(rec))
				if err != nil {
					t.Fatal(err)
				}
				pr, err := e.c.Prune(ctx, rdb.PruneArgs{WorkerID: w.id, Record: []byte(rec), Queue: r.Queue,
					Source: r.SourceOf(), Payload: r.Payload, MaxRecoveries: 3, Failure: []byte(`{}`), Host: "h"})
				if err != nil || pr != rdb.PruneRequeued {
					t.Fatalf("prune: %v %v", pr, err)
				}
			}
			if got := e.strs("LRANGE", e.ns+":static:ring:general", 0, -1); len(got) != 1 || got[0] != "s" {
				t.Fatalf("ring after %s: %q", path, got)
			}
			again, ok := other.claim()
			if !ok || string(again.Payload) != string(res.Payload) {
				t.Fatalf("job not served after %s: %s", path, again.Payload)
			}
			other.finish(again, rdb.OutcomeOK)
			if _, ok := other.claim(); ok {
				t.Fatal("job served twice")
			}
		})
	}
}

// A limit set while jobs of the source run counts them: claims record
// themselves in the holders hash only while the source has a limit, so
// SetLimit counts the ones made before it. Removing the limit drops the
// hash.
func TestStaticLimitCountsJobsRunningBeforeIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.fill("big", 20)
	e.allocate(e.allocator(mustConfig(t, staticConfig), newClock()))
	src := protocol.StaticPoolSource("general")
	var ws []*worker
	var held []rdb.ClaimResult
	for i := 0; i < 3; i++ {
		w := e.worker(i, src)
		e.do("SADD", e.ns+":workers", w.id) // registered, as a runtime's slot is
		res, ok := w.claim()
		if !ok {
			t.Fatal("no job")
		}
		ws, held = append(ws, w), append(held, res)
	}
	if e.int("EXISTS", e.ns+":static:holders:general:big") != 0 {
		t.Fatal("claims without a limit recorded holders")
	}
	if err := massio.SetLimit(ctx, e.c, "big", 2); err != nil {
		t.Fatal(err)
	}
	if n := e.int("HLEN", e.ns+":static:holders:general:big"); n != 3 {
		t.Fatalf("holders after the limit: %d, want the 3 running jobs", n)
	}
	// 3 running, limit 2: no claim until two of them end
	late := e.worker(10, src)
	if res, ok := late.claim(); ok {
		t.Fatalf("claimed over the limit: %s", res.Payload)
	}
	ws[0].finish(held[0], rdb.OutcomeOK)
	if res, ok := late.claim(); ok {
		t.Fatalf("claimed with 2 running at limit 2: %s", res.Payload)
	}
	ws[1].finish(held[1], rdb.OutcomeOK)
	res, ok := late.claim()
	if !ok || sourceOf(t, res.Payload) != "big" {
		t.Fatal("no claim with 1 running at limit 2")
	}
	if err := massio.SetLimit(ctx, e.c, "big", 0); err != nil {
		t.Fatal(err)
	}
	if e.int("EXISTS", e.ns+":static:holders:general:big") != 0 {
		t.Error("holders left after the limit was removed")
	}
}

// A change of weight starts the source's turn over: its turn counter goes
// from every static pool's state, so none is left behind when the settings
// go away (claims keep turn counters only while some source has settings)
// and a weight set again gives the source its whole turn.
func TestWeightChangeClearsTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a := e.allocator(mustConfig(t, staticConfig), newClock())
	if err := massio.SetWeight(ctx, e.c, "w3", 3); err != nil {
		t.Fatal(err)
	}
	e.fill("w3", 20)
	e.fill("w1", 20)
	e.allocate(a)
	state := e.c.Keys().StaticState("general")
	w := e.worker(1, protocol.StaticPoolSource("general"))
	res, ok := w.claim()
	if !ok || sourceOf(t, res.Payload) != "w3" {
		t.Fatalf("first claim: %v %s, want a job of w3", ok, res.Payload)
	}
	if got := e.str("HGET", state, "t:w3"); got != "1" {
		t.Fatalf("turn counter of w3 after its first job: %q, want 1", got)
	}
	if err := massio.SetWeight(ctx, e.c, "w3", 1); err != nil {
		t.Fatal(err)
	}
	if n := e.int("HEXISTS", state, "t:w3"); n != 0 {
		t.Fatal("w3's turn counter is still there after its weight went back to 1")
	}
	// without settings the claims keep no counter: w3 and w1 alternate
	var order []string
	for range 4 {
		res, ok = w.finishAndClaim(res)
		if !ok {
			t.Fatal("no job")
		}
		order = append(order, sourceOf(t, res.Payload))
	}
	if n := e.int("HEXISTS", state, "t:w3"); n != 0 {
		t.Fatal("a claim without settings wrote w3's turn counter")
	}
	// weight 3 again: w3's next turn is 3 jobs in a row, whatever the
	// old turn had reached
	if err := massio.SetWeight(ctx, e.c, "w3", 3); err != nil {
		t.Fatal(err)
	}
	for range 8 {
		res, ok = w.finishAndClaim(res)
		if !ok {
			t.Fatal("no job")
		}
		order = append(order, sourceOf(t, res.Payload))
	}
	joined := strings.Join(order, " ")
	if !strings.Contains(joined, "w1 w3 w3 w3 w1") {
		t.Errorf("claims %s: want w3 and w1 alternating, then w3 three in a row between w1's", joined)
	}
}
