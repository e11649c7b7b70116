package planio

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/uniqueio"
	"github.com/resque-go/resque-go/unique"
)

// Queued is what QueueNow pushed.
type Queued struct {
	Queue   string
	Payload []byte
	// Deferred: the plan's job is unique and its uid's job is running;
	// the job was parked, as a fire parks it (Payload is what was parked).
	Deferred bool
}

// QueueNow enqueues plan id's job once now, the payload a fire at now
// would push (protocol.PlanPayload: a fresh job id and queue_time), with
// the fire's handling of a unique job (refused with unique.ErrDuplicate
// while its uid is taken, parked when deferrable), and leaves the plan,
// its slot and its schedule as they are: the planner fires its next slot
// as it would have. A paused plan is queued too (the operator asked).
// plan.ErrNotFound when there is no plan id.
func QueueNow(ctx context.Context, c *rdb.Client, id string, now time.Time) (Queued, error) {
	raw, err := c.Plan(ctx, id)
	if err != nil {
		return Queued{}, err
	}
	if err := notFound(id, raw); err != nil {
		return Queued{}, err
	}
	rec, err := protocol.DecodePlan(raw)
	if err != nil {
		return Queued{}, fmt.Errorf("plan %q cannot be queued: %w", id, err)
	}
	if rec.Queue == "" {
		return Queued{}, fmt.Errorf("plan %q cannot be queued: it names no queue", id)
	}
	payload, err := protocol.PlanPayload(raw, protocol.NewJobID(), now)
	if err != nil {
		return Queued{}, fmt.Errorf("plan %q cannot be queued: %w", id, err)
	}
	q := Queued{Queue: rec.Queue, Payload: payload}
	if _, ok, err := protocol.ParseUnique(payload); err != nil {
		return Queued{}, fmt.Errorf("plan %q cannot be queued: %w", id, err)
	} else if ok {
		res, err := uniqueio.Enqueue(ctx, c, unique.Job{Queue: rec.Queue, Payload: payload})
		if errors.Is(err, unique.ErrDuplicate) {
			return Queued{}, fmt.Errorf("plan %q: %w", id, err)
		}
		if err != nil {
			return Queued{}, err
		}
		if q.Deferred = res == unique.Deferred; q.Deferred {
			// what was parked, as client.JobInfo gives a deferred job
			if q.Payload, err = protocol.DelayedItem(payload, rec.Queue); err != nil {
				return Queued{}, err
			}
		}
		return q, nil
	}
	return q, c.Enqueue(ctx, rec.Queue, payload)
}
