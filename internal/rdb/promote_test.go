package rdb

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// A due delayed item whose queue key was written by hand with another type
// stays at the head of its bucket, and the promotion's *KeyTypeError names
// the key (the mover then records the item in failed); once the key is
// fixed the next promotion moves it. Before, the item left the bucket first
// and was lost with the failed push.
func TestPromoteKeepsItemWhenQueueHasWrongType(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	ctx := context.Background()
	k := c.Keys()
	item := []byte(`{"class":"C","args":[1],"queue":"q"}`)
	payload := []byte(`{"class":"C","args":[1]}`)
	do("RPUSH", k.Delayed(100), item)
	do("ZADD", k.DelayedSchedule(), 100, 100)
	do("SET", k.Queue("q"), "not a list")
	ps := []Promotion{{Item: item, Payload: payload, Queue: "q"}}
	var kt *KeyTypeError
	if _, _, err := c.PromoteBatch(ctx, 100, ps); !errors.As(err, &kt) || kt.Key != k.Queue("q") || kt.Type != "string" {
		t.Fatalf("promote: %v, want a *KeyTypeError naming %s", err, k.Queue("q"))
	}
	if got, err := c.BucketHeads(ctx, 100, 5); err != nil || len(got) != 1 || string(got[0]) != string(item) {
		t.Fatalf("bucket after the failed promotion: %q %v", got, err)
	}
	do("DEL", k.Queue("q"))
	if moved, empty, err := c.PromoteBatch(ctx, 100, ps); err != nil || moved != 1 || !empty {
		t.Fatalf("promote: %d %v %v", moved, empty, err)
	}
	if got, err := redis.Strings(c.do(ctx, "LRANGE", k.Queue("q"), 0, -1)); err != nil || len(got) != 1 || got[0] != string(payload) {
		t.Errorf("queue q: %q %v", got, err)
	}
}

// A retry of a failed entry whose queue key has another type leaves the
// entry as it was (not marked retried_at), since its push comes first.
func TestRetryFailedKeepsEntryWhenQueueHasWrongType(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	ctx := context.Background()
	k := c.Keys()
	entry := `{"failed_at":"2026/11/27 10:00:00 UTC","payload":{"class":"C","args":[]},"exception":"E","error":"x","queue":"q"}`
	do("RPUSH", k.Failed(), entry)
	do("SET", k.Queue("q"), "not a list")
	if _, err := c.RetryFailed(ctx, []byte(entry), 0, []byte(`{"retried":1}`), []byte(`{"class":"C","args":[]}`), "q", ""); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("retry: %v, want WRONGTYPE", err)
	}
	if got, err := redis.Strings(c.do(ctx, "LRANGE", k.Failed(), 0, -1)); err != nil || len(got) != 1 || got[0] != entry {
		t.Errorf("failed: %q %v", got, err)
	}
}

// A requeue (a hard stop's) whose queue key has another type keeps the
// job in worker:<id>, where recovery finds it, since its push comes first.
func TestRequeueKeepsRecordWhenQueueHasWrongType(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	ctx := context.Background()
	k := c.Keys()
	do("SET", k.Worker("h:1:q"), `{"queue":"q","run_at":"2026-11-27T10:00:00Z","payload":{"class":"C","args":[]}}`)
	do("SET", k.Queue("q"), "not a list")
	if err := c.Requeue(ctx, "h:1:q", protocol.QueueSource("q"), []byte(`{"class":"C","args":[]}`), "", JobEnd{}); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("requeue: %v, want WRONGTYPE", err)
	}
	if n, err := redis.Int(c.do(ctx, "EXISTS", k.Worker("h:1:q"))); err != nil || n != 1 {
		t.Errorf("worker:<id> is gone: %d %v", n, err)
	}
}

