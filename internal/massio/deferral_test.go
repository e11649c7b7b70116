package massio_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

// A deferrable unique static job that meets its uid's job running is
// parked (the first one; a second is refused) and routed again through
// unassigned when that job succeeds: at once for deferrableBy 0, after the
// delay for more (an allocator moves it when it is due); a failure drops
// it, as for queue jobs.
func TestStaticDeferral(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		delay   int64
		outcome rdb.OutcomeKind
	}{{"at once", 0, rdb.OutcomeOK}, {"after 30s", 30, rdb.OutcomeOK}, {"dropped on failure", 0, rdb.OutcomeFail}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			clk := newClock()
			a := e.allocator(mustConfig(t, staticConfig), clk)
			job := func(n string) massqueue.Job {
				return massqueue.Job{Class: "Sync", Source: "s1", Name: "sync", Args: []byte(`["` + n + `"]`),
					UniqueID: "u1", Deferrable: true, DeferrableBy: c.delay}
			}
			if e1, err := massio.EnqueueStaticJob(ctx, e.c, job("first")); err != nil || e1.Deferred {
				t.Fatalf("first: %+v %v", e1, err)
			}
			if _, err := massio.EnqueueStaticJob(ctx, e.c, job("queued")); !errors.Is(err, massqueue.ErrDuplicate) {
				t.Fatalf("while queued: %v, want ErrDuplicate", err)
			}
			e.allocate(a)
			w := e.worker(1, protocol.StaticPoolSource("general"))
			res, ok := w.claim()
			if !ok || e.str("GET", e.ns+":unique:u1:state") != "running" {
				t.Fatalf("claim: %v, state %q", ok, e.str("GET", e.ns+":unique:u1:state"))
			}
			if e2, err := massio.EnqueueStaticJob(ctx, e.c, job("parked")); err != nil || !e2.Deferred {
				t.Fatalf("while running: %+v %v, want deferred", e2, err)
			}
			if _, err := massio.EnqueueStaticJob(ctx, e.c, job("second")); !errors.Is(err, massqueue.ErrDuplicate) {
				t.Fatalf("a second deferral: %v, want ErrDuplicate", err)
			}
			o := rdb.Outcome{Seq: res.Seq, Kind: c.outcome, Class: "Sync", UniqueID: "u1", Now: clk.Now()}
			if c.outcome == rdb.OutcomeFail {
				o.Entry = []byte(`{}`)
			}
			if err := e.c.Finish(ctx, w.id, "h", res.Source, o); err != nil {
				t.Fatal(err)
			}
			if c.outcome != rdb.OutcomeOK {
				if e.int("EXISTS", e.ns+":unique:u1:state", e.ns+":unique:u1:deferred", e.ns+":resque-go:mass:deferred") != 0 ||
					e.int("LLEN", e.ns+":unassigned") != 0 {
					t.Error("a failed job's parked job was not dropped with its uid")
				}
				return
			}
			if got := e.str("GET", e.ns+":unique:u1:state"); got != "queued" {
				t.Errorf("state after release: %q, want queued", got)
			}
			if c.delay > 0 {
				if e.int("LLEN", e.ns+":unassigned") != 0 || e.int("ZCARD", e.ns+":resque-go:mass:deferred") != 1 {
					t.Fatal("a delayed release is not waiting in resque-go:mass:deferred")
				}
				clk.Add(time.Duration(c.delay-1) * time.Second)
				if st := e.pass(a); st.Deferred != 0 {
					t.Fatalf("released %d before it was due", st.Deferred)
				}
				clk.Add(2 * time.Second)
				if st := e.pass(a); st.Deferred != 1 {
					t.Fatalf("due release: %+v", st)
				}
			} else {
				e.allocate(a)
			}
			next, ok := w.claim()
			if !ok || string(next.Payload) == string(res.Payload) || sourceOf(t, next.Payload) != "s1" {
				t.Fatalf("the parked job was not routed and served: %s", next.Payload)
			}
			if e.str("GET", e.ns+":unique:u1:state") != "running" || e.int("EXISTS", e.ns+":unique:u1:deferred") != 0 {
				t.Error("the released job does not hold its uid")
			}
		})
	}
}
