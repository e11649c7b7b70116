package rdb_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// A deferred copy parked by another producer with a deferrableBy past the
// bound (protocol.MaxDelaySeconds) is set aside in failed, as a valid JSON
// entry naming the value, by the holder's finish and by unique clear;
// the uid is freed and a later enqueue with it is queued. At the bound
// the copy is released into the delayed queue, the numbers written as
// integers.
func TestUniqueReleaseBoundsDeferral(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	k := c.Keys()
	do := func(cmd string, args ...any) any {
		t.Helper()
		v, err := c.Do(ctx, cmd, args...)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return v
	}
	parked := func(uid, by string) string {
		return `{"class":"J","args":[],"queue":"q","unique":{"uid":"` + uid + `","deferrableBy":` + by + `}}`
	}
	now := time.Unix(1_800_000_000, 0)
	// the holder's finish
	if err := c.Enqueue(ctx, "q", []byte(`{"class":"J","args":[],"unique":{"uid":"D"}}`)); err != nil {
		t.Fatal(err)
	}
	args := rdb.ClaimArgs{WorkerID: "h:1:q", Host: "h", Queues: []string{"q"}, Now: now}
	res, err := c.Claim(ctx, args)
	if err != nil || res.Payload == nil {
		t.Fatalf("claim: %+v %v", res, err)
	}
	do("SET", k.UniqueDeferred("D"), parked("D", "9e18"))
	if err := c.Finish(ctx, "h:1:q", "h", protocol.QueueSource("q"), rdb.Outcome{Seq: res.Seq, Now: now, UniqueID: "D"}); err != nil {
		t.Fatalf("finish of the holder: %v", err)
	}
	// unique clear of a running uid (another runtime's holder is gone)
	do("SET", k.UniqueState("E"), "running")
	do("SET", k.UniqueDeferred("E"), parked("E", "3153600001"))
	if r, err := c.UniqueClear(ctx, "E", "", "test", now); err != nil || r != rdb.ClearReleased {
		t.Fatalf("unique clear: %q %v", r, err)
	}
	entries, err := redis.ByteSlices(c.Do(ctx, "LRANGE", k.Failed(), 0, -1))
	if err != nil || len(entries) != 2 {
		t.Fatalf("failed holds %d entries (%v), want the 2 parked copies", len(entries), err)
	}
	for i, want := range []string{"9000000000000000000", "3153600001"} {
		var fe struct {
			Payload   json.RawMessage `json:"payload"`
			Exception string          `json:"exception"`
			Error     string          `json:"error"`
			Queue     string          `json:"queue"`
		}
		if err := json.Unmarshal(entries[i], &fe); err != nil || fe.Exception != "Resque::BadPayload" ||
			!strings.Contains(fe.Error, "deferrableBy "+want) || fe.Queue != "q" || !json.Valid(fe.Payload) {
			t.Errorf("failed entry %s (%v): want a BadPayload naming deferrableBy %s", entries[i], err, want)
		}
	}
	for _, uid := range []string{"D", "E"} {
		if n := do("EXISTS", k.UniqueState(uid), k.UniqueDeferred(uid)); n != int64(0) {
			t.Errorf("uid %s: %v of its keys left, want it free", uid, n)
		}
		if r, err := c.EnqueueUnique(ctx, rdb.UniqueJob{UID: uid, Queue: "q", Push: []byte(`{"class":"J","args":[],"unique":{"uid":"` + uid + `"}}`)}); err != nil || r != rdb.UniqueQueued {
			t.Errorf("enqueue with uid %s after: %q %v, want queued", uid, r, err)
		}
	}
	// at the bound: released into the delayed queue
	do("SET", k.UniqueState("M"), "running")
	do("SET", k.UniqueDeferred("M"), parked("M", strconv.Itoa(protocol.MaxDelaySeconds)))
	if r, err := c.UniqueClear(ctx, "M", "", "test", now); err != nil || r != rdb.ClearReleased {
		t.Fatalf("unique clear at the bound: %q %v", r, err)
	}
	due := now.Unix() + protocol.MaxDelaySeconds
	if n, err := c.Len(ctx, k.Delayed(due)); err != nil || n != 1 {
		t.Errorf("delayed:%d holds %d (%v), want the released copy", due, n, err)
	}
	if ttl, err := redis.Int64(c.Do(ctx, "TTL", k.UniqueState("M"))); err != nil || ttl < protocol.MaxDelaySeconds {
		t.Errorf("state TTL %d (%v), want the deferral and a day", ttl, err)
	}
}

// unique_release.lua's bound is protocol.MaxDelaySeconds.
func TestUniqueReleaseBoundIsProtocols(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("scripts/unique_release.lua")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), strconv.Itoa(protocol.MaxDelaySeconds)); n != 2 {
		t.Errorf("unique_release.lua names %d %d times, want 2 (the test and the message)", protocol.MaxDelaySeconds, n)
	}
}
