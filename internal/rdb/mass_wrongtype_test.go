package rdb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// The mass steps that move an entry from one key to another keep it where
// it was, with an error naming the key, when the destination was written
// by hand with another type: before, the entry left its key first and was
// lost with the failed push.
func TestMassStepsKeepEntriesWhenTheDestinationHasTheWrongType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	payload := `{"class":"J","sourceId":"s1","name":"n","args":[]}`
	for _, c := range []struct {
		name, dest string
		named      bool // the error names the key (else Redis's own WRONGTYPE)
		setup      func(c *Client, do func(string, ...any))
		step       func(c *Client) error
		kept       func(c *Client) (int, error)
	}{
		{"deferred promotion", "unassigned", false,
			func(c *Client, do func(string, ...any)) { do("ZADD", c.keys.MassDeferred(), 1, payload) },
			func(c *Client) error { _, err := c.PromoteMassDeferred(ctx, time.Unix(100, 0), 10); return err },
			func(c *Client) (int, error) { return redis.Int(c.do(ctx, "ZCARD", c.keys.MassDeferred())) }},
		{"reallocation", "unassigned", true,
			func(c *Client, do func(string, ...any)) { do("LPUSH", c.keys.AllocationFailures(), payload) },
			func(c *Client) error { _, err := c.Reallocate(ctx, []byte(payload)); return err },
			func(c *Client) (int, error) { return redis.Int(c.do(ctx, "LLEN", c.keys.AllocationFailures())) }},
		{"quarantine", "failed", true,
			func(c *Client, do func(string, ...any)) { do("LPUSH", c.keys.MassQuarantine(), payload) },
			func(c *Client) error {
				_, err := c.FailQuarantined(ctx, []byte(payload), []byte(`{"exception":"ResqueGo::BadPayload"}`))
				return err
			},
			func(c *Client) (int, error) { return redis.Int(c.do(ctx, "LLEN", c.keys.MassQuarantine())) }},
		{"dead unit's handback", "committed", true,
			func(c *Client, do func(string, ...any)) {
				do("RPUSH", c.keys.Committed("s1:n:0000abcd"), payload)
				do("LPUSH", c.keys.UnitQueues("imports", "n1-0"), "s1:n:0000abcd")
				do("HSET", c.keys.PoolSources("imports"), "s1", "n1-0")
			},
			func(c *Client) error { _, err := c.HandBack(ctx, "imports", "n1-0", time.Unix(100, 0)); return err },
			func(c *Client) (int, error) {
				return redis.Int(c.do(ctx, "LLEN", c.keys.UnitQueues("imports", "n1-0")))
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cl, ns, do := ringTestClient(t, false)
			c.setup(cl, do)
			do("SET", ns+":"+c.dest, "not a list")
			want := "WRONGTYPE"
			if c.named {
				want = ns + ":" + c.dest + " is a string"
			}
			if err := c.step(cl); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("step: %v, want an error saying %s", err, want)
			}
			if n, err := c.kept(cl); err != nil || n != 1 {
				t.Errorf("the entry left its key: %d %v", n, err)
			}
		})
	}
}
