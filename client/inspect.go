package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Job is a job as it sits in Redis: its payload exactly as its producer
// wrote it (Ruby, PHP, Node or resque-go), with the common fields decoded.
type Job struct {
	// Queue the job is in (or was taken from).
	Queue string
	// Class is the payload's "class" (for Rails ActiveJob jobs the
	// wrapper class; the job class is in Args).
	Class string
	// ID is the payload's "id"; "" when it has none (Ruby's jobs).
	ID string
	// Args is the raw JSON of "args": an array, an object, or nil when
	// absent.
	Args json.RawMessage
	// EnqueuedAt is the payload's "queue_time"; zero when it has none.
	EnqueuedAt time.Time
	// Payload is the raw payload, byte for byte.
	Payload []byte
	// Invalid says why a worker would not run this payload (not a JSON
	// object, no class, bad UTF-8...); "" for a good one. resque-go
	// workers record such a job in the failed list as
	// ResqueGo::BadPayload.
	Invalid string
}

// DecodeArgs decodes Args into v, numbers kept exact (json.Number where v
// holds interface values).
func (j Job) DecodeArgs(v any) error {
	if len(j.Args) == 0 {
		return fmt.Errorf("%w: job %s has no args", ErrInvalid, j.Class)
	}
	dec := json.NewDecoder(bytes.NewReader(j.Args))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("client: decode args of %s: %w", j.Class, err)
	}
	return nil
}

// decodeJob builds the view of raw; what does not decode is kept and
// explained, never an error.
func decodeJob(queue string, raw []byte) Job {
	j := Job{Queue: queue, Payload: raw}
	p, err := protocol.DecodePayload(raw)
	if err != nil {
		j.Invalid = trimProtocol(err)
		return j
	}
	j.Class, j.ID, j.Args = p.Class, p.ID, p.Args
	if p.HasQueueTime {
		j.EnqueuedAt = time.UnixMicro(int64(math.Round(p.QueueTime * 1e6)))
	}
	return j
}

// trimProtocol is a payload error's message without its sentinel's words,
// which Invalid already implies.
func trimProtocol(err error) string {
	msg := err.Error()
	if errors.Is(err, protocol.ErrBadPayload) {
		if rest, ok := strings.CutPrefix(msg, protocol.ErrBadPayload.Error()+": "); ok {
			return rest
		}
	}
	return msg
}

// QueueInfo is one queue and how many jobs wait in it.
type QueueInfo struct {
	Name string
	Size int64
	// Problem says why the queue's key could not be read ("holds a
	// string, not a list"); Size is then 0. Empty for a readable queue.
	Problem string
}

// Queues lists the queues in the queues set (what Ruby's Resque.queues and
// resque-web show), sorted by name, with their lengths.
func (c *Client) Queues(ctx context.Context) ([]QueueInfo, error) {
	names, err := c.rdb.KnownQueues(ctx)
	if err != nil {
		return nil, wrap("queues", err)
	}
	slices.Sort(names)
	keys := make([]string, len(names))
	for i, q := range names {
		keys[i] = c.rdb.Keys().Queue(q)
	}
	lens, _, err := c.rdb.BatchRead(ctx, keys, nil)
	problems, err := keyProblems(err)
	if err != nil {
		return nil, wrap("queues", err)
	}
	byKey := make(map[string]string, len(problems))
	for _, p := range problems {
		byKey[p.Key] = p.Problem
	}
	out := make([]QueueInfo, len(names))
	for i, q := range names {
		out[i] = QueueInfo{Name: q, Size: lens[i], Problem: byKey[keys[i]]}
	}
	return out, nil
}

// QueueSize is the number of jobs waiting in queue (0 for a queue that
// does not exist).
func (c *Client) QueueSize(ctx context.Context, queue string) (int64, error) {
	n, err := c.rdb.Len(ctx, c.rdb.Keys().Queue(queue))
	if err != nil {
		return 0, wrap("queue size", err)
	}
	return n, nil
}

// Peek returns up to limit jobs of queue from position offset (0 is the
// next job a worker takes), without taking them; limit 0 means to the end.
// The queue may change meanwhile: Peek is a view, not a claim.
func (c *Client) Peek(ctx context.Context, queue string, offset, limit int) ([]Job, error) {
	if offset < 0 || limit < 0 {
		return nil, invalidf("Peek offset %d, limit %d: must not be negative", offset, limit)
	}
	stop := -1
	if limit > 0 && offset+limit > offset { // no overflow
		stop = offset + limit - 1
	}
	items, err := c.rdb.List(ctx, c.rdb.Keys().Queue(queue), offset, stop)
	if err != nil {
		return nil, wrap("peek", err)
	}
	out := make([]Job, len(items))
	for i, raw := range items {
		out[i] = decodeJob(queue, raw)
	}
	return out, nil
}
