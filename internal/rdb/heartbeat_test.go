package rdb_test

import (
	"context"
	"testing"
	"time"
)

// One heartbeat step for all slots of a process; slots another runtime
// unregistered are registered again with the given start time.
func TestHeartbeatAllSlots(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	k := c.Keys()
	ids := []string{"h:1-1:q", "h:1-2:q", "h:1-3:q"}
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, id := range ids {
		if _, err := c.Register(ctx, id, started, 5*time.Second, true); err != nil {
			t.Fatal(err)
		}
	}
	// a Ruby startup prune removes slot 2
	for _, cmd := range [][]any{{"SREM", k.Workers(), ids[1]}, {"DEL", k.WorkerStarted(ids[1])}, {"HDEL", k.Heartbeats(), ids[1]}} {
		if _, err := c.Do(ctx, cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	hb, again, counters, err := c.Heartbeat(ctx, ids, started.Add(time.Hour), 5*time.Second)
	if err != nil || hb == "" || again != 1 || counters != 0 {
		t.Fatalf("heartbeat %q, %d again, %v", hb, again, err)
	}
	for _, id := range ids {
		if v, _ := c.Do(ctx, "SISMEMBER", k.Workers(), id); v.(int64) != 1 {
			t.Errorf("%s not in workers", id)
		}
		if v, _ := c.Do(ctx, "HGET", k.Heartbeats(), id); v == nil || string(v.([]byte)) != hb {
			t.Errorf("%s heartbeat %v, want %s", id, v, hb)
		}
	}
	if v, _ := c.Do(ctx, "GET", k.WorkerStarted(ids[0])); string(v.([]byte)) != "2026-01-02 03:04:05 +0000" {
		t.Errorf("slot 1 :started changed to %s", v)
	}
	if v, _ := c.Do(ctx, "GET", k.WorkerStarted(ids[1])); string(v.([]byte)) != "2026-01-02 04:04:05 +0000" {
		t.Errorf("slot 2 :started = %s, want the time given", v)
	}
}
