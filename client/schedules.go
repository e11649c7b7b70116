package client

import (
	"context"

	"github.com/resque-go/resque-go/internal/scheduleio"
	"github.com/resque-go/resque-go/schedule"
)

// ScheduleQuery says which schedules Schedules merges, as a scheduler
// started with the same settings would.
type ScheduleQuery struct {
	// Static are the entries of a schedule file (schedule.LoadFile); they
	// replace a published schedule of the same name.
	Static []schedule.Entry
	// Environment leaves out the entries for another rails_env/env.
	Environment string
	// LockPrefix is resque-scheduler's master lock prefix; "" for none.
	LockPrefix string
}

// Schedules reads resque-scheduler's schedules in force: the master lock,
// the schedules the master published as the ones it fires, the persistent
// (dynamic) schedules and when each last ran, merged with q.Static.
// Schedules are sorted by name; persistent schedules that cannot be used
// are listed in Overview.Errors.
func (c *Client) Schedules(ctx context.Context, q ScheduleQuery) (schedule.Overview, error) {
	o, err := scheduleio.Inspect(ctx, c.rdb, q.Static, q.Environment, q.LockPrefix, c.now())
	return o, adminErr("schedules", err)
}
