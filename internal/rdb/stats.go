package rdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

// SetProcessRecord writes the runtime record of host/pid, expiring after ttl.
// PX rather than EX so that sub-second intervals (tests) keep their ratio.
func (c *Client) SetProcessRecord(ctx context.Context, host string, pid int, value []byte, ttl time.Duration) error {
	return c.setRecord(ctx, "runtime record", c.keys.Process(host, pid), value, ttl)
}

// DeleteProcessRecord removes the runtime record of host/pid.
func (c *Client) DeleteProcessRecord(ctx context.Context, host string, pid int) error {
	return c.deleteRecord(ctx, "runtime record", c.keys.Process(host, pid))
}

// setRecord writes a self-expiring record (PX, so sub-second test intervals
// keep their ratio).
func (c *Client) setRecord(ctx context.Context, what, key string, value []byte, ttl time.Duration) error {
	if _, err := c.do(ctx, "SET", key, value, "PX", max(ttl.Milliseconds(), 1)); err != nil {
		return fmt.Errorf("rdb: set %s %q: %w", what, key, err)
	}
	return nil
}

func (c *Client) deleteRecord(ctx context.Context, what, key string) error {
	if _, err := c.do(ctx, "DEL", key); err != nil {
		return fmt.Errorf("rdb: del %s %q: %w", what, key, err)
	}
	return nil
}

// StatsOverview is the cluster-wide part of a stats report, read in one
// round trip.
type StatsOverview struct {
	Now                        time.Time // Redis TIME, the clock heartbeats use
	Processed, Failed, Retries int64     // stat:processed, stat:failed, stat:retries
	FailedLen, RetriesLen      int64     // LLEN failed, LLEN retries
	Queues                     []string  // SMEMBERS queues
	Workers                    []string  // SMEMBERS workers
	Heartbeats                 map[string]string
	Intervals                  map[string]string // resque-go heartbeat intervals
}

// StatsOverview reads global counters, list lengths, the queue and worker
// sets and the heartbeat hashes in one pipeline.
func (c *Client) StatsOverview(ctx context.Context) (StatsOverview, error) {
	k := c.keys
	var s StatsOverview
	var now []int64
	steps := []pipeStep{
		{[]any{"TIME"}, func(v any) (err error) { now, err = redis.Int64s(v, nil); return }},
		{[]any{"GET", k.StatProcessed()}, intInto(&s.Processed)},
		{[]any{"GET", k.StatFailed()}, intInto(&s.Failed)},
		{[]any{"GET", k.StatRetries()}, intInto(&s.Retries)},
		{[]any{"LLEN", k.Failed()}, intInto(&s.FailedLen)},
		{[]any{"LLEN", k.Retries()}, intInto(&s.RetriesLen)},
		{[]any{"SMEMBERS", k.Queues()}, func(v any) (err error) { s.Queues, err = redis.Strings(v, nil); return }},
		{[]any{"SMEMBERS", k.Workers()}, func(v any) (err error) { s.Workers, err = redis.Strings(v, nil); return }},
		{[]any{"HGETALL", k.Heartbeats()}, func(v any) (err error) { s.Heartbeats, err = redis.StringMap(v, nil); return }},
		{[]any{"HGETALL", k.WorkerIntervals()}, func(v any) (err error) { s.Intervals, err = redis.StringMap(v, nil); return }},
	}
	if err := c.pipeline(ctx, steps); err != nil {
		return StatsOverview{}, fmt.Errorf("rdb: stats overview: %w", err)
	}
	if len(now) != 2 {
		return StatsOverview{}, errors.New("rdb: stats overview: TIME reply has no seconds and microseconds")
	}
	s.Now = time.Unix(now[0], now[1]*1000)
	return s, nil
}

// BatchRead reads LLEN of every key in lists and GET of every key in gets,
// pipelined. A missing list has length 0; a missing string is nil.
func (c *Client) BatchRead(ctx context.Context, lists, gets []string) ([]int64, [][]byte, error) {
	lens := make([]int64, len(lists))
	vals := make([][]byte, len(gets))
	steps := make([]pipeStep, 0, len(lists)+len(gets))
	for i, key := range lists {
		steps = append(steps, pipeStep{[]any{"LLEN", key}, intInto(&lens[i])})
	}
	for i, key := range gets {
		steps = append(steps, pipeStep{[]any{"GET", key}, func(v any) error {
			if v == nil {
				return nil
			}
			b, err := redis.Bytes(v, nil)
			vals[i] = b
			return err
		}})
	}
	if err := c.pipeline(ctx, steps); err != nil {
		return nil, nil, fmt.Errorf("rdb: batch read: %w", err)
	}
	return lens, vals, nil
}

// pipeStep is one pipelined command and what to do with its reply.
type pipeStep struct {
	cmd   []any // name, then arguments
	reply func(v any) error
}

// pipeBatch bounds how many commands are in flight on one connection.
const pipeBatch = 1000

// pipeline sends steps in batches of pipeBatch, one round trip per batch.
// The first error reply or conversion error ends it.
func (c *Client) pipeline(ctx context.Context, steps []pipeStep) error {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for len(steps) > 0 {
		batch := steps[:min(pipeBatch, len(steps))]
		steps = steps[len(batch):]
		for _, s := range batch {
			if err := conn.Send(s.cmd[0].(string), s.cmd[1:]...); err != nil {
				return err
			}
		}
		if err := conn.Flush(); err != nil {
			return err
		}
		// Read every reply of the batch before judging any, so the connection
		// goes back to the pool in step.
		replies := make([]any, len(batch))
		errs := make([]error, len(batch))
		for i := range batch {
			replies[i], errs[i] = redis.ReceiveContext(conn, ctx)
			if errs[i] != nil {
				var re redis.Error
				if !errors.As(errs[i], &re) {
					return errs[i] // the connection is broken; the pool discards it
				}
			}
		}
		for i, s := range batch {
			if errs[i] == nil {
				errs[i] = s.reply(replies[i])
			}
			if errs[i] != nil {
				return fmt.Errorf("%s %v: %w", s.cmd[0], s.cmd[1:], errs[i])
			}
		}
	}
	return nil
}

// intInto stores an integer reply (GET of a counter, LLEN) in dst; nil is 0.
func intInto(dst *int64) func(v any) error {
	return func(v any) error {
		if v == nil {
			*dst = 0
			return nil
		}
		n, err := redis.Int64(v, nil)
		*dst = n
		return err
	}
}
