package rdb_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// delayedBucket writes bucket ts with items, each indexed, and schedules it.
func delayedBucket(t *testing.T, c *rdb.Client, ts int64, items ...string) {
	t.Helper()
	for _, it := range items {
		if err := c.Delay(context.Background(), []byte(it), ts); err != nil {
			t.Fatal(err)
		}
	}
}

func bucketAndIndex(t *testing.T, c *rdb.Client, ts int64, items ...string) string {
	t.Helper()
	k := c.Keys()
	list, err := redis.Strings(c.Do(context.Background(), "LRANGE", k.Delayed(ts), 0, -1))
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Join(list, ",") + " |"
	for _, it := range items {
		n, err := redis.Int(c.Do(context.Background(), "SISMEMBER", k.Timestamps([]byte(it)), protocol.DelayedMember(ts)))
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			out += " " + it
		}
	}
	sched, _ := redis.Int(c.Do(context.Background(), "ZCARD", k.DelayedSchedule()))
	if sched == 1 {
		out += " | scheduled"
	}
	return out
}

func bs(items ...string) [][]byte {
	out := make([][]byte, len(items))
	for i, it := range items {
		out[i] = []byte(it)
	}
	return out
}

// TrimDelayed removes the expected head only, keeps the index entry of an
// item with a later copy in the snapshot or a copy pushed since, and does
// nothing when the head changed.
func TestTrimDelayed(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	delayedBucket(t, c, 7, "A", "B", "A", "C")
	if _, ok, err := c.TrimDelayed(ctx, 7, bs("B"), 3, bs("B")); ok || err != nil {
		t.Fatalf("trim of a head that is not there: ok %v, %v", ok, err)
	}
	r, ok, err := c.TrimDelayed(ctx, 7, bs("A", "B"), 2, bs("B")) // A has a later copy
	if !ok || err != nil || r != (rdb.DelayedRemoval{Removed: 2, Unindexed: 1}) {
		t.Fatalf("first chunk: %+v %v %v", r, ok, err)
	}
	if got := bucketAndIndex(t, c, 7, "A", "B", "C"); got != "A,C | A C | scheduled" {
		t.Fatalf("after the first chunk: %s", got)
	}
	delayedBucket(t, c, 7, "A") // pushed since the snapshot
	r, ok, err = c.TrimDelayed(ctx, 7, bs("A", "C"), 0, bs("A", "C"))
	if !ok || err != nil || r != (rdb.DelayedRemoval{Removed: 2, Unindexed: 1}) {
		t.Fatalf("second chunk: %+v %v %v", r, ok, err)
	}
	if got := bucketAndIndex(t, c, 7, "A", "B", "C"); got != "A | A | scheduled" {
		t.Fatalf("after the second chunk: %s", got)
	}
	r, ok, err = c.TrimDelayed(ctx, 7, bs("A"), 0, bs("A"))
	if !ok || err != nil || r != (rdb.DelayedRemoval{Removed: 1, Unindexed: 1, Unscheduled: true}) {
		t.Fatalf("last chunk: %+v %v %v", r, ok, err)
	}
}

// RemoveDelayed removes every copy of an item, its index entry, and
// unschedules an empty bucket, even with no items.
func TestRemoveDelayed(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	delayedBucket(t, c, 9, "A", "B", "A", "C")
	r, err := c.RemoveDelayed(ctx, 9, bs("A", "X"))
	if err != nil || r != (rdb.DelayedRemoval{Removed: 2, Unindexed: 1}) {
		t.Fatalf("remove A: %+v %v", r, err)
	}
	if got := bucketAndIndex(t, c, 9, "A", "B", "C"); got != "B,C | B C | scheduled" {
		t.Fatalf("after remove: %s", got)
	}
	if _, err := c.Do(ctx, "ZADD", c.Keys().DelayedSchedule(), 5, 5); err != nil {
		t.Fatal(err)
	}
	if r, err := c.RemoveDelayed(ctx, 5, nil); err != nil || !r.Unscheduled {
		t.Fatalf("empty bucket: %+v %v", r, err)
	}
}
