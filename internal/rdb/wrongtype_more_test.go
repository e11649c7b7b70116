package rdb

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// A plan that cannot be fired, parked with a failed entry while failed is
// a key of another type, stays in its slot: the call stops before the id
// leaves the slot, and parks it once the key is fixed. Before, the id left
// the slot first and the plan was lost with the failed push.
func TestParkPlanKeepsSlotWhenFailedHasWrongType(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	ctx := context.Background()
	k := c.Keys()
	plan := planInSlot(k, do, []byte(`{"id":"p1","nextRun":1000,"broken":`))
	failure := []byte(`{"failed_at":"2026/11/27 10:00:00 UTC","payload":{"id":"p1"},"exception":"E","error":"x"}`)
	do("SET", k.Failed(), "not a list")
	if _, err := c.ParkPlan(ctx, "p1", plan, 1000, failure); err == nil || !strings.Contains(err.Error(), k.Failed()+" is a string, not a list") {
		t.Fatalf("park: %v, want an error naming %s", err, k.Failed())
	}
	if got, err := redis.Strings(c.do(ctx, "LRANGE", k.PlanSlot(1000), 0, -1)); err != nil || len(got) != 1 || got[0] != "p1" {
		t.Fatalf("the slot lost the plan: %q %v", got, err)
	}
	do("DEL", k.Failed())
	if r, err := c.ParkPlan(ctx, "p1", plan, 1000, failure); err != nil || r != FireParked {
		t.Fatalf("park after the fix: %q %v", r, err)
	}
	if got, err := redis.Strings(c.do(ctx, "LRANGE", k.Failed(), 0, -1)); err != nil || len(got) != 1 || got[0] != string(failure) {
		t.Errorf("failed: %q %v", got, err)
	}
	if n, err := redis.Int(c.do(ctx, "EXISTS", k.PlanSlot(1000))); err != nil || n != 0 {
		t.Errorf("the slot still holds the plan: %d %v", n, err)
	}
}

// A plan fired while its next slot's list is a key of another type is not
// fired: the call stops before the id leaves its slot and before the job
// is pushed, and fires once the key is fixed. Before, the job was pushed
// and the id left its slot without reaching the next one: the plan never
// fired again.
func TestFirePlanKeepsSlotWhenNextSlotHasWrongType(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	ctx := context.Background()
	k := c.Keys()
	plan := planInSlot(k, do, []byte(`{"id":"p1","nextRun":1000}`))
	do("SET", k.PlanSlot(2000), "not a list")
	f := Fire{ID: "p1", Read: plan, Write: []byte(`{"id":"p1","nextRun":2000}`), TS: 1000, Next: 2000,
		Payload: []byte(`{"class":"C","args":[]}`), Queue: "q"}
	if _, err := c.FirePlan(ctx, f); err == nil || !strings.Contains(err.Error(), k.PlanSlot(2000)+" is a string, not a list") {
		t.Fatalf("fire: %v, want an error naming %s", err, k.PlanSlot(2000))
	}
	if got, err := redis.Strings(c.do(ctx, "LRANGE", k.PlanSlot(1000), 0, -1)); err != nil || len(got) != 1 || got[0] != "p1" {
		t.Fatalf("the slot lost the plan: %q %v", got, err)
	}
	if n, err := redis.Int(c.do(ctx, "LLEN", k.Queue("q"))); err != nil || n != 0 {
		t.Fatalf("the job was pushed: %d %v", n, err)
	}
	if got, err := redis.String(c.do(ctx, "GET", k.Plan("p1"))); err != nil || got != string(plan) {
		t.Fatalf("the plan was written: %q %v", got, err)
	}
	do("DEL", k.PlanSlot(2000))
	if r, err := c.FirePlan(ctx, f); err != nil || r != FireFired {
		t.Fatalf("fire after the fix: %q %v", r, err)
	}
	if got, err := redis.Strings(c.do(ctx, "LRANGE", k.PlanSlot(2000), 0, -1)); err != nil || len(got) != 1 || got[0] != "p1" {
		t.Errorf("next slot: %q %v", got, err)
	}
	if n, err := redis.Int(c.do(ctx, "LLEN", k.Queue("q"))); err != nil || n != 1 {
		t.Errorf("queue q: %d %v", n, err)
	}
	if n, err := redis.Int(c.do(ctx, "EXISTS", k.PlanSlot(1000))); err != nil || n != 0 {
		t.Errorf("the fired slot still holds the plan: %d %v", n, err)
	}
}

