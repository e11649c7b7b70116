package client

import (
	"context"
	"errors"

	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/plan"
)

// AddPlan creates a recurring plan (resque-v3's layout,
// docs/protocol.md#plans) and returns its id. Its first slot is the first
// one after now: a past Start never fires retroactively. Any resque-go
// process with a planner (a worker, the scheduler) fires it, each slot
// exactly once. An invalid plan is ErrInvalid (also plan.ErrInvalid); a
// given ID that is taken is ErrPlanExists.
func (c *Client) AddPlan(ctx context.Context, p plan.Plan) (string, error) {
	id, err := planio.AddAt(ctx, c.rdb, p, c.now())
	return id, planErr("add plan", err)
}

// Plans returns every plan, sorted by id, with NextRun, Raw and Problem
// filled in.
func (c *Client) Plans(ctx context.Context) ([]plan.Plan, error) {
	ps, err := planio.List(ctx, c.rdb)
	return ps, planErr("plans", err)
}

// Plan returns the plan with id; ErrNoSuchPlan when there is none.
// plan.Upcoming gives its next slots.
func (c *Client) Plan(ctx context.Context, id string) (plan.Plan, error) {
	p, err := planio.Get(ctx, c.rdb, id)
	return p, planErr("plan "+id, err)
}

// RemovePlan deletes the plan with id and its pending slot; ErrNoSuchPlan
// when there is none.
func (c *Client) RemovePlan(ctx context.Context, id string) error {
	return planErr("remove plan "+id, planio.Remove(ctx, c.rdb, id))
}

// PausePlan pauses the plan with id: it leaves the schedule, so no
// scheduler fires it (neither resque-go's nor resque-v3's PHP one), and
// keeps its slot. It reports false when it was paused already;
// ErrNoSuchPlan when there is none.
func (c *Client) PausePlan(ctx context.Context, id string) (bool, error) {
	ok, err := planio.Pause(ctx, c.rdb, id)
	return ok, planErr("pause plan "+id, err)
}

// ResumePlan files a paused plan again in its slot: slots that passed
// while it was paused fire by its misfire policy (coalesce: one job,
// catch-up: one per slot, skip: none more than a minute late). It reports
// false when it was not paused; ErrNoSuchPlan when there is none.
func (c *Client) ResumePlan(ctx context.Context, id string) (bool, error) {
	ok, err := planio.Resume(ctx, c.rdb, id)
	return ok, planErr("resume plan "+id, err)
}

// PausePlanGroup marks group paused (a plan added to it starts paused)
// and pauses each of its plans (plan.Plan.Group); it returns how many it
// paused.
func (c *Client) PausePlanGroup(ctx context.Context, group string) (int, error) {
	n, err := planio.PauseGroup(ctx, c.rdb, group)
	return n, planErr("pause plan group "+group, err)
}

// ResumePlanGroup unmarks group and resumes each of its paused plans
// (also those paused one by one); it returns how many it resumed.
func (c *Client) ResumePlanGroup(ctx context.Context, group string) (int, error) {
	n, err := planio.ResumeGroup(ctx, c.rdb, group)
	return n, planErr("resume plan group "+group, err)
}

// planErr maps the plan package's sentinels onto this package's.
func planErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, plan.ErrInvalid):
		return adminErr(op, err, ErrInvalid)
	case errors.Is(err, plan.ErrNotFound):
		return adminErr(op, err, ErrNoSuchPlan)
	case errors.Is(err, plan.ErrExists):
		return adminErr(op, err, ErrPlanExists)
	}
	return adminErr(op, err)
}
