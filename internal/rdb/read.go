package rdb

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
)

// Int reads a counter (0 when absent).
func (c *Client) Int(ctx context.Context, key string) (int64, error) {
	n, err := redis.Int64(c.do(ctx, "GET", key))
	if err == redis.ErrNil {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("rdb: get %q: %w", key, err)
	}
	return n, nil
}

// List returns items start..stop of a list.
func (c *Client) List(ctx context.Context, key string, start, stop int) ([][]byte, error) {
	v, err := redis.ByteSlices(c.do(ctx, "LRANGE", key, start, stop))
	if err != nil {
		return nil, fmt.Errorf("rdb: lrange %q: %w", key, err)
	}
	return v, nil
}

// Len returns a list's length.
func (c *Client) Len(ctx context.Context, key string) (int64, error) {
	n, err := redis.Int64(c.do(ctx, "LLEN", key))
	if err != nil {
		return 0, fmt.Errorf("rdb: llen %q: %w", key, err)
	}
	return n, nil
}

// ScanKeys lists the keys matching pattern with SCAN (never KEYS).
func (c *Client) ScanKeys(ctx context.Context, pattern string) ([]string, error) {
	var out []string
	cursor := "0"
	for {
		v, err := redis.Values(c.do(ctx, "SCAN", cursor, "MATCH", pattern, "COUNT", 1000))
		if err != nil {
			return nil, fmt.Errorf("rdb: scan %q: %w", pattern, err)
		}
		cursor, _ = redis.String(v[0], nil)
		keys, _ := redis.Strings(v[1], nil)
		out = append(out, keys...)
		if cursor == "0" {
			return out, nil
		}
	}
}

// QueueHeads reads the length and the first (oldest: workers pop from the
// left) payload of each queue, pipelined: LLEN and LINDEX 0, plain reads.
// An empty queue has a nil head. A key of another type reads as an empty
// queue and is named in a *BadKeysError returned with the rest.
func (c *Client) QueueHeads(ctx context.Context, queues []string) (lens []int64, heads [][]byte, err error) {
	lens = make([]int64, len(queues))
	heads = make([][]byte, len(queues))
	steps := make([]pipeStep, 0, 2*len(queues))
	for i, q := range queues {
		key := c.keys.Queue(q)
		steps = append(steps, pipeStep{[]any{"LLEN", key}, intInto(&lens[i])},
			pipeStep{[]any{"LINDEX", key, 0}, func(v any) error {
				if v == nil {
					return nil
				}
				b, err := redis.Bytes(v, nil)
				heads[i] = b
				return err
			}})
	}
	bad, err := c.pipelineKeep(ctx, steps)
	if err != nil {
		return nil, nil, fmt.Errorf("rdb: queue heads: %w", err)
	}
	// LINDEX of a key of another type fails as its LLEN does: name it once
	kept := bad[:0]
	for _, b := range bad {
		if steps[b.step].cmd[0] == "LLEN" {
			kept = append(kept, b)
		}
	}
	return lens, heads, c.badKeys(ctx, steps, kept)
}

// ProcessRecords reads the runtime records of the processes pids of host
// in one MGET (nil for a record that is missing or expired).
func (c *Client) ProcessRecords(ctx context.Context, host string, pids []int) ([][]byte, error) {
	if len(pids) == 0 {
		return nil, nil
	}
	args := make([]any, len(pids))
	for i, pid := range pids {
		args[i] = c.keys.Process(host, pid)
	}
	v, err := redis.ByteSlices(c.do(ctx, "MGET", args...))
	if err != nil {
		return nil, fmt.Errorf("rdb: mget runtime records: %w", err)
	}
	return v, nil
}

// ScanKeysStep is a bounded part of ScanKeys for a page that goes on
// where the last one stopped: at most calls SCAN calls (COUNT count each)
// from cursor on ("0" or "": the start), the keys matching pattern they
// returned, and the cursor to go on from ("0": the keyspace was walked to
// its end). SCAN may return a key twice, in two steps or one.
func (c *Client) ScanKeysStep(ctx context.Context, pattern, cursor string, calls, count int) ([]string, string, error) {
	if cursor == "" {
		cursor = "0"
	}
	var out []string
	for i := 0; i < max(calls, 1); i++ {
		v, err := redis.Values(c.do(ctx, "SCAN", cursor, "MATCH", pattern, "COUNT", max(count, 1)))
		if err != nil {
			return nil, "", fmt.Errorf("rdb: scan %q: %w", pattern, err)
		}
		cursor, _ = redis.String(v[0], nil)
		keys, _ := redis.Strings(v[1], nil)
		out = append(out, keys...)
		if cursor == "0" {
			break
		}
	}
	return out, cursor, nil
}
