package rdb

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// A due delayed item whose queue key was written by hand with another type
// stays at the head of its bucket, and the promotion's error names the key;
// once the key is fixed the next promotion moves it. Before, the item left
// the bucket first and was lost with the failed push.
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
	if _, _, err := c.PromoteBatch(ctx, 100, ps); err == nil || !strings.Contains(err.Error(), k.Queue("q")) || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("promote: %v, want an error naming %s", err, k.Queue("q"))
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