// unique clear releases a uid's deferred job before it deletes the
// deferred key: when the job cannot be written where it goes (its queue
// of another type sends it to failed, and failed has another type too)
// the call fails with the state and the deferred job as they were, and
// releases it once the keys are fixed. Before, both keys were deleted
// first and the job was lost.
func TestUniqueClearKeepsDeferredWhenDestinationHasWrongType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	deferred := `{"class":"C","args":[],"queue":"q","unique":{"uid":"u1"}}`
	setup := func(t *testing.T) (*Client, func(string, ...any)) {
		c, _, do := ringTestClient(t, false)
		k := c.Keys()
		do("SET", k.UniqueState("u1"), "running:w1")
		do("SET", k.UniqueDeferred("u1"), deferred)
		do("SET", k.Queue("q"), "not a list")
		return c, do
	}
	t.Run("failed of another type too", func(t *testing.T) {
		t.Parallel()
		c, do := setup(t)
		k := c.Keys()
		do("SET", k.Failed(), "not a list")
		if _, err := c.UniqueClear(ctx, "u1", "running:w1", "test", now); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Fatalf("clear: %v, want WRONGTYPE", err)
		}
		if got, err := redis.String(c.do(ctx, "GET", k.UniqueDeferred("u1"))); err != nil || got != deferred {
			t.Fatalf("the deferred job is gone: %q %v", got, err)
		}
		if got, err := redis.String(c.do(ctx, "GET", k.UniqueState("u1"))); err != nil || got != "running:w1" {
			t.Fatalf("state: %q %v", got, err)
		}
		do("DEL", k.Failed(), k.Queue("q"))
		if r, err := c.UniqueClear(ctx, "u1", "running:w1", "test", now); err != nil || r != ClearReleased {
			t.Fatalf("clear after the fix: %q %v", r, err)
		}
		if got, err := redis.Strings(c.do(ctx, "LRANGE", k.Queue("q"), 0, -1)); err != nil || len(got) != 1 || got[0] != deferred {
			t.Errorf("queue q: %q %v", got, err)
		}
		if got, err := redis.String(c.do(ctx, "GET", k.UniqueState("u1"))); err != nil || got != "queued" {
			t.Errorf("state: %q %v", got, err)
		}
		if n, err := redis.Int(c.do(ctx, "EXISTS", k.UniqueDeferred("u1"))); err != nil || n != 0 {
			t.Errorf("the deferred key is still there: %d %v", n, err)
		}
	})
	t.Run("recorded in failed", func(t *testing.T) {
		t.Parallel()
		c, _ := setup(t)
		k := c.Keys()
		if r, err := c.UniqueClear(ctx, "u1", "running:w1", "test", now); err != nil || r != ClearReleased {
			t.Fatalf("clear: %q %v", r, err)
		}
		if got, err := redis.Strings(c.do(ctx, "LRANGE", k.Failed(), 0, -1)); err != nil || len(got) != 1 || !strings.Contains(got[0], `"payload":`+deferred) {
			t.Errorf("failed: %q %v", got, err)
		}
		if n, err := redis.Int(c.do(ctx, "EXISTS", k.UniqueState("u1"), k.UniqueDeferred("u1"))); err != nil || n != 0 {
			t.Errorf("%d of the state and deferred keys are left: %v", n, err)
		}
	})
}

