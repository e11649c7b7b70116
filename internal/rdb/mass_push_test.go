package rdb_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/rdb"
)

// A checked push renews the queued states of the batch's earlier unique
// jobs when they would expire before the list (each once per margin, not
// every push), and takes a state that disappeared again; it leaves a state
// without a time to live (another job's) alone.
func TestBatchPushCheckedRenewsStates(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	k := c.Keys()
	ttl, sttl := 100*time.Second, 200*time.Second
	t0 := time.Now()
	push := func(mode rdb.BatchPushMode, at time.Duration, jobs ...rdb.BatchJob) rdb.BatchPushed {
		t.Helper()
		r, err := c.BatchPushChecked(ctx, mode, "s1:imp:00000001", jobs, ttl, sttl, t0.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	stateTTL := func(uid string) int64 {
		t.Helper()
		n, err := redis.Int64(c.Do(ctx, "TTL", k.UniqueState(uid)))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	job := func(uid string) rdb.BatchJob {
		return rdb.BatchJob{UID: uid, Payload: []byte(`{"class":"J","sourceId":"s1","name":"imp"}`)}
	}
	if r := push(rdb.BatchPushNew, 0, job("a"), job("b"), job("")); r.Pushed != 3 || r.Refused != "" || r.Len != 3 || !r.HasUIDs {
		t.Fatalf("first push: %+v", r)
	}
	if _, err := c.BatchPushChecked(ctx, rdb.BatchPushNew, "s1:imp:00000001", []rdb.BatchJob{job("")}, ttl, sttl, t0); !errors.Is(err, rdb.ErrBatchExists) {
		t.Fatalf("second first push: %v", err)
	}
	if n := stateTTL("a"); n < 190 || n > 200 {
		t.Fatalf("state TTL %d, want about 200", n)
	}
	if _, err := c.Do(ctx, "EXPIRE", k.UniqueState("a"), 5); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, "DEL", k.UniqueState("b")); err != nil {
		t.Fatal(err)
	}
	// 50s later the states (due at 200s) outlive the list (due at 150s):
	// not renewed
	push(rdb.BatchPushList, 50*time.Second, job(""))
	if n := stateTTL("a"); n > 5 {
		t.Fatalf("renewed too early: TTL %d", n)
	}
	// 150s later they would expire before the list (at 250s): renewed,
	// and b, gone, taken again
	if r := push(rdb.BatchPushList, 150*time.Second, job("")); !r.HasUIDs || r.Len != 5 {
		t.Fatalf("push: %+v", r)
	}
	for _, uid := range []string{"a", "b"} {
		if n := stateTTL(uid); n < 190 {
			t.Errorf("state of %s not renewed: TTL %d", uid, n)
		}
	}
	// a state without a time to live is not ours: left alone
	if _, err := c.Do(ctx, "PERSIST", k.UniqueState("a")); err != nil {
		t.Fatal(err)
	}
	push(rdb.BatchPushList, 400*time.Second, job(""))
	if n := stateTTL("a"); n != -1 {
		t.Errorf("a state without expiry got TTL %d", n)
	}
	if _, err := c.BatchPushChecked(ctx, rdb.BatchPushList, "s1:imp:00000002", []rdb.BatchJob{job("z")}, ttl, sttl, t0); !errors.Is(err, rdb.ErrBatchMissing) {
		t.Fatalf("push to a missing batch: %v", err)
	}
	if n := stateTTL("z"); n != -2 {
		t.Errorf("a push to a missing batch wrote a state (TTL %d)", n)
	}
}
