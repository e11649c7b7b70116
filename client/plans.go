package client

import (
	"context"
	"errors"
	"math"
	"strconv"

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

// PlanPage is a bounded part of the plans, for a page that goes on where
// the last one stopped.
type PlanPage struct {
	Plans []plan.Plan
	// Next is the cursor of the next page; "" when there is none.
	Next string
	// Paused is the number of paused plans (PlansScheduled's first page).
	Paused int64
}

// PlansScheduled reads the plans filed in at most maxSlots slots of the
// schedule from cursor on ("": the first page, which also holds up to
// maxSlots paused plans), sorted by next run: a bounded read whatever the
// number of keys. Every plan a scheduler fires is on the schedule or
// paused; a plan key in neither (written by hand, or broken) is listed by
// Plans and PlansScan.
func (c *Client) PlansScheduled(ctx context.Context, cursor string, maxSlots int) (PlanPage, error) {
	from := int64(math.MinInt64)
	if cursor != "" {
		n, err := strconv.ParseInt(cursor, 10, 64)
		if err != nil {
			return PlanPage{}, invalidf("PlansScheduled: cursor %q is not one this method returned", cursor)
		}
		from = n
	}
	pg, err := planio.Scheduled(ctx, c.rdb, from, maxSlots)
	if err != nil {
		return PlanPage{}, planErr("plans", err)
	}
	out := PlanPage{Plans: pg.Plans, Paused: pg.Paused}
	if !pg.Done {
		out.Next = strconv.FormatInt(pg.Next, 10)
	}
	return out, nil
}

// PlansScan reads the plans whose keys at most calls SCAN calls (COUNT
// count) from cursor on find ("": the start), sorted by next run, and the
// cursor of the next page: every plan key, a bounded part of the keyspace
// at a time.
func (c *Client) PlansScan(ctx context.Context, cursor string, calls, count int) (PlanPage, error) {
	pg, err := planio.Scan(ctx, c.rdb, cursor, calls, count)
	if err != nil {
		return PlanPage{}, planErr("plans", err)
	}
	out := PlanPage{Plans: pg.Plans}
	if !pg.Done {
		out.Next = pg.Cur
	}
	return out, nil
}
