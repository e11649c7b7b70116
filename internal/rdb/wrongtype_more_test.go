package rdb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
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
	plan := []byte(`{"id":"p1","nextRun":1000,"broken":`)
	failure := []byte(`{"failed_at":"2026/11/27 10:00:00 UTC","payload":{"id":"p1"},"exception":"E","error":"x"}`)
	do("SET", k.Plan("p1"), plan)
	do("ZADD", k.PlanSchedule(), 1000, 1000)
	do("RPUSH", k.PlanSlot(1000), "p1")
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
	plan := []byte(`{"id":"p1","nextRun":1000}`)
	do("SET", k.Plan("p1"), plan)
	do("ZADD", k.PlanSchedule(), 1000, 1000)
	do("RPUSH", k.PlanSlot(1000), "p1")
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
			plan := []byte(`{"id":"p1","nextRun":1000}`)
			do("SET", k.Plan("p1"), plan)
			do("ZADD", k.PlanSchedule(), 1000, 1000)
			do("RPUSH", k.PlanSlot(1000), "p1")
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