// A schedule's or a plan's slot whose queue key has another type is not
// counted as fired: the call stops before it writes, and the slot fires
// once the key is fixed (before, the slot was recorded and its job lost).
func TestFireKeepsSlotWhenQueueHasWrongType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("schedule", func(t *testing.T) {
		t.Parallel()
		c, ns, do := ringTestClient(t, false)
		k := c.Keys()
		do("SET", ns+":lock", "me")
		do("SET", k.Queue("q"), "not a list")
		f := ScheduleFire{LockKey: ns + ":lock", LockValue: "me", Name: "every", Slot: 1000, Queue: "q",
			Payload: []byte(`{"class":"C","args":[]}`), EnqueuedAt: "2026-11-27 10:00:00 +0000"}
		if _, _, err := c.FireSchedule(ctx, f); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Fatalf("fire: %v, want WRONGTYPE", err)
		}
		do("DEL", k.Queue("q"))
		if fired, _, err := c.FireSchedule(ctx, f); err != nil || !fired {
			t.Fatalf("fire after the fix: %v %v", fired, err)
		}
	})
	t.Run("plan", func(t *testing.T) {
		t.Parallel()
		c, _, do := ringTestClient(t, false)
		k := c.Keys()
		plan := []byte(`{"id":"p1","nextRun":1000}`)
		do("SET", k.Plan("p1"), plan)
		do("ZADD", k.PlanSchedule(), 1000, 1000)
		do("RPUSH", k.PlanSlot(1000), "p1")
		do("SET", k.Queue("q"), "not a list")
		f := Fire{ID: "p1", Read: plan, Write: []byte(`{"id":"p1","nextRun":2000}`), TS: 1000, Next: 2000,
			Payload: []byte(`{"class":"C","args":[]}`), Queue: "q"}
		if _, err := c.FirePlan(ctx, f); err == nil || !strings.Contains(err.Error(), "is a string, not a list") {
			t.Fatalf("fire: %v, want an error naming the queue", err)
		}
		if got, err := redis.Strings(c.do(ctx, "LRANGE", k.PlanSlot(1000), 0, -1)); err != nil || len(got) != 1 || got[0] != "p1" {
			t.Errorf("the slot lost the plan: %q %v", got, err)
		}
		do("DEL", k.Queue("q"))
		if r, err := c.FirePlan(ctx, f); err != nil || r != "fired" {
			t.Fatalf("fire after the fix: %q %v", r, err)
		}
	})
}

// With events on, the mover's promotion appends each job's enqueued event
// in the step that pushes it; a promotion to failed appends none.
func TestPromoteWritesEnqueuedEvents(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	c.events = newEventsParts(c.keys, EventsConfig{On: true, MaxAge: time.Hour})
	ctx := context.Background()
	k := c.Keys()
	items := [][]byte{[]byte(`{"class":"C","args":[1],"queue":"q","id":"a"}`), []byte(`{"class":"C","args":[2],"queue":"q"}`)}
	for _, it := range items {
		do("RPUSH", k.Delayed(100), it)
	}
	do("ZADD", k.DelayedSchedule(), 100, 100)
	ps := []Promotion{{Item: items[0], Payload: []byte(`{"class":"C","args":[1],"id":"a"}`), Queue: "q"},
		{Item: items[1], Failure: []byte(`{}`)}}
	if moved, empty, err := c.PromoteBatch(ctx, 100, ps); err != nil || moved != 2 || !empty {
		t.Fatalf("promote: %d %v %v", moved, empty, err)
	}
	evs, err := c.Events(ctx, "", 10)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events: %v %v", evs, err)
	}
	if f := evs[0].Fields; f["event"] != "enqueued" || f["id"] != "a" || f["class"] != "C" || f["queue"] != "q" {
		t.Errorf("event %v", f)
	}
}

// Queue now leaves an item whose queue key has another type in its bucket
// (nothing pushed, nothing removed) and names the key; once the key is
// fixed it moves the item and, with events on, appends its enqueued
// event in the same step, as a promotion does.
func TestQueueDelayedNowWrongTypeAndEvents(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	c.events = newEventsParts(c.keys, EventsConfig{On: true, MaxAge: time.Hour})
	ctx := context.Background()
	k := c.Keys()
	item := []byte(`{"class":"C","args":[1],"queue":"q","id":"a"}`)
	p := Promotion{Item: item, Payload: []byte(`{"class":"C","args":[1],"id":"a"}`), Queue: "q"}
	do("RPUSH", k.Delayed(100), item)
	do("SADD", k.Timestamps(item), protocol.DelayedMember(100))
	do("ZADD", k.DelayedSchedule(), 100, 100)
	do("SET", k.Queue("q"), "not a list")
	var kt *KeyTypeError
	if _, err := c.QueueDelayedNow(ctx, 100, p); !errors.As(err, &kt) || kt.Key != k.Queue("q") || kt.Type != "string" {
		t.Fatalf("queue now: %v, want a *KeyTypeError naming %s", err, k.Queue("q"))
	}
	if got, err := c.BucketHeads(ctx, 100, 5); err != nil || len(got) != 1 {
		t.Fatalf("bucket after the refusal: %q %v", got, err)
	}
	do("DEL", k.Queue("q"))
	r, err := c.QueueDelayedNow(ctx, 100, p)
	if err != nil || !r.Found || r.Left != 0 || !r.Unscheduled {
		t.Fatalf("queue now: %+v %v", r, err)
	}
	if n, _ := redis.Int(c.do(ctx, "EXISTS", k.Timestamps(item))); n != 0 {
		t.Error("index entry left")
	}
	evs, err := c.Events(ctx, "", 10)
	if err != nil || len(evs) != 1 || evs[0].Fields["event"] != "enqueued" || evs[0].Fields["id"] != "a" || evs[0].Fields["queue"] != "q" {
		t.Fatalf("events: %v %v", evs, err)
	}
	if r, err := c.QueueDelayedNow(ctx, 100, p); err != nil || r.Found {
		t.Errorf("again: %+v %v, want not found", r, err)
	}
}
