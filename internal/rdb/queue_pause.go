package rdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// PauseQueue sets queue's pause key as resque-pause and
// resque-queue-control write it: "true", no expiry.
func (c *Client) PauseQueue(ctx context.Context, queue string) error {
	key := c.keys.QueuePause(queue)
	if _, err := c.do(ctx, "SET", key, protocol.QueuePauseValue); err != nil {
		return fmt.Errorf("rdb: pause queue %q: %w", queue, err)
	}
	return nil
}

// ResumeQueue deletes queue's pause key; it reports whether the queue was
// paused.
func (c *Client) ResumeQueue(ctx context.Context, queue string) (bool, error) {
	key := c.keys.QueuePause(queue)
	n, err := redis.Int(c.do(ctx, "DEL", key))
	if err != nil {
		return false, fmt.Errorf("rdb: resume queue %q: %w", queue, err)
	}
	return n > 0, nil
}

// QueuesPaused reports, for each of queues, whether its pause key exists
// (any value, any type: the Ruby plugins only test for presence). Workers
// ask once a second, so the usual answer, nothing paused, is one EXISTS
// of every key; only when some exist does a second round trip, a pipelined
// EXISTS a key (which, unlike MGET, does not fail on a key of another
// type), say which.
func (c *Client) QueuesPaused(ctx context.Context, queues []string) ([]bool, error) {
	out := make([]bool, len(queues))
	if len(queues) == 0 {
		return out, nil
	}
	keys := make([]any, len(queues))
	for i, q := range queues {
		keys[i] = c.keys.QueuePause(q)
	}
	n, err := redis.Int(c.do(ctx, "EXISTS", keys...))
	if err != nil {
		return nil, fmt.Errorf("rdb: queue pause keys: %w", err)
	}
	if n == 0 {
		return out, nil
	}
	steps := make([]pipeStep, len(queues))
	for i := range queues {
		steps[i] = pipeStep{[]any{"EXISTS", keys[i]}, func(v any) error {
			n, err := redis.Int(v, nil)
			out[i] = n > 0
			return err
		}}
	}
	if err := c.pipeline(ctx, steps); err != nil {
		return nil, fmt.Errorf("rdb: queue pause keys: %w", err)
	}
	return out, nil
}

// PausedQueueNames lists every queue with a pause key (SCAN, never KEYS),
// unsorted.
func (c *Client) PausedQueueNames(ctx context.Context) ([]string, error) {
	prefix := c.keys.QueuePausePrefix()
	keys, err := c.ScanKeys(ctx, c.keys.QueuePausePattern())
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		names = append(names, strings.TrimPrefix(k, prefix))
	}
	return names, nil
}
