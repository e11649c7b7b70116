package rdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
)

// scheduleScripts are loaded on first use.
type scheduleScripts struct {
	once                  sync.Once
	master, fire, publish *script
}

func (c *Client) scheduleScripts() *scheduleScripts {
	c.schedules.once.Do(func() {
		c.schedules.master = loadScript("sched_master.lua", 1)
		c.schedules.fire = loadScript("sched_fire.lua", 5)
		c.schedules.publish = loadScript("sched_publish.lua", 3)
	})
	return &c.schedules
}

// PublishSchedules replaces the published schedules (name to config JSON)
// with configs, if value holds the master lock lockKey; it reports whether
// it did.
func (c *Client) PublishSchedules(ctx context.Context, lockKey, value string, configs map[string][]byte) (bool, error) {
	k := c.keys
	args := make([]any, 0, 5+2*len(configs))
	args = append(args, lockKey, k.PublishedSchedules(), k.SchedulesPublisher(), value, "publish")
	for name, cfg := range configs {
		args = append(args, name, cfg)
	}
	n, err := redis.Int(c.eval(ctx, c.scheduleScripts().publish, args...))
	if err != nil {
		return false, fmt.Errorf("rdb: publish schedules: %w", err)
	}
	return n == 1, nil
}

// WithdrawSchedules removes the published schedules if value published
// them.
func (c *Client) WithdrawSchedules(ctx context.Context, lockKey, value string) error {
	k := c.keys
	if _, err := c.eval(ctx, c.scheduleScripts().publish, lockKey, k.PublishedSchedules(), k.SchedulesPublisher(), value, "withdraw"); err != nil {
		return fmt.Errorf("rdb: withdraw schedules: %w", err)
	}
	return nil
}

// PublishedSchedules returns the published schedules (name to config JSON)
// and the lock value of the scheduler that published them ("" when none
// did), read in one step.
func (c *Client) PublishedSchedules(ctx context.Context) (publisher string, configs map[string][]byte, err error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("rdb: published schedules: %w", err)
	}
	defer conn.Close()
	k := c.keys
	if err := conn.Send("MULTI"); err != nil {
		return "", nil, fmt.Errorf("rdb: published schedules: %w", err)
	}
	_ = conn.Send("GET", k.SchedulesPublisher())
	_ = conn.Send("HGETALL", k.PublishedSchedules())
	v, err := redis.Values(redis.DoContext(conn, ctx, "EXEC"))
	if err != nil || len(v) != 2 {
		return "", nil, fmt.Errorf("rdb: published schedules: %w", err)
	}
	publisher, err = redis.String(v[0], nil)
	if err == redis.ErrNil {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("rdb: published schedules: %w", err)
	}
	kv, err := redis.ByteSlices(v[1], nil)
	if err != nil {
		return "", nil, fmt.Errorf("rdb: published schedules: %w", err)
	}
	configs = make(map[string][]byte, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		configs[string(kv[i])] = kv[i+1]
	}
	return publisher, configs, nil
}

// ErrNotMaster is returned by FireSchedule when the caller no longer holds
// the scheduler master lock; nothing was enqueued.
var ErrNotMaster = errors.New("rdb: not the scheduler master")

// SchedulerMaster takes or renews the scheduler master lock (lockKey,
// protocol.Keys.SchedulerMasterLock) for value with resque-scheduler's
// semantics; it reports whether value holds it afterwards. ttl is rounded
// down to whole seconds (at least 1), as Ruby's EXPIRE takes it.
func (c *Client) SchedulerMaster(ctx context.Context, lockKey, value string, ttl time.Duration) (bool, error) {
	n, err := redis.Int(c.eval(ctx, c.scheduleScripts().master, lockKey, value, lockSeconds(ttl), "hold"))
	if err != nil {
		return false, fmt.Errorf("rdb: scheduler master lock: %w", err)
	}
	return n == 1, nil
}

// ReleaseSchedulerMaster deletes the master lock if value holds it.
func (c *Client) ReleaseSchedulerMaster(ctx context.Context, lockKey, value string) error {
	if _, err := c.eval(ctx, c.scheduleScripts().master, lockKey, value, 1, "release"); err != nil {
		return fmt.Errorf("rdb: release scheduler master lock: %w", err)
	}
	return nil
}

// SchedulerMasterHolder returns the master lock's value and remaining TTL;
// "" when no scheduler holds it.
func (c *Client) SchedulerMasterHolder(ctx context.Context, lockKey string) (string, time.Duration, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("rdb: scheduler master: %w", err)
	}
	defer conn.Close()
	if err := conn.Send("MULTI"); err != nil {
		return "", 0, fmt.Errorf("rdb: scheduler master: %w", err)
	}
	_ = conn.Send("GET", lockKey)
	_ = conn.Send("PTTL", lockKey)
	v, err := redis.Values(redis.DoContext(conn, ctx, "EXEC"))
	if err != nil || len(v) != 2 {
		return "", 0, fmt.Errorf("rdb: scheduler master: %w", err)
	}
	holder, err := redis.String(v[0], nil)
	if err == redis.ErrNil {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("rdb: scheduler master: %w", err)
	}
	ms, _ := redis.Int64(v[1], nil)
	return holder, time.Duration(max(ms, 0)) * time.Millisecond, nil
}

