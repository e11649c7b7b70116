package rdb

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// One limit whose key was written by hand with another type, or an index
// of another type, does not stop the sweep of the others: cap B's parked
// job moves back to its queue. The bad index is named in the error, after
// the sweep. Before, the sweep failed whole at each tick, and no parked
// job of any limit moved back.
func TestSweepLimitsSetsBadKeysAside(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		bad     func(k protocol.Keys) string
		wantErr bool
	}{
		{"holders", func(k protocol.Keys) string { return k.LimitBase("class:A") + protocol.LimitHoldersSuffix }, false},
		{"parked", func(k protocol.Keys) string { return k.LimitBase("class:A") + protocol.LimitParkedSuffix }, false},
		{"index", func(k protocol.Keys) string { return k.LimitsIndex() }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _, do := ringTestClient(t, true)
			k := c.Keys()
			l := NewClaimLimits(limitsRules(t, "A=1", "B=1"), time.Minute)
			do("RPUSH", k.LimitBase("class:A")+protocol.LimitParkedSuffix, `{"queue":"q","payload":"{\"class\":\"A\",\"args\":[]}"}`)
			do("RPUSH", k.LimitBase("class:B")+protocol.LimitParkedSuffix, `{"queue":"q","payload":"{\"class\":\"B\",\"args\":[]}"}`)
			bad := tc.bad(k)
			do("DEL", bad)
			do("SET", bad, "written by hand")
			n, err := c.SweepLimits(context.Background(), l, []HeldSlot{{Name: "class:A", Member: "h:1:q:1"}}, time.Now())
			var kt *KeyTypeError
			if tc.wantErr != (err != nil) || (err != nil && (!errors.As(err, &kt) || kt.Key != bad)) {
				t.Fatalf("sweep: %v, want an error naming %s: %v", err, bad, tc.wantErr)
			}
			got, err := redis.Strings(c.do(context.Background(), "LRANGE", k.Queue("q"), 0, -1))
			if err != nil || n < 1 || !contains(got, `{"class":"B","args":[]}`) {
				t.Errorf("moved %d, queue q %q %v: B's parked job not moved back", n, got, err)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
