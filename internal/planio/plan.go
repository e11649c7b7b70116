package planio

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/plan"
)

// Add creates a plan due first at the first slot after now (time.Now); see
// AddAt.
func Add(ctx context.Context, c *rdb.Client, p plan.Plan) (string, error) {
	return AddAt(ctx, c, p, time.Now())
}

// AddAt creates a plan whose first slot is the first one strictly after
// now, writing plan:<id>, the schedule and the slot list in one step. It
// returns the plan's id; ErrExists when the id is taken, an error wrapping
// ErrInvalid when the plan is not valid.
func AddAt(ctx context.Context, c *rdb.Client, p plan.Plan, now time.Time) (string, error) {
	if err := p.Validate(); err != nil {
		return "", err
	}
	now = now.Truncate(time.Second)
	rec, err := p.Recurrence(now)
	if err != nil {
		return "", err
	}
	after := now
	if p.Cron != "" && p.Start.After(now) {
		after = p.Start.Add(-time.Second) // the start itself may be a slot
	}
	x, err := Exclusion(ctx, c, p.Calendar)
	if err != nil {
		return "", err
	}
	if p.Calendar != "" && x == nil {
		return "", fmt.Errorf("%w: calendar %q does not exist (calendar add)", plan.ErrInvalid, p.Calendar)
	}
	first, ok := plan.Exclude(rec, x, p.Misfire).Next(after)
	if !ok && x != nil {
		return "", fmt.Errorf("%w: calendar %q excludes every slot of the recurrence after %s", plan.ErrInvalid, p.Calendar, after.UTC().Format(time.RFC3339))
	}
	if !ok {
		return "", fmt.Errorf("%w: the recurrence has no slot after %s", plan.ErrInvalid, after.Format(time.RFC3339))
	}
	if err := checkHorizon(recurrenceName(p), p.Start, first, now); err != nil {
		return "", err
	}
	spec := protocol.PlanSpec{ID: p.ID, Class: p.Class, Queue: p.Queue, Args: p.Args, UniqueID: p.UniqueID,
		NextRun: first.Unix(), Cron: p.Cron, Timezone: p.Timezone, Misfire: string(p.Misfire),
		Calendar: p.Calendar, Group: p.Group}
	if spec.Misfire == "" {
		spec.Misfire = string(plan.Coalesce)
	}
	if per, ok := rec.(plan.Periodic); ok {
		spec.RecurrenceInterval, spec.Start = protocol.Period(per.Period), per.Start.Unix()
	} else if spec.Timezone == "" {
		spec.Timezone = "UTC"
	}
	if spec.ID == "" {
		spec.ID = protocol.NewJobID()
	}
	raw, err := protocol.EncodePlan(spec)
	if err != nil {
		return "", fmt.Errorf("%w: %v", plan.ErrInvalid, err)
	}
	if _, err := c.AddPlan(ctx, spec.ID, raw, spec.NextRun, spec.Group); err != nil {
		if errors.Is(err, rdb.ErrPlanExists) {
			return "", fmt.Errorf("plan %q: %w", spec.ID, plan.ErrExists)
		}
		return "", err
	}
	return spec.ID, nil
}

// Get reads plan id; ErrNotFound when there is none.
func Get(ctx context.Context, c *rdb.Client, id string) (plan.Plan, error) {
	raw, err := c.Plan(ctx, id)
	if err != nil {
		return plan.Plan{}, err
	}
	if raw == nil {
		return plan.Plan{}, fmt.Errorf("plan %q: %w", id, plan.ErrNotFound)
	}
	p := decode(id, raw)
	ts, paused, err := c.PausedPlanSlot(ctx, id)
	if err != nil {
		return plan.Plan{}, err
	}
	markPaused(&p, ts, paused)
	return p, nil
}

// markPaused fills a paused plan's Paused and NextRun (the slot it is
// filed in again when resumed).
func markPaused(p *plan.Plan, ts int64, paused bool) {
	if paused {
		p.Paused = true
		if ts > 0 {
			p.NextRun = time.Unix(ts, 0)
		}
	}
}

// List reads every plan (a SCAN of plan:* keys), by next run, then id.
func List(ctx context.Context, c *rdb.Client) ([]plan.Plan, error) {
	ids, err := c.PlanIDs(ctx)
	if err != nil {
		return nil, err
	}
	paused, err := c.PausedPlans(ctx)
	if err != nil {
		return nil, err
	}
	return load(ctx, c, ids, paused)
}

