package planio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/plan"
)

// AddCalendar stores cal (resque-go:plan_calendars, name -> JSON); with
// replace false a name that is taken is plan.ErrCalendarExists. Plans that
// name it use the new version from their next fire on.
func AddCalendar(ctx context.Context, c *rdb.Client, cal plan.Calendar, replace bool) error {
	if err := cal.Validate(); err != nil {
		return err
	}
	raw, err := json.Marshal(cal)
	if err != nil {
		return fmt.Errorf("%w: %v", plan.ErrInvalid, err)
	}
	ok, err := c.SetPlanCalendar(ctx, cal.Name, raw, replace)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("calendar %q: %w", cal.Name, plan.ErrCalendarExists)
	}
	return nil
}

// GetCalendar reads calendar name; plan.ErrNoCalendar when there is none.
func GetCalendar(ctx context.Context, c *rdb.Client, name string) (plan.Calendar, error) {
	raw, err := c.PlanCalendar(ctx, name)
	if err != nil {
		return plan.Calendar{}, err
	}
	if raw == nil {
		return plan.Calendar{}, fmt.Errorf("calendar %q: %w", name, plan.ErrNoCalendar)
	}
	return decodeCalendar(name, raw)
}

// ListCalendars reads every calendar, by name. A calendar whose JSON
// cannot be read is listed with its name only.
func ListCalendars(ctx context.Context, c *rdb.Client) ([]plan.Calendar, error) {
	all, err := c.PlanCalendars(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]plan.Calendar, 0, len(all))
	for name, raw := range all {
		cal, _ := decodeCalendar(name, raw)
		out = append(out, cal)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RemoveCalendar deletes calendar name; plan.ErrNoCalendar when there is
// none. A calendar that plans name is refused (plan.ErrInvalid, naming
// them): remove or re-add those plans first.
func RemoveCalendar(ctx context.Context, c *rdb.Client, name string) error {
	plans, err := List(ctx, c)
	if err != nil {
		return err
	}
	var users []string
	for _, p := range plans {
		if p.Calendar == name {
			users = append(users, p.ID)
		}
	}
	if len(users) > 0 {
		return fmt.Errorf("%w: calendar %q is used by plan %s: remove those plans first", plan.ErrInvalid, name, strings.Join(users, ", "))
	}
	ok, err := c.RemovePlanCalendar(ctx, name)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("calendar %q: %w", name, plan.ErrNoCalendar)
	}
	return nil
}

// decodeCalendar reads a stored calendar; the hash field is its name.
func decodeCalendar(name string, raw []byte) (plan.Calendar, error) {
	var cal plan.Calendar
	if err := json.Unmarshal(raw, &cal); err != nil {
		return plan.Calendar{Name: name}, fmt.Errorf("calendar %q: stored JSON cannot be read: %v", name, err)
	}
	cal.Name = name
	return cal, nil
}

// Exclusion loads calendar name compiled; nil, nil when name is "" or
// there is no such calendar (it excludes nothing).
func Exclusion(ctx context.Context, c *rdb.Client, name string) (*plan.Exclusion, error) {
	if name == "" {
		return nil, nil
	}
	cal, err := GetCalendar(ctx, c, name)
	if errors.Is(err, plan.ErrNoCalendar) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return cal.Compile()
}

// Pause pauses plan id: it leaves its slot and is kept in
// resque-go:plans_paused with that slot, in one step. It reports false
// when the plan was paused already; plan.ErrNotFound when there is none.
func Pause(ctx context.Context, c *rdb.Client, id string) (bool, error) {
	for range maxChanged {
		raw, err := c.Plan(ctx, id)
		if err != nil {
			return false, err
		}
		if raw == nil {
			return false, fmt.Errorf("plan %q: %w", id, plan.ErrNotFound)
		}
		rec, err := protocol.DecodePlan(raw)
		if err != nil {
			return false, fmt.Errorf("plan %q cannot be paused: %v", id, err)
		}
		res, err := c.PausePlan(ctx, id, raw, rec.NextRun)
		if err != nil {
			return false, err
		}
		switch res {
		case rdb.PlanPaused:
			return true, nil
		case rdb.PlanAlreadyPaused:
			return false, nil
		case rdb.PlanPauseGone:
			return false, fmt.Errorf("plan %q: %w", id, plan.ErrNotFound)
		}
	}
	return false, fmt.Errorf("plan %q: it kept changing while being paused", id)
}

// Resume files paused plan id again in the slot it was paused at: a slot
// that passed meanwhile fires by the plan's misfire policy. It reports
// false when the plan was not paused; plan.ErrNotFound when there is none.
func Resume(ctx context.Context, c *rdb.Client, id string) (bool, error) {
	for range maxChanged {
		ts, paused, err := c.PausedPlanSlot(ctx, id)
		if err != nil {
			return false, err
		}
		if !paused {
			if raw, err := c.Plan(ctx, id); err != nil || raw == nil {
				return false, errors.Join(err, notFound(id, raw))
			}
			return false, nil
		}
		res, err := c.ResumePlan(ctx, id, ts)
		if err != nil {
			return false, err
		}
		switch res {
		case rdb.PlanResumed:
			return true, nil
		case rdb.PlanNotPaused:
			return false, nil
		case rdb.PlanPauseGone:
			return false, fmt.Errorf("plan %q: %w", id, plan.ErrNotFound)
		}
	}
	return false, fmt.Errorf("plan %q: it kept changing while being resumed", id)
}

func notFound(id string, raw []byte) error {
	if raw != nil {
		return nil
	}
	return fmt.Errorf("plan %q: %w", id, plan.ErrNotFound)
}

// PauseGroup marks group paused (a plan added to it starts paused) and
// pauses each of its plans; it returns how many it paused. Plans are
// found by a SCAN of plan:* keys, each paused by its own atomic step.
func PauseGroup(ctx context.Context, c *rdb.Client, group string) (int, error) {
	return eachOfGroup(ctx, c, group, true)
}

// ResumeGroup unmarks group and resumes each of its paused plans (also
// those paused one by one); it returns how many it resumed.
func ResumeGroup(ctx context.Context, c *rdb.Client, group string) (int, error) {
	return eachOfGroup(ctx, c, group, false)
}

func eachOfGroup(ctx context.Context, c *rdb.Client, group string, pause bool) (int, error) {
	if err := plan.ValidCalendarName(group); err != nil {
		return 0, err
	}
	if err := c.SetPlanGroupPaused(ctx, group, pause); err != nil {
		return 0, err
	}
	plans, err := List(ctx, c)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error // one plan that cannot be paused does not stop the others
	for _, p := range plans {
		if p.Group != group || p.Paused == pause {
			continue
		}
		var done bool
		if pause {
			done, err = Pause(ctx, c, p.ID)
		} else {
			done, err = Resume(ctx, c, p.ID)
		}
		switch {
		case errors.Is(err, plan.ErrNotFound):
			continue // removed meanwhile
		case err != nil && (rdb.IsTransient(err) || ctx.Err() != nil):
			return n, err
		case err != nil:
			errs = append(errs, err)
		case done:
			n++
		}
	}
	return n, errors.Join(errs...)
}
