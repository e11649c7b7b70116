package recovery_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/recovery"
)

// A dead worker's job is recovered with what it held: its slot of a cap
// the recovering worker knows is freed at once (a parked job moved back),
// and a parent recorded as failed fails its held child.
func TestPruneSettlesCapsAndChildren(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	ctx := e.ctx()
	now, err := e.c.Time(ctx)
	if err != nil {
		t.Fatal(err)
	}
	capA, err := protocol.ParseLimit("A=1")
	if err != nil {
		t.Fatal(err)
	}
	// a dead worker running the parent "p", of class A, holding A's slot
	// (claim sequence 5) while another job of A is parked
	d := protocol.DepFields{}
	parent, err := protocol.NewPayload("A", []byte(`[]`), protocol.EnqueueOptions{ID: "p", Now: now, Deps: d})
	if err != nil {
		t.Fatal(err)
	}
	child, err := protocol.NewPayload("B", []byte(`[]`), protocol.EnqueueOptions{ID: "c", Now: now, Deps: protocol.DepFields{After: []string{"p"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.c.EnqueueDeps(ctx, rdb.DepJob{ID: "c", Queue: "q", Payload: child, Policy: protocol.OnParentFailureFail,
		Parents: []rdb.DepParent{{Name: "p"}}}, now); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("testhost:%d:q", deadPid(t))
	base := k.LimitBase(capA.Name())
	e.do([]any{"SADD", k.Workers(), id},
		[]any{"HSET", k.Heartbeats(), id, protocol.FormatHeartbeat(now.Add(-400 * time.Second))},
		[]any{"SET", k.Worker(id), string(protocol.EncodeWorkerRecord("q", now, parent))},
		[]any{"HSET", k.ClaimSeqs(), id, "5"},
		[]any{"ZADD", base + protocol.LimitHoldersSuffix, now.Add(time.Hour).UnixMilli(), id + ":5"},
		[]any{"RPUSH", base + protocol.LimitParkedSuffix, `{"queue":"q","payload":"{\"class\":\"A\",\"args\":[1]}"}`})
	if err := e.service(recovery.Config{MaxRecoveries: -1, Limits: []protocol.Limit{capA}}).Prune(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.strings("ZRANGE", base+protocol.LimitHoldersSuffix, 0, -1); len(n) != 0 {
		t.Errorf("holders %q, want none", n)
	}
	if q := e.strings("LRANGE", k.Queue("q"), 0, -1); len(q) != 1 || q[0] != `{"class":"A","args":[1]}` {
		t.Errorf("queue q %q, want the parked job moved back", q)
	}
	st, err := e.c.DepJob(ctx, "c")
	if err != nil || st.State != "failed" {
		t.Errorf("child %+v %v", st, err)
	}
	if f := e.strings("LRANGE", k.Failed(), 0, -1); len(f) != 2 {
		t.Errorf("failed %q, want the parent's and the child's", f)
	}
}

// A dead worker's job recorded as failed by a recovery whose workers have
// events on (Config.Events, as the pool's observer passes them) writes its
// failed event and, after it, the released event of a held child that runs
// whatever its parent's outcome; with events off, neither.
func TestPruneEventsOfReleasedChild(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		e := newEnv(t)
		k := e.c.Keys()
		ctx := e.ctx()
		now := time.Now()
		parent, err := protocol.NewPayload("A", []byte(`[]`), protocol.EnqueueOptions{ID: "p", Now: now})
		if err != nil {
			t.Fatal(err)
		}
		child, err := protocol.NewPayload("B", []byte(`[]`), protocol.EnqueueOptions{ID: "c", Now: now,
			Deps: protocol.DepFields{After: []string{"p"}, OnParentFailure: protocol.OnParentFailureRun}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.c.EnqueueDeps(ctx, rdb.DepJob{ID: "c", Queue: "q2", Payload: child, Policy: protocol.OnParentFailureRun,
			Parents: []rdb.DepParent{{Name: "p"}}}, now); err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("testhost:%d:q", deadPid(t))
		e.do([]any{"SADD", k.Workers(), id},
			[]any{"HSET", k.Heartbeats(), id, protocol.FormatHeartbeat(now.Add(-400 * time.Second))},
			[]any{"SET", k.Worker(id), string(protocol.EncodeWorkerRecord("q", now, parent))})
		if err := e.service(recovery.Config{MaxRecoveries: -1, Events: rdb.EventsConfig{On: on}}).Prune(ctx); err != nil {
			t.Fatal(err)
		}
		if q := e.strings("LRANGE", k.Queue("q2"), 0, -1); len(q) != 1 {
			t.Fatalf("events %v: queue q2 %q, want the released child", on, q)
		}
		evs, err := e.c.Events(ctx, "0", 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range evs {
			got = append(got, ev.Fields["event"]+":"+ev.Fields["id"]+":"+ev.Fields["class"]+":"+ev.Fields["queue"])
		}
		want := []string{"failed:p:A:q", "released:c:B:q2"}
		if !on {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Errorf("events %v: %v, want %v", on, got, want)
		}
	}
}