// load reads the plans of ids (those gone meanwhile left out), marks the
// paused ones, and sorts them by next run, then id.
func load(ctx context.Context, c *rdb.Client, ids []string, paused map[string]int64) ([]plan.Plan, error) {
	var out []plan.Plan
	for len(ids) > 0 {
		n := min(len(ids), 500)
		raws, err := c.Plans(ctx, ids[:n])
		if err != nil {
			return nil, err
		}
		for i, raw := range raws {
			if raw != nil {
				p := decode(ids[i], raw)
				ts, ok := paused[p.ID]
				markPaused(&p, ts, ok)
				out = append(out, p)
			}
		}
		ids = ids[n:]
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].NextRun.Equal(out[j].NextRun) {
			return out[i].NextRun.Before(out[j].NextRun)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// decode turns a stored plan into a Plan; what keeps it from being fired
// goes into Problem.
func decode(id string, raw []byte) plan.Plan {
	rec, err := protocol.DecodePlan(raw)
	p := fromRecord(id, rec)
	if u, ok, _ := protocol.ParseUnique(raw); ok {
		p.UniqueID = u.UID
	}
	if err == nil {
		_, err = p.Fireable(p.NextRun, nil)
	}
	if err != nil {
		p.Problem = err.Error()
	}
	return p
}

func fromRecord(id string, rec protocol.PlanRecord) plan.Plan {
	p := plan.Plan{ID: id, Raw: rec.Raw, Queue: rec.Queue, Class: rec.Class, Args: rec.Args, Period: rec.RecurrenceInterval,
		Cron: rec.Cron, Timezone: rec.Timezone, Misfire: plan.Misfire(rec.Misfire), NextRun: time.Unix(rec.NextRun, 0),
		Calendar: rec.Calendar, Group: rec.Group}
	if rec.HasStart {
		p.Start = time.Unix(rec.Start, 0)
	}
	return p
}

// Remove deletes plan id and takes it off the schedule, in one step;
// ErrNotFound when there is none.
func Remove(ctx context.Context, c *rdb.Client, id string) error {
	raw, err := c.Plan(ctx, id)
	if err != nil {
		return err
	}
	var slots []int64
	if rec, err := protocol.DecodePlan(raw); raw != nil && err == nil && rec.NextRun > 0 {
		slots = append(slots, rec.NextRun)
	}
	existed, dropped, err := c.RemovePlan(ctx, id, slots)
	if err != nil {
		return err
	}
	if !existed {
		return fmt.Errorf("plan %q: %w", id, plan.ErrNotFound)
	}
	if dropped > 0 {
		return nil
	}
	// Not in the slot its nextRun names: the PHP scheduler leaves nextRun
	// stale. plan:<id> is gone already (a scheduler meeting the id now
	// drops it); clear every slot so none is left holding it.
	all, err := c.PlanSlots(ctx, 0, math.MaxInt64, 0)
	if err != nil {
		return err
	}
	for len(all) > 0 {
		n := min(len(all), 200)
		if _, _, err := c.RemovePlan(ctx, id, all[:n]); err != nil {
			return err
		}
		all = all[n:]
	}
	return nil
}

// checkHorizon refuses a start before 1970 (plans store Unix seconds, read
// as unsigned) or a start or first run of the recurrence named rec more
// than plan.MaxYearsAhead after now.
func checkHorizon(rec string, start, first, now time.Time) error {
	limit := now.AddDate(plan.MaxYearsAhead, 0, 0)
	switch {
	case !start.IsZero() && start.Unix() < 0:
		return fmt.Errorf("%w: start %s is before 1970", plan.ErrInvalid, start.UTC().Format(time.RFC3339))
	case start.After(limit):
		return fmt.Errorf("%w: start in the year %d is more than %d years away", plan.ErrInvalid, start.UTC().Year(), plan.MaxYearsAhead)
	case first.After(limit):
		return fmt.Errorf("%w: %s: the first run would be in the year %d, more than %d years away", plan.ErrInvalid, rec, first.UTC().Year(), plan.MaxYearsAhead)
	}
	return nil
}

// recurrenceName is the plan's recurrence as given: every 5m0s, period "P1M"
// or cron "0 3 * * *".
func recurrenceName(p plan.Plan) string {
	switch {
	case p.Cron != "":
		return fmt.Sprintf("cron %q", p.Cron)
	case p.Period != "":
		return fmt.Sprintf("period %q", p.Period)
	}
	return "every " + p.Every.String()
}