// A plan fired while its job's unique state or the queues set is a key of
// another type still moves on to its next slot: a state of another type
// counts as the uid taken (nothing pushed), and the queues set is written
// last, once the job is queued and the plan filed. Before, either error
// came after the id left its slot, and the plan never fired again.
func TestFirePlanMovesOnPastUniqueStateAndQueuesOfWrongType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, want string }{{"unique-state", "duplicate"}, {"queues", "WRONGTYPE"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _, do := ringTestClient(t, false)
			ctx := context.Background()
			k := c.Keys()
			plan := planInSlot(k, do, []byte(`{"id":"p1","nextRun":1000}`))
			f := Fire{ID: "p1", Read: plan, Write: []byte(`{"id":"p1","nextRun":2000}`), TS: 1000, Next: 2000,
				Payload: []byte(`{"class":"C","args":[]}`), Queue: "q"}
			if tc.name == "unique-state" {
				f.UID = "u1"
				do("HSET", k.UniqueState("u1"), "f", "v")
			} else {
				do("HSET", k.Queues(), "f", "v")
			}
			r, err := c.FirePlan(ctx, f)
			if tc.want == "WRONGTYPE" && (err == nil || !strings.Contains(err.Error(), "WRONGTYPE")) ||
				tc.want != "WRONGTYPE" && (err != nil || string(r) != tc.want) {
				t.Fatalf("fire: %q %v, want %s", r, err, tc.want)
			}
			if got, err := redis.Strings(c.do(ctx, "LRANGE", k.PlanSlot(2000), 0, -1)); err != nil || len(got) != 1 || got[0] != "p1" {
				t.Errorf("next slot: %q %v", got, err)
			}
			if n, err := redis.Int(c.do(ctx, "EXISTS", k.PlanSlot(1000))); err != nil || n != 0 {
				t.Errorf("the fired slot still holds the plan: %d %v", n, err)
			}
			wantQueued := 0
			if tc.name == "queues" {
				wantQueued = 1
			}
			if n, err := redis.Int(c.do(ctx, "LLEN", k.Queue("q"))); err != nil || n != wantQueued {
				t.Errorf("queue q: %d %v, want %d", n, err, wantQueued)
			}
		})
	}
}

// A static pool's job put back by a hard stop's requeue or a dead
// worker's recovery, while the pool's ring is a key of another type, stays
// in worker:<id> with nothing written: the source is not marked on the
// ring (a mark without the ring's entry would keep it off the ring for
// good) and the job is not pushed (a recovery would push it again at its
// next pass). Once the key is fixed, the same step puts it back and wakes
// the source.
func TestStaticPutBackKeepsRecordWhenRingHasWrongType(t *testing.T) {
	t.Parallel()
	src := protocol.Source{Queue: protocol.StaticQueueName("p"), List: protocol.StaticSourcePrefix("p") + "s1"}
	payload := []byte(`{"class":"C","sourceId":"s1","name":"n","args":[]}`)
	record := []byte(`{"queue":"static:queue:p","run_at":"2026-11-27T10:00:00Z","payload":` + string(payload) + `,"source":"` + src.List + `"}`)
	for _, step := range []string{"requeue", "prune"} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			const wid = "h:1:static"
			c, do := holdingClient(t, wid, record)
			ctx := context.Background()
			k := c.Keys()
			do("SET", k.StaticRing("p"), "not a list")
			put := func() error { return putBack(c, step, wid, src, payload, record) }
			if err := put(); err == nil || !strings.Contains(err.Error(), k.StaticRing("p")+" is a string") {
				t.Fatalf("%s: %v, want an error naming the ring", step, err)
			}
			if n, err := redis.Int(c.do(ctx, "EXISTS", k.Worker(wid))); err != nil || n != 1 {
				t.Fatalf("worker:<id> is gone: %d %v", n, err)
			}
			if n, err := redis.Int(c.do(ctx, "LLEN", k.StaticSourceQueue("p", "s1"))); err != nil || n != 0 {
				t.Fatalf("the job was pushed: %d %v", n, err)
			}
			if n, err := redis.Int(c.do(ctx, "HEXISTS", k.StaticState("p"), "m:s1")); err != nil || n != 0 {
				t.Fatalf("s1 is marked on the ring: %d %v", n, err)
			}
			do("DEL", k.StaticRing("p"))
			if err := put(); err != nil {
				t.Fatalf("%s once the key is fixed: %v", step, err)
			}
			if got, err := redis.Strings(c.do(ctx, "LRANGE", k.StaticSourceQueue("p", "s1"), 0, -1)); err != nil || len(got) != 1 || got[0] != string(payload) {
				t.Errorf("the source's FIFO: %q %v", got, err)
			}
			if got, err := redis.Strings(c.do(ctx, "LRANGE", k.StaticRing("p"), 0, -1)); err != nil || len(got) != 1 || got[0] != "s1" {
				t.Errorf("the ring: %q %v", got, err)
			}
		})
	}
}

