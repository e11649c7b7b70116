package rdb

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// delayedRemoveScript deletes items from a delayed bucket (see the script).
var delayedRemoveScript = loadScript("delayed_remove.lua", -1)

// scoreBound is a zset bound: math.MinInt64 and math.MaxInt64 stand for no
// bound.
func scoreBound(v int64) string {
	switch v {
	case math.MinInt64:
		return "-inf"
	case math.MaxInt64:
		return "+inf"
	}
	return strconv.FormatInt(v, 10)
}

// DelayedBuckets returns up to limit members of the schedule
// (delayed_queue_schedule) with scores from from to to, both included,
// lowest first; fromScore, when not "", is the lower bound instead (a zset
// bound, for paging on scores). math.MinInt64 and math.MaxInt64 mean no
// bound. A Bad member names no bucket.
func (c *Client) DelayedBuckets(ctx context.Context, from, to int64, fromScore string, limit int) ([]ScheduleMember, error) {
	if fromScore == "" {
		fromScore = scoreBound(from)
	}
	v, err := c.scheduleMembers(ctx, c.keys.DelayedSchedule(), fromScore, scoreBound(to), limit)
	if err != nil {
		return nil, fmt.Errorf("rdb: delayed buckets: %w", err)
	}
	return v, nil
}

// DelayedBucketLens returns the length of each bucket delayed:<ts>, in one
// round trip per thousand; a bucket of another type reads as empty and is
// named in a *BadKeysError returned with the lengths.
func (c *Client) DelayedBucketLens(ctx context.Context, ts []int64) ([]int64, error) {
	keys := make([]string, len(ts))
	for i, t := range ts {
		keys[i] = c.keys.Delayed(t)
	}
	lens, _, err := c.BatchRead(ctx, keys, nil)
	if _, ok := BadKeys(err); ok {
		return lens, err
	}
	if err != nil {
		return nil, fmt.Errorf("rdb: delayed bucket lengths: %w", err)
	}
	return lens, nil
}

// DelayedItems returns the items start..stop of bucket delayed:<ts>.
func (c *Client) DelayedItems(ctx context.Context, ts int64, start, stop int) ([][]byte, error) {
	key := c.keys.Delayed(ts)
	v, err := redis.ByteSlices(c.do(ctx, "LRANGE", key, start, stop))
	if err != nil {
		return nil, fmt.Errorf("rdb: delayed items at %d: %w", ts, c.keyTypeError(ctx, err, key, "list"))
	}
	return v, nil
}

// DelayedIndex returns, for each item, the buckets its reverse index
// timestamps:<item> names (members that are not delayed:<ts> are skipped).
func (c *Client) DelayedIndex(ctx context.Context, items [][]byte) ([][]int64, error) {
	out := make([][]int64, len(items))
	steps := make([]pipeStep, len(items))
	for i, item := range items {
		steps[i] = pipeStep{[]any{"SMEMBERS", c.keys.Timestamps(item)}, func(v any) error {
			members, err := redis.Strings(v, nil)
			for _, m := range members {
				if ts, ok := protocol.ParseDelayedMember(m); ok {
					out[i] = append(out[i], ts)
				}
			}
			return err
		}}
	}
	if err := c.pipeline(ctx, steps); err != nil {
		return nil, fmt.Errorf("rdb: delayed index: %w", err)
	}
	return out, nil
}

// DelayedPositions returns, for each item, the positions of its copies in
// bucket delayed:<ts> (head first; LPOS, Redis 6.0.6 or newer).
func (c *Client) DelayedPositions(ctx context.Context, ts int64, items [][]byte) ([][]int64, error) {
	out := make([][]int64, len(items))
	steps := make([]pipeStep, len(items))
	for i, item := range items {
		steps[i] = pipeStep{[]any{"LPOS", c.keys.Delayed(ts), item, "COUNT", 0}, func(v any) error {
			var err error
			out[i], err = redis.Int64s(v, nil)
			return err
		}}
	}
	if err := c.pipeline(ctx, steps); err != nil {
		return nil, fmt.Errorf("rdb: delayed positions at %d: %w", ts, c.keyTypeError(ctx, err, c.keys.Delayed(ts), "list"))
	}
	return out, nil
}

// DelayedRemoval says what RemoveDelayed did.
type DelayedRemoval struct {
	// Removed counts the copies deleted from the bucket.
	Removed int64
	// Unindexed counts the timestamps:<item> entries deleted.
	Unindexed int64
	// Unscheduled is true when the bucket was empty afterwards and was
	// taken off the schedule.
	Unscheduled bool
}

// RemoveDelayed deletes every copy of each of items (exact bytes, distinct)
// from bucket delayed:<ts>, their index entries, and the bucket's schedule
// entry when it is left empty, in one atomic step (an empty items list
// only takes an empty bucket off the schedule). Movers and producers may
// run meanwhile.
func (c *Client) RemoveDelayed(ctx context.Context, ts int64, items [][]byte) (DelayedRemoval, error) {
	k := c.keys
	args := make([]any, 0, 2*len(items)+4)
	args = append(args, 2+len(items), k.Delayed(ts), k.DelayedSchedule())
	for _, item := range items {
		args = append(args, k.Timestamps(item))
	}
	args = append(args, ts, protocol.DelayedMember(ts))
	for _, item := range items {
		args = append(args, item)
	}
	v, err := redis.Int64s(c.eval(ctx, delayedRemoveScript, args...))
	if err == nil && len(v) != 3 {
		err = fmt.Errorf("script reply has %d values, want 3", len(v))
	}
	if err != nil {
		return DelayedRemoval{}, fmt.Errorf("rdb: remove delayed items at %d: %w", ts, c.keyTypeError(ctx, err, k.Delayed(ts), "list"))
	}
	return DelayedRemoval{Removed: v[0], Unindexed: v[1], Unscheduled: v[2] == 1}, nil
}

