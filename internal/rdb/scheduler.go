package rdb

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// SetSchedulerPid records pid as the host's scheduler in resque-v3's
// scheduler_pid:<host>. With onlyIfAbsent it writes only when no pid is
// recorded (SET NX: a refresh that puts the record back after another
// scheduler's clean stop removed it, without taking it from a live one).
// It reports whether it wrote.
func (c *Client) SetSchedulerPid(ctx context.Context, host string, pid int, onlyIfAbsent bool) (bool, error) {
	args := []any{c.keys.SchedulerPid(host), pid}
	if onlyIfAbsent {
		args = append(args, "NX")
	}
	v, err := c.do(ctx, "SET", args...)
	if err != nil {
		return false, fmt.Errorf("rdb: set scheduler_pid: %w", err)
	}
	return v != nil, nil
}

// SchedulerPid returns the pid recorded in scheduler_pid:<host>; 0 when
// none is, or when the value is not a pid.
func (c *Client) SchedulerPid(ctx context.Context, host string) (int, error) {
	v, err := redis.String(c.do(ctx, "GET", c.keys.SchedulerPid(host)))
	if err == redis.ErrNil {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("rdb: get scheduler_pid: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || pid <= 0 {
		return 0, nil // not a pid
	}
	return pid, nil
}

// ReleaseSchedulerPid deletes scheduler_pid:<host> if it still holds pid
// (another scheduler that started since keeps its record).
func (c *Client) ReleaseSchedulerPid(ctx context.Context, host string, pid int) error {
	if _, err := c.eval(ctx, c.delayedScripts().lease, c.keys.SchedulerPid(host), pid, 1, "release"); err != nil {
		return fmt.Errorf("rdb: release scheduler_pid: %w", err)
	}
	return nil
}