// A dead worker's unique job whose unique state is a key of another type
// is requeued once: the state is read without stopping the call (before,
// the GET's error came after the push, and the next pass pushed again).
// A hard stop's requeue reads it the same way.
func TestPutBackSurvivesUniqueStateOfWrongType(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"class":"C","args":[],"unique":{"uid":"u1"}}`)
	record := []byte(`{"queue":"q","run_at":"2026-11-27T10:00:00Z","payload":` + string(payload) + `}`)
	for _, step := range []string{"requeue", "prune"} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			const wid = "h:1:q"
			c, do := holdingClient(t, wid, record)
			ctx := context.Background()
			k := c.Keys()
			do("HSET", k.UniqueState("u1"), "f", "v")
			if err := putBack(c, step, wid, protocol.QueueSource("q"), payload, record); err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			if got, err := redis.Strings(c.do(ctx, "LRANGE", k.Queue("q"), 0, -1)); err != nil || len(got) != 1 || got[0] != string(payload) {
				t.Errorf("queue q: %q %v", got, err)
			}
			if n, err := redis.Int(c.do(ctx, "EXISTS", k.Worker(wid))); err != nil || n != 0 {
				t.Errorf("worker:<id> is still there: %d %v", n, err)
			}
		})
	}
}

// planInSlot stores plan p1 (its JSON, plan) in the slot of 1000 and
// returns plan.
func planInSlot(k protocol.Keys, do func(string, ...any), plan []byte) []byte {
	do("SET", k.Plan("p1"), plan)
	do("ZADD", k.PlanSchedule(), 1000, 1000)
	do("RPUSH", k.PlanSlot(1000), "p1")
	return plan
}

// holdingClient is a client whose namespace has worker wid registered and
// holding record, as a worker that is stopping or has died.
func holdingClient(t *testing.T, wid string, record []byte) (*Client, func(string, ...any)) {
	t.Helper()
	c, _, do := ringTestClient(t, false)
	do("SADD", c.Keys().Workers(), wid)
	do("SET", c.Keys().Worker(wid), record)
	return c, do
}

// putBack puts a held job back to src the way step does: a hard stop's
// requeue, or a dead worker's recovery (prune) that must requeue it.
func putBack(c *Client, step, wid string, src protocol.Source, payload, record []byte) error {
	ctx := context.Background()
	if step == "requeue" {
		return c.Requeue(ctx, wid, src, payload, "", JobEnd{})
	}
	res, err := c.Prune(ctx, PruneArgs{WorkerID: wid, Record: record, Queue: src.Queue, Source: src,
		Payload: payload, MaxRecoveries: 3, Host: "h"})
	if err == nil && res != PruneRequeued {
		err = fmt.Errorf("prune: %s", res)
	}
	return err
}
