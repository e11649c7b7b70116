package rdb

import (
	"context"
	"fmt"
	"sync"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// failedScripts are loaded on first use.
type failedScripts struct {
	once          sync.Once
	retry, remove *script
}

func (c *Client) failedScripts() *failedScripts {
	c.failed.once.Do(func() {
		c.failed.retry = loadScript("failed_retry.lua", 5)
		c.failed.remove = loadScript("failed_remove.lua", 1)
	})
	return &c.failed
}

// removedSentinel marks an entry for LREM; no JSON entry can equal it.
const removedSentinel = "\x00resque-go:removed\x00"

// RetryFailed marks the entry read at index with its retried form and
// pushes payload to queue, in one step, if the entry is still in the list
// (found by its bytes if it moved), and clears the job's attempt counter
// (attempts: its AttemptsDigest, "" when it has none). It returns the index
// it changed, or -1. A mass-queue job (queue "" or a mass queue's name)
// goes back through unassigned.
func (c *Client) RetryFailed(ctx context.Context, entry []byte, index int64, retried, payload []byte, queue, attempts string) (int64, error) {
	k := c.keys
	attemptsKey := k.Attempts(attempts)
	if attempts == "" {
		attemptsKey = k.Attempts("none") // never written: DEL of it is a no-op
	}
	target := k.Queue(queue)
	if queue == "" || protocol.IsMassQueueName(queue) {
		// a mass-queue job goes back through routing, as it came
		target, queue = k.Unassigned(), ""
	}
	n, err := redis.Int64(c.eval(ctx, c.failedScripts().retry, k.Failed(), target, k.Queues(), attemptsKey, k.AttemptsIndex(),
		entry, index, retried, payload, queue))
	if err != nil {
		return 0, fmt.Errorf("rdb: retry failed entry %d: %w", index, err)
	}
	return n, nil
}

// RemoveEntry removes the entry read at index from list (a key), if it is
// still there (found by its bytes if it moved). It returns the index
// removed, or -1.
func (c *Client) RemoveEntry(ctx context.Context, list string, entry []byte, index int64) (int64, error) {
	n, err := redis.Int64(c.eval(ctx, c.failedScripts().remove, list, entry, index, removedSentinel))
	if err != nil {
		return 0, fmt.Errorf("rdb: remove entry %d: %w", index, err)
	}
	return n, nil
}

// Delete removes keys.
func (c *Client) Delete(ctx context.Context, keys ...string) error {
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	if _, err := c.do(ctx, "DEL", args...); err != nil {
		return fmt.Errorf("rdb: del: %w", err)
	}
	return nil
}