func lockSeconds(ttl time.Duration) int64 { return max(int64(ttl/time.Second), 1) }

// ScheduleFire is one slot of a recurring schedule to enqueue.
type ScheduleFire struct {
	// LockKey and LockValue: the master lock the caller holds.
	LockKey, LockValue string
	Name               string
	Slot               int64 // Unix seconds
	Queue              string
	Payload            []byte
	// EnqueuedAt is written to delayed:last_enqueued_at (Ruby's Time#to_s).
	EnqueuedAt string
}

// FireSchedule enqueues f's job unless a slot at or after f.Slot was
// already enqueued for f.Name; it reports whether it enqueued it and the
// last slot recorded afterwards. It returns ErrNotMaster (and does
// nothing) when f.LockValue does not hold f.LockKey.
func (c *Client) FireSchedule(ctx context.Context, f ScheduleFire) (fired bool, last int64, err error) {
	k := c.keys
	v, err := redis.Int64s(c.eval(ctx, c.scheduleScripts().fire,
		f.LockKey, k.ScheduleSlots(), k.LastEnqueuedAt(), k.Queues(), k.Queue(f.Queue),
		f.LockValue, f.Name, f.Slot, f.Payload, f.Queue, f.EnqueuedAt))
	if err != nil {
		return false, 0, fmt.Errorf("rdb: fire schedule %q: %w", f.Name, err)
	}
	if len(v) != 2 {
		return false, 0, fmt.Errorf("rdb: fire schedule %q: unexpected reply %v", f.Name, v)
	}
	switch v[0] {
	case -1:
		return false, 0, ErrNotMaster
	case 1:
		return true, v[1], nil
	}
	return false, v[1], nil
}

// ScheduleRecords returns what is recorded of past enqueues: resque-go's
// last slot per schedule (Unix seconds) and resque-scheduler's
// last_enqueued_at values (Ruby's Time#to_s) per schedule.
func (c *Client) ScheduleRecords(ctx context.Context) (slots map[string]int64, lastEnqueued map[string]string, err error) {
	raw, err := redis.StringMap(c.do(ctx, "HGETALL", c.keys.ScheduleSlots()))
	if err != nil {
		return nil, nil, fmt.Errorf("rdb: schedule slots: %w", err)
	}
	slots = make(map[string]int64, len(raw))
	for name, s := range raw {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			slots[name] = n
		}
	}
	lastEnqueued, err = redis.StringMap(c.do(ctx, "HGETALL", c.keys.LastEnqueuedAt()))
	if err != nil {
		return nil, nil, fmt.Errorf("rdb: last_enqueued_at: %w", err)
	}
	return slots, lastEnqueued, nil
}

// PersistentSchedules returns the persistent_schedules hash: name to the
// JSON of the schedule's config.
func (c *Client) PersistentSchedules(ctx context.Context) (map[string][]byte, error) {
	v, err := redis.ByteSlices(c.do(ctx, "HGETALL", c.keys.PersistentSchedules()))
	if err != nil {
		return nil, fmt.Errorf("rdb: persistent schedules: %w", err)
	}
	m := make(map[string][]byte, len(v)/2)
	for i := 0; i+1 < len(v); i += 2 {
		m[string(v[i])] = v[i+1]
	}
	return m, nil
}

// PersistentSchedule returns one persistent schedule's JSON; ok is false
// when there is none by that name.
func (c *Client) PersistentSchedule(ctx context.Context, name string) ([]byte, bool, error) {
	v, err := redis.Bytes(c.do(ctx, "HGET", c.keys.PersistentSchedules(), name))
	if err == redis.ErrNil {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("rdb: persistent schedule %q: %w", name, err)
	}
	return v, true, nil
}

// PopChangedSchedules removes and returns up to n names from
// schedules_changed (what a dynamic master reloads).
func (c *Client) PopChangedSchedules(ctx context.Context, n int) ([]string, error) {
	v, err := redis.Strings(c.do(ctx, "SPOP", c.keys.SchedulesChanged(), n))
	if err != nil && err != redis.ErrNil {
		return nil, fmt.Errorf("rdb: schedules_changed: %w", err)
	}
	return v, nil
}

// ClearChangedSchedules empties schedules_changed (a master that reloads
// every schedule, as resque-scheduler's load_schedule! does).
func (c *Client) ClearChangedSchedules(ctx context.Context) error {
	if _, err := c.do(ctx, "DEL", c.keys.SchedulesChanged()); err != nil {
		return fmt.Errorf("rdb: clear schedules_changed: %w", err)
	}
	return nil
}
