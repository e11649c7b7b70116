package rdb

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// ClaimArgs describes one claim attempt.
type ClaimArgs struct {
	WorkerID string
	Host     string
	Queues   []string // priority order, already expanded
	Now      time.Time
}

// ClaimResult is what a claim found. Exactly one of Paused, Empty or a job
// (Payload non-nil) holds.
type ClaimResult struct {
	Paused  bool
	Empty   bool
	Queue   string
	Payload []byte
	// Resumed is set when worker:<id> already held this job: an earlier
	// claim ran but its reply was lost.
	Resumed bool
}

// Claim pops the first job in priority order and records it in worker:<id>
// in one step, with the dequeue counters.
func (c *Client) Claim(ctx context.Context, a ClaimArgs) (ClaimResult, error) {
	n := len(a.Queues)
	args := make([]any, 0, 3+3*n+2+n)
	args = append(args, 2+3*n, c.keys.PauseAll(), c.keys.Worker(a.WorkerID))
	for _, q := range a.Queues {
		args = append(args, c.keys.Queue(q))
	}
	for _, q := range a.Queues {
		args = append(args, c.keys.QueueStat(a.Host, protocol.QueueStatDequeued, q))
	}
	for _, q := range a.Queues {
		args = append(args, c.keys.QueueStat(a.Host, protocol.QueueStatQueueTime, q))
	}
	args = append(args, protocol.FormatRunAt(a.Now), strconv.FormatInt(a.Now.UnixMilli(), 10), c.keys.JobStatusPrefix())
	for _, q := range a.Queues {
		args = append(args, protocol.MarshalString(q))
	}
	reply, err := c.evalHot(ctx, c.claim, args...)
	if err != nil {
		return ClaimResult{}, fmt.Errorf("rdb: claim for %q: %w", a.WorkerID, err)
	}
	switch v := reply.(type) {
	case nil:
		return ClaimResult{Empty: true}, nil
	case int64:
		return ClaimResult{Paused: true}, nil
	case []any:
		i, err := redis.Int(v[0], nil)
		if err != nil {
			return ClaimResult{}, fmt.Errorf("rdb: claim reply: %w", err)
		}
		body, err := redis.Bytes(v[1], nil)
		if err != nil {
			return ClaimResult{}, fmt.Errorf("rdb: claim reply: %w", err)
		}
		if i == 0 {
			rec, err := protocol.ParseWorkerRecord(body)
			if err != nil {
				return ClaimResult{}, fmt.Errorf("rdb: claim: held record of %q: %w", a.WorkerID, err)
			}
			return ClaimResult{Queue: rec.Queue, Payload: rec.Payload, Resumed: true}, nil
		}
		return ClaimResult{Queue: a.Queues[i-1], Payload: body}, nil
	}
	return ClaimResult{}, fmt.Errorf("rdb: claim: unexpected reply %T", reply)
}

// OutcomeKind says how a job ended.
type OutcomeKind string

// Outcome kinds, as finish.lua names them.
const (
	OutcomeOK         OutcomeKind = "ok"
	OutcomeFail       OutcomeKind = "fail"
	OutcomeRetry      OutcomeKind = "retry"
	OutcomeReschedule OutcomeKind = "reschedule"
	OutcomeDiscard    OutcomeKind = "discard"
)

// Outcome is how a job ended, for Finish.
type Outcome struct {
	Kind       OutcomeKind
	Processing time.Duration
	// Entry is the failed entry (OutcomeFail) or retries entry (OutcomeRetry).
	Entry []byte
	// Push is what goes back (OutcomeRetry, OutcomeReschedule): a payload
	// for Queue, or, when DueAt > 0, the delayed item.
	Push  []byte
	DueAt int64
	// JobID, with Status "v3:<status>" or "php:<code>", updates the job's
	// status key; NewJobID gets "waiting" when the retry is monitored.
	JobID    string
	Status   string
	NewJobID string
	Now      time.Time
}

