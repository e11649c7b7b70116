package rdb

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

// SchedulerGauges reads, in one round trip, how many delayed buckets are
// due at now and the earliest plan slot filed (0 when none).
func (c *Client) SchedulerGauges(ctx context.Context, now time.Time) (dueBuckets, nextPlan int64, err error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("rdb: scheduler gauges: %w", err)
	}
	defer conn.Close()
	k := c.keys
	if err := conn.Send("ZCOUNT", k.DelayedSchedule(), "-inf", now.Unix()); err != nil {
		return 0, 0, fmt.Errorf("rdb: scheduler gauges: %w", err)
	}
	if err := conn.Send("ZRANGE", k.PlanSchedule(), 0, 0, "WITHSCORES"); err != nil {
		return 0, 0, fmt.Errorf("rdb: scheduler gauges: %w", err)
	}
	if err := conn.Flush(); err != nil {
		return 0, 0, fmt.Errorf("rdb: scheduler gauges: %w", err)
	}
	if dueBuckets, err = redis.Int64(redis.ReceiveContext(conn, ctx)); err != nil {
		return 0, 0, fmt.Errorf("rdb: scheduler gauges: %w", err)
	}
	v, err := redis.Values(redis.ReceiveContext(conn, ctx))
	if err != nil {
		return 0, 0, fmt.Errorf("rdb: scheduler gauges: %w", err)
	}
	if len(v) == 2 {
		nextPlan, _ = redis.Int64(v[1], nil)
	}
	return dueBuckets, nextPlan, nil
}

// SetSchedulerRecord writes a scheduler's runtime record with an expiry.
func (c *Client) SetSchedulerRecord(ctx context.Context, host string, pid int, value []byte, ttl time.Duration) error {
	return c.setRecord(ctx, "scheduler record", c.keys.SchedulerRecord(host, pid), value, ttl)
}

// DeleteSchedulerRecord removes a scheduler's runtime record.
func (c *Client) DeleteSchedulerRecord(ctx context.Context, host string, pid int) error {
	return c.deleteRecord(ctx, "scheduler record", c.keys.SchedulerRecord(host, pid))
}
