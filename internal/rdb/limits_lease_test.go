package rdb

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// A cap's lease (limits_lease.lua): taken only whole, where the cap has
// room for every member and no job is parked; renewed while every member
// is there and nothing is parked; shrunk to its busy members (one gone is
// added again: its slot runs a job), the others given back.
func TestLeaseLimitsSteps(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	l := limitsRules(t, "A=5")[0]
	holders, parked := k.LimitBase(l.Name())+protocol.LimitHoldersSuffix, k.LimitBase(l.Name())+protocol.LimitParkedSuffix
	ctx := context.Background()
	now := time.Now()
	step := func(mode string, busy int, members ...string) bool {
		t.Helper()
		held, err := c.LeaseLimits(ctx, []CapLease{{Limit: l, Mode: mode, Members: members, Busy: busy}}, now, 15*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return held[0]
	}
	members := func() []string {
		t.Helper()
		m, err := redis.Strings(c.Do(ctx, "ZRANGE", holders, 0, -1))
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(m)
		return m
	}
	p := []string{"p:1:lease", "p:2:lease", "p:3:lease"}
	do("ZADD", holders, now.Add(time.Minute).UnixMilli(), "other:1", now.Add(time.Minute).UnixMilli(), "other:2", now.Add(time.Minute).UnixMilli(), "other:3")
	if step(LeaseTake, 0, p...) || len(members()) != 3 {
		t.Fatalf("a lease of 3 taken beside 3 holds of a cap of 5: %q", members())
	}
	// a hold ran out (its holder killed): room for the whole lease
	do("ZADD", holders, now.Add(-time.Second).UnixMilli(), "other:3")
	if !step(LeaseTake, 0, p...) {
		t.Fatalf("lease not taken with room for it: %q", members())
	}
	if got := members(); !slices.Equal(got, []string{"other:1", "other:2", "p:1:lease", "p:2:lease", "p:3:lease"}) {
		t.Fatalf("holders: %q", got)
	}
	if !step(LeaseRenew, 0, p...) {
		t.Fatal("a held lease not renewed")
	}
	do("RPUSH", parked, `{"queue":"q","payload":"{}"}`)
	if step(LeaseRenew, 0, p...) {
		t.Fatal("a lease renewed while a job is parked")
	}
	// shrink: p:2 runs a job (busy first), the others go back
	do("ZREM", holders, "p:2:lease") // gone (as after a Redis restart)
	if step(LeaseShrink, 1, "p:2:lease", "p:1:lease", "p:3:lease") {
		t.Fatal("a shrunk lease reported held")
	}
	if got := members(); !slices.Equal(got, []string{"other:1", "other:2", "p:2:lease"}) {
		t.Fatalf("holders after the shrink: %q", got)
	}
	// parked jobs keep a lease from being taken, room or not
	do("ZREM", holders, "other:1", "other:2")
	if step(LeaseTake, 0, p...) {
		t.Fatal("a lease taken while a job is parked")
	}
	do("DEL", parked)
	if !step(LeaseTake, 0, p...) {
		t.Fatal("lease not taken once nothing is parked")
	}
	// the stop gives every member back
	step(LeaseShrink, 0, p...)
	if got := members(); len(got) != 0 {
		t.Fatalf("holders after the release: %q", got)
	}
}

// A rate's block (limits_take.lua) is what the GCRA allows now: within the
// tolerance ahead, k intervals at once; none while jobs wait.
func TestTakeRateBlocks(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	r := limitsRules(t, "rate:A=100/1s")[0] // a 10 ms interval, a 10 ms tolerance
	ctx := context.Background()
	now := time.UnixMilli(1_900_000_000_000)
	take := func(want int, at time.Time) int {
		t.Helper()
		n, err := c.TakeRate(ctx, r, want, at)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := take(50, now); n != 2 {
		t.Fatalf("first block: %d, want 2 (now and one interval ahead, within the tolerance)", n)
	}
	if n := take(50, now); n != 0 {
		t.Fatalf("again at once: %d, want 0", n)
	}
	if n := take(50, now.Add(100*time.Millisecond)); n != 2 {
		// the tat had fallen behind: the rate does not bank unused starts
		t.Fatalf("100 ms later: %d, want 2", n)
	}
	if n := take(1, now.Add(200*time.Millisecond)); n != 1 {
		t.Fatalf("a block of 1: %d", n)
	}
	do("RPUSH", k.LimitBase(r.Name())+protocol.LimitWaitingSuffix, `{"due":1,"queue":"q","payload":"{}"}`)
	if n := take(50, now.Add(time.Second)); n != 0 {
		t.Fatalf("with a job waiting: %d, want 0", n)
	}
}

// A cap's hold whose lease ends more than a day ahead (written by hand: a
// lease is three heartbeats of at most 60 s) is dropped by the sweep, and
// the job parked behind it moves back; before, it kept its slot for good.
func TestSweepDropsHoldsEndingFarAhead(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, true)
	k := c.Keys()
	l := NewClaimLimits(limitsRules(t, "A=1"), time.Minute)
	base := k.LimitBase("class:A")
	now := time.Now()
	do("ZADD", base+protocol.LimitHoldersSuffix, "1e300", "hand:1")
	do("RPUSH", base+protocol.LimitParkedSuffix, `{"queue":"q","payload":"{\"class\":\"A\",\"args\":[]}"}`)
	swept, err := c.SweepLimits(context.Background(), l, nil, now, "h:1:q")
	if n := swept.Moved; err != nil || n != 1 {
		t.Fatalf("sweep moved %d, %v; want the parked job moved back", n, err)
	}
	if h, _ := redis.Int(c.Do(context.Background(), "ZCARD", base+protocol.LimitHoldersSuffix)); h != 0 {
		t.Errorf("%d holds left", h)
	}
}
