package rdb

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
)

// ListRange is one LRANGE: items Start..Stop of the list Key.
type ListRange struct {
	Key         string
	Start, Stop int
}

// ListRanges reads every range, pipelined in one round trip (per thousand).
// A missing key or a key of another type reads as no items: a search goes
// on past what it cannot read.
func (c *Client) ListRanges(ctx context.Context, rs []ListRange) ([][][]byte, error) {
	out := make([][][]byte, len(rs))
	steps := make([]pipeStep, len(rs))
	for i, r := range rs {
		steps[i] = pipeStep{[]any{"LRANGE", r.Key, r.Start, r.Stop}, func(v any) error {
			b, err := redis.ByteSlices(v, nil)
			out[i] = b
			return err
		}}
	}
	if _, err := c.pipelineKeep(ctx, steps); err != nil {
		return nil, fmt.Errorf("rdb: list ranges: %w", err)
	}
	return out, nil
}

// DelayedDueTimes is the number of due times in the delayed schedule
// (ZCARD), what the delayed page counts when reading every bucket's length
// would cost more than a page.
func (c *Client) DelayedDueTimes(ctx context.Context) (int64, error) {
	n, err := redis.Int64(c.do(ctx, "ZCARD", c.keys.DelayedSchedule()))
	if err != nil {
		return 0, fmt.Errorf("rdb: delayed due times: %w", err)
	}
	return n, nil
}
