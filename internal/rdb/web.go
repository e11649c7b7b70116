package rdb

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
)

// ListHeads reads LINDEX key 0 of every key, pipelined: the next job of each
// queue (Resque pushes at the tail and pops at the head, so the head is the
// oldest). A missing or empty list, or a key of another type, reads as nil
// (the queue list names such keys; the heads need not).
func (c *Client) ListHeads(ctx context.Context, keys []string) ([][]byte, error) {
	out := make([][]byte, len(keys))
	steps := make([]pipeStep, len(keys))
	for i, key := range keys {
		steps[i] = pipeStep{[]any{"LINDEX", key, 0}, func(v any) error {
			if v == nil {
				return nil
			}
			b, err := redis.Bytes(v, nil)
			out[i] = b
			return err
		}}
	}
	if _, err := c.pipelineKeep(ctx, steps); err != nil {
		return nil, fmt.Errorf("rdb: list heads: %w", err)
	}
	return out, nil
}

// PushCapped prepends value to the list key and trims it to its newest
// keep entries, in one MULTI (one round trip).
func (c *Client) PushCapped(ctx context.Context, key string, value []byte, keep int64) error {
	if keep < 1 {
		keep = 1
	}
	ok := func(any) error { return nil }
	steps := []pipeStep{
		{[]any{"MULTI"}, ok},
		{[]any{"LPUSH", key, value}, ok},
		{[]any{"LTRIM", key, 0, keep - 1}, ok},
		{[]any{"EXEC"}, ok},
	}
	if err := c.pipeline(ctx, steps); err != nil {
		return fmt.Errorf("rdb: push to %s: %w", key, err)
	}
	return nil
}

// Info is the text of Redis's INFO.
func (c *Client) Info(ctx context.Context) (string, error) {
	s, err := redis.String(c.do(ctx, "INFO"))
	if err != nil {
		return "", fmt.Errorf("rdb: info: %w", err)
	}
	return s, nil
}