// DelayedScheduleCount counts the schedule's timestamps from from to to,
// both included (math.MinInt64 and math.MaxInt64: no bound).
func (c *Client) DelayedScheduleCount(ctx context.Context, from, to int64) (int64, error) {
	n, err := redis.Int64(c.do(ctx, "ZCOUNT", c.keys.DelayedSchedule(), scoreBound(from), scoreBound(to)))
	if err != nil {
		return 0, fmt.Errorf("rdb: delayed schedule count: %w", err)
	}
	return n, nil
}

// delayedTrimScript deletes the head of a delayed bucket (see the script).
var delayedTrimScript = loadScript("delayed_trim.lua", -1)

// TrimDelayed deletes the first len(head) items of bucket delayed:<ts> if
// they are still head (exact bytes, in order), and the index entries of
// unindex (items of head with no copy among the later snapshot items, the
// later items of the bucket as the caller read it) unless a copy was pushed
// since; a bucket left empty is taken off the schedule; all in one atomic
// step. ok is false, and nothing is done, when the head is not head any
// more (a mover took some of it).
func (c *Client) TrimDelayed(ctx context.Context, ts int64, head [][]byte, later int, unindex [][]byte) (r DelayedRemoval, ok bool, err error) {
	k := c.keys
	args := make([]any, 0, 7+len(head)+2*len(unindex))
	args = append(args, 2+len(unindex), k.Delayed(ts), k.DelayedSchedule())
	for _, item := range unindex {
		args = append(args, k.Timestamps(item))
	}
	args = append(args, ts, protocol.DelayedMember(ts), len(head), later)
	for _, item := range head {
		args = append(args, item)
	}
	for _, item := range unindex {
		args = append(args, item)
	}
	v, err := redis.Int64s(c.eval(ctx, delayedTrimScript, args...))
	if err == nil && len(v) != 3 {
		err = fmt.Errorf("script reply has %d values, want 3", len(v))
	}
	if err != nil {
		return DelayedRemoval{}, false, fmt.Errorf("rdb: trim delayed bucket %d: %w", ts, err)
	}
	if v[0] < 0 {
		return DelayedRemoval{}, false, nil
	}
	return DelayedRemoval{Removed: v[0], Unindexed: v[1], Unscheduled: v[2] == 1}, true, nil
}

// delayedQueueNowScript moves one delayed item to its queue (see the script).
var delayedQueueNowScript = loadScriptWith("delayed_queue_now.lua", -1, "delayed_push.lua")

// DelayedQueuedNow says what QueueDelayedNow did.
type DelayedQueuedNow struct {
	// Found is false when the item was no longer in the bucket (promoted
	// or removed meanwhile): nothing was done.
	Found bool
	// Left counts the items left in the bucket.
	Left int64
	// Unscheduled is true when the bucket was left empty and was taken
	// off the schedule.
	Unscheduled bool
}

// QueueDelayedNow moves one copy of p.Item from bucket delayed:<ts> to its
// destination (queue:<p.Queue>, or unassigned with p.Unassigned) as
// p.Payload, as PromoteBatch moves it when due, in one atomic step: its
// index entry goes with the last copy, an emptied bucket leaves the
// schedule. A *KeyTypeError says that the destination holds another type
// (nothing was done). p.Payload must be set: an item that cannot be
// promoted is not queued now.
func (c *Client) QueueDelayedNow(ctx context.Context, ts int64, p Promotion) (DelayedQueuedNow, error) {
	if p.Payload == nil {
		return DelayedQueuedNow{}, fmt.Errorf("rdb: queue delayed item now: no payload")
	}
	k := c.keys
	dest, queue, mode := k.Queue(p.Queue), p.Queue, "queue"
	if p.Unassigned {
		dest, queue, mode = k.Unassigned(), "", "unassigned"
	}
	nk := 5
	if c.events != nil {
		nk++
	}
	args := []any{nk, k.Delayed(ts), k.DelayedSchedule(), k.Queues(), dest, k.Timestamps(p.Item)}
	if c.events != nil {
		args = append(args, c.events.stream)
	}
	args = append(args, ts, protocol.DelayedMember(ts), p.Item, p.Payload, queue, mode)
	if c.events != nil {
		args = append(args, c.events.maxLen, c.events.maxAge)
	}
	v, err := redis.Values(c.eval(ctx, delayedQueueNowScript, args...))
	if err == nil && len(v) == 0 {
		err = fmt.Errorf("script reply is empty")
	}
	if err != nil {
		return DelayedQueuedNow{}, fmt.Errorf("rdb: queue delayed item at %d now: %w", ts, c.keyTypeError(ctx, err, k.Delayed(ts), "list"))
	}
	state, _ := redis.String(v[0], nil)
	switch {
	case state == "absent":
		return DelayedQueuedNow{}, nil
	case state == "wrongtype" && len(v) == 3:
		key, _ := redis.String(v[1], nil)
		typ, _ := redis.String(v[2], nil)
		return DelayedQueuedNow{}, fmt.Errorf("rdb: queue delayed item at %d now: %w", ts, &KeyTypeError{Key: key, Type: typ, Want: "list"})
	case state == "queued" && len(v) == 3:
		left, _ := redis.Int64(v[1], nil)
		unscheduled, _ := redis.Int64(v[2], nil)
		return DelayedQueuedNow{Found: true, Left: left, Unscheduled: unscheduled == 1}, nil
	}
	return DelayedQueuedNow{}, fmt.Errorf("rdb: queue delayed item at %d now: unexpected reply %q", ts, state)
}
