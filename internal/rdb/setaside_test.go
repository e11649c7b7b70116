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

// A key written by hand that a step sets aside is named in the set-aside
// hash (and the Redis log): StatsOverview reads it with what was not done
// and when. The hash expires a day after its last write, names at most
// protocol.SetAsideMax keys, and one of another type stops nothing.
func TestSetAsideKeysNamed(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, true)
	k := c.Keys()
	ctx := context.Background()
	r := limitsRules(t, "rate:A=100/1s")[0]
	waiting := k.LimitBase(r.Name()) + protocol.LimitWaitingSuffix
	do("SET", waiting, "written by hand")
	if n, err := c.TakeRate(ctx, r, 10, time.Now()); err != nil || n != 0 {
		t.Fatalf("block with a waiting key of another type: %d, %v", n, err)
	}
	ov, err := c.StatsOverview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ov.SetAside) != 1 || ov.SetAside[0].Key != waiting || !strings.Contains(ov.SetAside[0].What, "rate waiting list unusable") ||
		ov.Now.Sub(ov.SetAside[0].At).Abs() > time.Minute {
		t.Fatalf("set aside: %+v, want %s with when and why", ov.SetAside, waiting)
	}
	ttl, _ := redis.Int(c.do(ctx, "TTL", k.SetAside()))
	if ttl <= 0 || ttl > int(protocol.SetAsideTTL.Seconds()) {
		t.Errorf("set-aside hash TTL %d s, want at most a day", ttl)
	}

	// full: a new key is not added, a named one is updated
	for i := range protocol.SetAsideMax - 1 {
		do("HSET", k.SetAside(), fmt.Sprintf("%s:other:%d", k.Namespace(), i), `{"at":1,"what":"x"}`)
	}
	tat := k.LimitBase("class:B") + protocol.LimitTATSuffix
	do("SET", tat, "1e300")
	if _, err := c.TakeRate(ctx, limitsRules(t, "rate:B=100/1s")[0], 10, time.Now()); err != nil {
		t.Fatal(err)
	}
	do("HSET", k.SetAside(), waiting, `{"at":1,"what":"old"}`)
	if _, err := c.TakeRate(ctx, r, 10, time.Now()); err != nil {
		t.Fatal(err)
	}
	ov, _ = c.StatsOverview(ctx)
	if len(ov.SetAside) != protocol.SetAsideMax {
		t.Errorf("%d keys named, want at most %d", len(ov.SetAside), protocol.SetAsideMax)
	}
	for _, a := range ov.SetAside {
		if a.Key == tat {
			t.Errorf("%s named in a full hash", tat)
		}
		if a.Key == waiting && a.What == "old" {
			t.Errorf("%s not updated in a full hash", waiting)
		}
	}

	// the hash itself written by hand: the step goes on, the overview
	// names the hash as a key it cannot read
	do("DEL", k.SetAside())
	do("SET", k.SetAside(), "x")
	if n, err := c.TakeRate(ctx, r, 10, time.Now()); err != nil || n != 0 {
		t.Fatalf("block with the set-aside hash a string: %d, %v", n, err)
	}
	ov, err = c.StatsOverview(ctx)
	bad, ok := BadKeys(err)
	if !ok || len(bad) != 1 || bad[0].Key != k.SetAside() || len(ov.SetAside) != 0 {
		t.Errorf("overview with the set-aside hash a string: %+v, %v", ov.SetAside, err)
	}
}
