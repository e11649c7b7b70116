package client

import (
	"context"
	"slices"
)

// PauseQueue pauses queue: every resque-go worker stops taking jobs from it
// within a second, and so does every Ruby worker that uses resque-pause or
// resque-queue-control, whose key (<namespace>:pause:queue:<queue>, "true",
// no expiry) it sets. Jobs already running finish; other queues go on; jobs
// can still be enqueued to it. Pausing a paused queue changes nothing.
func (c *Client) PauseQueue(ctx context.Context, queue string) error {
	if queue == "" {
		return invalidf("PauseQueue: empty queue name")
	}
	if err := c.rdb.PauseQueue(ctx, queue); err != nil {
		return wrap("pause queue", err)
	}
	return nil
}

// ResumeQueue undoes PauseQueue (and a pause set by the Ruby plugins): the
// workers take jobs from queue again within a second. It reports whether
// the queue was paused.
func (c *Client) ResumeQueue(ctx context.Context, queue string) (bool, error) {
	if queue == "" {
		return false, invalidf("ResumeQueue: empty queue name")
	}
	was, err := c.rdb.ResumeQueue(ctx, queue)
	if err != nil {
		return false, wrap("resume queue", err)
	}
	return was, nil
}

// PausedQueues lists the paused queues, sorted: every queue with a pause
// key, whoever set it, whether or not it is in the queues set.
func (c *Client) PausedQueues(ctx context.Context) ([]string, error) {
	names, err := c.rdb.PausedQueueNames(ctx)
	if err != nil {
		return nil, wrap("paused queues", err)
	}
	slices.Sort(names)
	return names, nil
}
