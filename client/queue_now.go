package client

import (
	"context"
	"errors"
	"time"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/scheduleio"
	"github.com/resque-go/resque-go/schedule"
	"github.com/resque-go/resque-go/unique"
)

// "Queue now", as resque-web's Delayed and Schedule tabs have it.

// QueueDelayedNow moves the delayed item with exactly the bytes raw in the
// bucket due at at (whole seconds), as DelayedAt and RemoveDelayedItem
// identify it, to its queue at once, in one atomic step: the payload a
// mover would push when it is due goes to the same destination (a
// resque-scheduler item keeps its bytes but for "queue"; a mass-queue
// item goes to unassigned), one copy leaves the bucket, its index entry
// goes with the last copy, and a bucket left empty leaves the schedule.
// The item is never both enqueued and left delayed, nor enqueued twice
// with movers running. ErrNoSuchDelayedItem when it is no longer there;
// ErrInvalid (also delayed.ErrNotJob) when it is not a job a mover can
// promote (RemoveDelayedItem deletes it): nothing is done in either case.
func (c *Client) QueueDelayedNow(ctx context.Context, at time.Time, raw []byte) (delayed.QueuedNow, error) {
	if len(raw) == 0 {
		return delayed.QueuedNow{}, invalidf("QueueDelayedNow: empty item")
	}
	r, err := delayedio.QueueNow(ctx, c.rdb, at.Unix(), raw, c.now())
	switch {
	case errors.Is(err, delayed.ErrNotFound):
		return r, adminErr("queue delayed item now", err, ErrNoSuchDelayedItem)
	case errors.Is(err, delayed.ErrNotJob):
		return r, adminErr("queue delayed item now", err, ErrInvalid)
	}
	return r, adminErr("queue delayed item now", err)
}

// QueuePlanNow enqueues the job of plan id once now, the payload its
// next fire would push (a fresh id and queue_time; a unique plan's job is
// refused with unique.ErrDuplicate while its uid is taken, or parked,
// Deferred, while its job runs), and leaves the plan and its schedule as
// they are. A paused plan is queued too. ErrNoSuchPlan when there is no
// plan id.
func (c *Client) QueuePlanNow(ctx context.Context, id string) (JobInfo, error) {
	q, err := planio.QueueNow(ctx, c.rdb, id, c.now())
	if errors.Is(err, unique.ErrDuplicate) {
		return JobInfo{}, adminErr("queue plan "+id+" now", err, unique.ErrDuplicate)
	}
	if err != nil {
		return JobInfo{}, planErr("queue plan "+id+" now", err)
	}
	return jobInfoOf(q.Queue, q.Payload, q.Deferred), nil
}

// QueueScheduleNow enqueues the job of resque-scheduler's schedule name
// (among those Schedules(q) reads) once now, as resque-web's "Queue now"
// does (Resque::Scheduler.enqueue_from_config): {"class","args"} to its
// queue, whatever its cron or every, a manual schedule included, and
// leaves its records (last_enqueued_at, resque-go's last slot) alone, so
// schedulers fire its next slot as they would have. ErrNoSuchSchedule
// when no schedule has that name.
func (c *Client) QueueScheduleNow(ctx context.Context, q ScheduleQuery, name string) (JobInfo, error) {
	in, payload, err := scheduleio.QueueNow(ctx, c.rdb, q.Static, q.Environment, q.LockPrefix, name, c.now())
	if errors.Is(err, schedule.ErrNotFound) {
		return JobInfo{}, adminErr("queue schedule "+name+" now", err, ErrNoSuchSchedule)
	}
	if err != nil {
		return JobInfo{}, adminErr("queue schedule "+name+" now", err)
	}
	return jobInfoOf(in.Queue, payload, false), nil
}

func jobInfoOf(queue string, payload []byte, deferred bool) JobInfo {
	info := JobInfo{Queue: queue, Payload: payload, Deferred: deferred}
	if p, err := protocol.DecodePayload(payload); err == nil {
		info.ID, info.Class = p.ID, p.Class
	}
	return info
}
