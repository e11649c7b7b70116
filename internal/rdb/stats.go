package rdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	// SetAside are the keys written by hand that workers' steps set
	// aside in the last day (protocol.Keys.SetAside), by key.
	SetAside []SetAsideKey
}

// SetAsideKey is a key written by hand (of another type, or holding a
// value no resque-go process writes) that a worker's step set aside: what
// the step did not do, and when it last met the key.
type SetAsideKey struct {
	Key, What string
	At        time.Time
}

// parseSetAside reads the set-aside hash's fields (key -> {"at","what"}),
// by key; a value written by hand shows as it is.
func parseSetAside(h map[string]string) []SetAsideKey {
	if len(h) == 0 {
		return nil
	}
	out := make([]SetAsideKey, 0, len(h))
	for key, v := range h {
		var e struct {
			At   float64 `json:"at"`
			What string  `json:"what"`
		}
		k := SetAsideKey{Key: key, What: v}
		if json.Unmarshal([]byte(v), &e) == nil && e.What != "" {
			k.What, k.At = e.What, time.Unix(int64(e.At), 0).UTC()
		}
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b SetAsideKey) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// StatsOverview reads global counters, list lengths, the queue and worker
// sets and the heartbeat hashes in one pipeline. A key it cannot use (a
// counter that is not an integer, a key of another type) reads as absent
// and is named in a *BadKeysError returned with the rest.
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
		{[]any{"HGETALL", k.SetAside()}, func(v any) error {
			h, err := redis.StringMap(v, nil)
			s.SetAside = parseSetAside(h)
			return err
		}},
	}
	bad, err := c.pipelineKeep(ctx, steps)
	if err == nil && len(bad) > 0 && bad[0].step == 0 {
		err = bad[0].err
	}
	if err != nil {
		return StatsOverview{}, fmt.Errorf("rdb: stats overview: %w", err)
	}
	if len(now) != 2 {
		return StatsOverview{}, errors.New("rdb: stats overview: TIME reply has no seconds and microseconds")
	}
	s.Now = time.Unix(now[0], now[1]*1000)
	return s, c.badKeys(ctx, steps, bad)
}

// KeyProblem is a key a read could not use: it holds another type than the
// read needs (a key written by hand), or a counter holds something other
// than an integer.
type KeyProblem struct {
	Key     string `json:"key"`
	Problem string `json:"problem"`
}

// BadKeysError is returned, together with everything else a read got, by a
// read that met keys it could not use: those read as absent (length 0, no
// value, counter 0).
type BadKeysError struct {
	Keys []KeyProblem
}

func (e *BadKeysError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rdb: %d key(s) cannot be read:", len(e.Keys))
	for i, p := range e.Keys {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, " %s %s", p.Key, p.Problem)
	}
	return b.String()
}

// BadKeys returns the problems err carries when it is a *BadKeysError:
// the read's results are then usable, the keys named aside. ok is false
// for any other error (nil included: nothing to set aside).
func BadKeys(err error) (keys []KeyProblem, ok bool) {
	var be *BadKeysError
	if errors.As(err, &be) {
		return be.Keys, true
	}
	return nil, false
}

// badKeys is the *BadKeysError of the steps that failed (nil: none). The
// type a key of another type holds is looked up (one more round trip, only
// then).
func (c *Client) badKeys(ctx context.Context, steps []pipeStep, bad []stepError) error {
	if len(bad) == 0 {
		return nil
	}
	wants := map[string]string{"LLEN": "list", "GET": "string", "SMEMBERS": "set", "HGETALL": "hash"}
	e := &BadKeysError{Keys: make([]KeyProblem, 0, len(bad))} // never grown: types' steps point into it
	var types []pipeStep
	for _, b := range bad {
		cmd := steps[b.step].cmd
		key, _ := cmd[1].(string)
		e.Keys = append(e.Keys, KeyProblem{Key: key, Problem: b.err.Error()})
		if isWrongType(b.err) {
			p := &e.Keys[len(e.Keys)-1]
			want := wants[cmd[0].(string)]
			p.Problem = "holds another type, not a " + want
			types = append(types, pipeStep{[]any{"TYPE", key}, func(v any) error {
				if t, err := redis.String(v, nil); err == nil && t != want && t != "none" {
					p.Problem = "holds a " + t + ", not a " + want
				}
				return nil
			}})
		}
	}
	_, _ = c.pipelineKeep(ctx, types) // the problem is named without the type if this fails
	return e
}

// BatchRead reads LLEN of every key in lists and GET of every key in gets,
// pipelined. A missing list has length 0; a missing string is nil. A key
// of another type reads as missing and is named in a *BadKeysError
// returned with the rest.
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
	bad, err := c.pipelineKeep(ctx, steps)
	if err != nil {
		return nil, nil, fmt.Errorf("rdb: batch read: %w", err)
	}
	return lens, vals, c.badKeys(ctx, steps, bad)
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
	bad, err := c.pipelineRun(ctx, steps, false)
	if err == nil && len(bad) > 0 {
		s := steps[bad[0].step]
		err = fmt.Errorf("%s %v: %w", s.cmd[0], s.cmd[1:], bad[0].err)
	}
	return err
}

// stepError is the error reply or conversion error of one step.
type stepError struct {
	step int
	err  error
}

// pipelineKeep is pipeline going on past steps with an error reply or a
// conversion error, which it returns; only a broken connection ends it.
func (c *Client) pipelineKeep(ctx context.Context, steps []pipeStep) ([]stepError, error) {
	return c.pipelineRun(ctx, steps, true)
}

func (c *Client) pipelineRun(ctx context.Context, steps []pipeStep, keep bool) ([]stepError, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var bad []stepError
	for base := 0; base < len(steps); base += pipeBatch {
		batch := steps[base:min(base+pipeBatch, len(steps))]
		for _, s := range batch {
			if err := conn.Send(s.cmd[0].(string), s.cmd[1:]...); err != nil {
				return bad, err
			}
		}
		if err := conn.Flush(); err != nil {
			return bad, err
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
					return bad, errs[i] // the connection is broken; the pool discards it
				}
			}
		}
		for i, s := range batch {
			if errs[i] == nil {
				errs[i] = s.reply(replies[i])
			}
			if errs[i] != nil {
				bad = append(bad, stepError{base + i, errs[i]})
				if !keep {
					return bad, nil
				}
			}
		}
	}
	return bad, nil
}

// intInto stores an integer reply (GET of a counter, LLEN) in dst; nil is 0.
func intInto(dst *int64) func(v any) error {
	return func(v any) error {
		if v == nil {
			*dst = 0
			return nil
		}
		n, err := redis.Int64(v, nil)
		if err != nil {
			if b, ok := v.([]byte); ok {
				return fmt.Errorf("holds %q, not an integer", clipBytes(b, 40))
			}
		}
		*dst = n
		return err
	}
}
