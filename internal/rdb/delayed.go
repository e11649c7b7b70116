package rdb

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// delayedScripts are loaded on first use.
type delayedScripts struct {
	once         sync.Once
	delay, lease *script
}

func (c *Client) delayedScripts() *delayedScripts {
	c.delayed.once.Do(func() {
		c.delayed.delay = loadScript("delay.lua", 3)
		c.delayed.lease = loadScript("lease.lua", 1)
	})
	return &c.delayed
}

// Delay adds an item to the delayed queue, due at ts (Unix seconds).
func (c *Client) Delay(ctx context.Context, item []byte, ts int64) error {
	k := c.keys
	_, err := c.eval(ctx, c.delayedScripts().delay, k.Delayed(ts), k.Timestamps(item), k.DelayedSchedule(), item, ts, protocol.DelayedMember(ts))
	if err != nil {
		return fmt.Errorf("rdb: delay: %w", err)
	}
	return nil
}

// DueDelayed returns up to n members of the delayed schedule due at or
// before now (Unix seconds), oldest first; a Bad one is set aside with
// SetAsideDelayed.
func (c *Client) DueDelayed(ctx context.Context, now int64, n int) ([]ScheduleMember, error) {
	v, err := c.scheduleMembers(ctx, c.keys.DelayedSchedule(), "-inf", strconv.FormatInt(now, 10), n)
	if err != nil {
		return nil, fmt.Errorf("rdb: due delayed buckets: %w", err)
	}
	return v, nil
}

// SetAsideDelayed takes member off the delayed schedule and records entry
// in failed ("": nothing recorded), in one step: a member that is not a
// time, or, with listType, a bucket delayed:<ts> that still holds a
// listType (another type than a list). The bucket key is left as it is.
// It reports false, with nothing done, when the member is gone or the
// bucket changed since.
func (c *Client) SetAsideDelayed(ctx context.Context, m ScheduleMember, listType string, entry []byte) (bool, error) {
	list := ""
	if listType != "" {
		list = c.keys.Delayed(m.TS)
	}
	return c.setAside(ctx, c.keys.DelayedSchedule(), m.Member, list, listType, entry)
}

// Lease takes or renews the lease key for owner for ttl; it reports whether
// owner holds it. With release, an owner gives it up.
func (c *Client) Lease(ctx context.Context, key, owner string, ttl time.Duration, release bool) (bool, error) {
	op := "take"
	if release {
		op = "release"
	}
	n, err := redis.Int(c.eval(ctx, c.delayedScripts().lease, key, owner, ttl.Milliseconds(), op))
	if err != nil {
		return false, fmt.Errorf("rdb: lease %q: %w", key, err)
	}
	return n == 1, nil
}

// promoteBatchScript promotes several head items of a bucket in one step.
var promoteBatchScript = loadScriptWith("promote_batch.lua", -1, "delayed_push.lua")

// Promotion is one item of PromoteBatch: the item read from the bucket,
// and the payload it becomes (nil: Failure is recorded in failed instead).
// With Unassigned the payload is a mass-queue job: it is pushed to
// unassigned (LPUSH, as producers push there) instead of queue:<Queue>.
type Promotion struct {
	Item, Payload []byte
	Queue         string
	Unassigned    bool
	Failure       []byte
}

// BucketHeads returns up to n items from the head of delayed:<ts>.
func (c *Client) BucketHeads(ctx context.Context, ts int64, n int) ([][]byte, error) {
	key := c.keys.Delayed(ts)
	v, err := redis.ByteSlices(c.do(ctx, "LRANGE", key, 0, n-1))
	if err != nil {
		return nil, fmt.Errorf("rdb: bucket heads: %w", c.keyTypeError(ctx, err, key, "list"))
	}
	return v, nil
}

// PromoteBatch moves the items ps (read from the head of delayed:<ts>, in
// order) to their queues in one step, each only while it is still the
// head. It returns how many it moved and whether the bucket is now empty
// (and off the schedule); moved < len(ps) with !empty means another mover
// changed the bucket: read it again. An empty ps drops the schedule entry
// of an empty bucket. A *KeyTypeError says that the destination of
// ps[moved] (its queue, or failed) holds another type: that item and the
// ones after it are still in the bucket.
func (c *Client) PromoteBatch(ctx context.Context, ts int64, ps []Promotion) (moved int, empty bool, err error) {
	k := c.keys
	n := len(ps)
	nk := 4 + 2*n
	if c.events != nil {
		nk++ // the events stream, last
	}
	args := make([]any, 0, 1+nk+2+5*n+2)
	args = append(args, nk, k.Delayed(ts), k.DelayedSchedule(), k.Queues(), k.Failed())
	for _, p := range ps {
		switch {
		case p.Payload == nil:
			args = append(args, k.Failed())
		case p.Unassigned:
			args = append(args, k.Unassigned())
		default:
			args = append(args, k.Queue(p.Queue))
		}
	}
	for _, p := range ps {
		args = append(args, k.Timestamps(p.Item))
	}
	if c.events != nil {
		args = append(args, c.events.stream)
	}
	args = append(args, ts, protocol.DelayedMember(ts))
	for _, p := range ps {
		queue, mode := p.Queue, "queue"
		if p.Payload != nil && p.Unassigned {
			queue, mode = "", "unassigned"
		}
		args = append(args, p.Item, p.Payload, queue, p.Failure, mode)
	}
	if c.events != nil {
		args = append(args, c.events.maxLen, c.events.maxAge)
	}
	v, err := redis.Values(c.eval(ctx, promoteBatchScript, args...))
	if err == nil && len(v) != 2 && len(v) != 4 {
		err = fmt.Errorf("script reply has %d values", len(v))
	}
	if err != nil {
		return 0, false, fmt.Errorf("rdb: promote batch: %w", err)
	}
	moved, _ = redis.Int(v[0], nil)
	state, _ := redis.String(v[1], nil)
	if state == "wrongtype" && len(v) == 4 {
		key, _ := redis.String(v[2], nil)
		typ, _ := redis.String(v[3], nil)
		return moved, false, fmt.Errorf("rdb: promote batch: %w", &KeyTypeError{Key: key, Type: typ, Want: "list"})
	}
	return moved, state == "empty", nil
}
