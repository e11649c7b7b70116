package scheduleio

import (
	"context"
	"fmt"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/schedule"
)

// QueueNow enqueues the job of the schedule name (as Inspect merges the
// schedules: static, published by the master, persistent) once, as
// resque-web's "Queue now" does (Resque::Scheduler.enqueue_from_config):
// its class and args to its queue, whatever its cron or every, a manual
// entry (neither) included; the slot records and last_enqueued_at are
// left alone (enqueue_from_config writes neither), so schedulers fire the
// next slot as they would have. schedule.ErrNotFound when no schedule has
// that name; an entry with no queue cannot be queued here
// (resque-scheduler would ask the Ruby class for its @queue).
func QueueNow(ctx context.Context, c *rdb.Client, static []schedule.Entry, environment, lockPrefix, name string, now time.Time) (schedule.Info, []byte, error) {
	o, err := Inspect(ctx, c, static, environment, lockPrefix, now)
	if err != nil {
		return schedule.Info{}, nil, err
	}
	for _, in := range o.Schedules {
		if in.Name != name {
			continue
		}
		if in.Queue == "" {
			return in, nil, fmt.Errorf("schedule %q names no queue: resque-scheduler takes the Ruby class's @queue, which resque-go cannot read; add a queue", name)
		}
		payload, err := in.Payload()
		if err != nil {
			return in, nil, fmt.Errorf("schedule %q: %w", name, err)
		}
		return in, payload, c.Enqueue(ctx, in.Queue, payload)
	}
	for _, b := range o.Errors {
		if b.Name == name {
			return schedule.Info{}, nil, fmt.Errorf("schedule %q cannot be used: %s", name, b.Error)
		}
	}
	return schedule.Info{}, nil, fmt.Errorf("schedule %q: %w", name, schedule.ErrNotFound)
}