// Finish clears worker:<id> and writes the counters, the failed or retries
// entry, the re-enqueued payload and the job status of a finished job in one
// step. It returns ErrNotOwned when worker:<id> was already gone.
func (c *Client) Finish(ctx context.Context, workerID, host, queue string, o Outcome) error {
	k := c.keys
	if o.Kind == "" {
		o.Kind = OutcomeOK
	}
	ms := o.Processing.Milliseconds()
	if ms < 0 {
		ms = 0
	}
	statusKey := k.Worker(workerID) // a placeholder: the script ignores it without a status
	if o.Status != "" {
		statusKey = k.JobStatus(o.JobID)
	}
	keys := []any{k.Worker(workerID), k.StatProcessed(), k.StatProcessedWorker(workerID),
		k.QueueStat(host, protocol.QueueStatProcessingTime, queue),
		k.QueueStat(host, protocol.QueueStatProcessed, queue), statusKey}
	var extra []any
	switch o.Kind {
	case OutcomeFail:
		keys = append(keys, k.Failed(), k.StatFailed(), k.StatFailedWorker(workerID),
			k.QueueStat(host, protocol.QueueStatFailed, queue))
	case OutcomeRetry, OutcomeReschedule:
		delayedKey, tsKey := k.Delayed(o.DueAt), k.Timestamps(o.Push)
		if o.DueAt <= 0 {
			delayedKey, tsKey = statusKey, statusKey // unused by the script
		}
		newWaiting := "0"
		newStatusKey := statusKey
		if o.NewJobID != "" {
			newWaiting, newStatusKey = "1", k.JobStatus(o.NewJobID)
		}
		keys = append(keys, k.Failed(), k.StatFailed(), k.StatFailedWorker(workerID),
			k.QueueStat(host, protocol.QueueStatFailed, queue),
			k.Retries(), k.StatRetries(), k.QueueStat(host, protocol.QueueStatRetries, queue),
			k.Queue(queue), k.Queues(), delayedKey, tsKey, k.DelayedSchedule(), newStatusKey)
		extra = []any{o.Push, o.DueAt, queue, newWaiting, protocol.DelayedMember(o.DueAt)}
	}
	args := append([]any{len(keys)}, keys...)
	args = append(append(args, string(o.Kind), ms, o.Status, o.Now.Unix(), o.Entry), extra...)
	n, err := redis.Int(c.evalHot(ctx, c.finish, args...))
	if err != nil {
		return fmt.Errorf("rdb: finish for %q: %w", workerID, err)
	}
	if n == 0 {
		return ErrNotOwned
	}
	return nil
}

// Requeue pushes a job a slot holds back to the head of its queue and clears
// worker:<id>. It returns ErrNotOwned when worker:<id> was already gone.
func (c *Client) Requeue(ctx context.Context, workerID, queue string, payload []byte) error {
	n, err := redis.Int(c.eval(ctx, c.requeue, c.keys.Worker(workerID), c.keys.Queue(queue), payload))
	if err != nil {
		return fmt.Errorf("rdb: requeue for %q: %w", workerID, err)
	}
	if n == 0 {
		return ErrNotOwned
	}
	return nil
}

// Enqueue pushes a payload to a queue and records the queue name, as every
// Resque producer does.
func (c *Client) Enqueue(ctx context.Context, queue string, payload []byte) error {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("rdb: enqueue to %q: %w", queue, err)
	}
	defer conn.Close()
	if err := conn.Send("SADD", c.keys.Queues(), queue); err != nil {
		return fmt.Errorf("rdb: enqueue to %q: %w", queue, err)
	}
	if _, err := redis.DoContext(conn, ctx, "RPUSH", c.keys.Queue(queue), payload); err != nil {
		return fmt.Errorf("rdb: enqueue to %q: %w", queue, err)
	}
	return nil
}

// KnownQueues returns the members of the queues set.
func (c *Client) KnownQueues(ctx context.Context) ([]string, error) {
	qs, err := redis.Strings(c.do(ctx, "SMEMBERS", c.keys.Queues()))
	if err != nil {
		return nil, fmt.Errorf("rdb: queues: %w", err)
	}
	return qs, nil
}

// WaitQueue blocks until queue q is non-empty or timeout passes, without
// taking anything: BLMOVE of the list onto itself (RIGHT to RIGHT) returns
// the last item and leaves the list as it was. It reports whether q had a job.
func (c *Client) WaitQueue(ctx context.Context, q string, timeout time.Duration) (bool, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return false, fmt.Errorf("rdb: wait on %q: %w", q, err)
	}
	defer conn.Close()
	key := c.keys.Queue(q)
	ctx, cancel := context.WithTimeout(ctx, timeout+c.timeout)
	defer cancel()
	v, err := redis.DoContext(conn, ctx, "BLMOVE", key, key, "RIGHT", "RIGHT",
		strconv.FormatFloat(timeout.Seconds(), 'f', 3, 64))
	if err != nil {
		return false, fmt.Errorf("rdb: wait on %q: %w", q, err)
	}
	return v != nil, nil
}
