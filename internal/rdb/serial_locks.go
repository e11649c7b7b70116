package rdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

var serialReleaseScript = loadScript("serial_release.lua", 1)

// SerialLockState is one serial queue's lock as read.
type SerialLockState struct {
	Queue string
	// Token is the holding slot's token.
	Token string
	// TTL is the time the lock has left; negative when it has no expiry.
	TTL time.Duration
	// Type is set when the key holds another type than a string (written
	// by hand); Token and TTL are then empty.
	Type string
}

// SerialLocks reads the lock of each queue (queuedata:<q>:lock), listing
// only queues with one. Two round trips: an MGET and an EXISTS of every
// lock key (MGET reads a key of another type as nil, EXISTS counts it),
// then PTTL of each lock found, with TYPE of the keys of another type
// only when EXISTS counted more than MGET found.
func (c *Client) SerialLocks(ctx context.Context, queues []string) ([]SerialLockState, error) {
	if len(queues) == 0 {
		return nil, nil
	}
	keys := make([]any, len(queues))
	for i, q := range queues {
		keys[i] = c.keys.SerialLock(q)
	}
	var vals []any
	var exists int
	err := c.pipeline(ctx, []pipeStep{
		{append([]any{"MGET"}, keys...), func(v any) (err error) { vals, err = redis.Values(v, nil); return err }},
		{append([]any{"EXISTS"}, keys...), func(v any) (err error) { exists, err = redis.Int(v, nil); return err }},
	})
	if err != nil {
		return nil, fmt.Errorf("rdb: serial locks: %w", err)
	}
	var out []SerialLockState
	var steps []pipeStep
	found := 0
	for i, v := range vals {
		if v == nil {
			continue
		}
		found++
		tok, _ := redis.String(v, nil)
		out = append(out, SerialLockState{Queue: queues[i], Token: tok})
	}
	for i := range out {
		steps = append(steps, pipeStep{[]any{"PTTL", c.keys.SerialLock(out[i].Queue)}, func(v any) error {
			ms, err := redis.Int64(v, nil)
			out[i].TTL = time.Duration(ms) * time.Millisecond
			if ms < 0 {
				out[i].TTL = -1
			}
			return err
		}})
	}
	var other []SerialLockState
	if exists > found {
		other = make([]SerialLockState, 0, exists-found)
		for i, v := range vals {
			if v != nil {
				continue
			}
			q := queues[i]
			steps = append(steps, pipeStep{[]any{"TYPE", keys[i]}, func(v any) error {
				t, err := redis.String(v, nil)
				if t != "none" && t != "string" {
					other = append(other, SerialLockState{Queue: q, Type: t, TTL: -1})
				}
				return err
			}})
		}
	}
	if err := c.pipeline(ctx, steps); err != nil {
		return nil, fmt.Errorf("rdb: serial locks: %w", err)
	}
	return append(out, other...), nil
}

// ErrLockWrongType: a serial lock's key holds another type.
var ErrLockWrongType = errors.New("rdb: the lock's key holds another type")

// ReleaseSerialLock deletes queue's lock if token still holds it; it
// reports whether it did. ErrLockWrongType when the key holds another type.
func (c *Client) ReleaseSerialLock(ctx context.Context, queue, token string) (bool, error) {
	res, err := redis.String(c.eval(ctx, serialReleaseScript, c.keys.SerialLock(queue), token))
	if err != nil {
		return false, fmt.Errorf("rdb: release serial lock %q: %w", queue, err)
	}
	switch res {
	case "released":
		return true, nil
	case "wrongtype":
		return false, fmt.Errorf("rdb: release serial lock %q: %w", queue, ErrLockWrongType)
	}
	return false, nil
}
