package client

import (
	"context"
	"time"
)

// QueueDetail is one queue, how many jobs wait in it and how long its
// oldest job has waited.
type QueueDetail struct {
	Name string
	Size int64
	// Oldest is the queue_time of the job at the head of the queue (the
	// next one a worker takes, queued before the others); zero for an
	// empty queue or a head without queue_time (Ruby and resque-scheduler
	// write none).
	Oldest time.Time
	// Problem says why the queue's key could not be read (Queues).
	Problem string
}

// QueuesDetail is Queues with the oldest job of each queue, in three round
// trips whatever the number of queues.
func (c *Client) QueuesDetail(ctx context.Context) ([]QueueDetail, error) {
	qs, err := c.Queues(ctx)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(qs))
	for i, q := range qs {
		keys[i] = c.rdb.Keys().Queue(q.Name)
	}
	heads, err := c.rdb.ListHeads(ctx, keys)
	if err != nil {
		return nil, wrap("queues", err)
	}
	out := make([]QueueDetail, len(qs))
	for i, q := range qs {
		out[i] = QueueDetail{Name: q.Name, Size: q.Size, Problem: q.Problem}
		if heads[i] != nil {
			out[i].Oldest = decodeJob(q.Name, heads[i]).EnqueuedAt
		}
	}
	return out, nil
}
