// Package plan is resque-v3's recurring plans (docs/protocol.md#plans): a job
// enqueued at every slot of a recurrence (an interval, an ISO 8601 period
// or a cron line in a time zone), fired by any number of Planners, each
// (plan, slot) exactly once. Plans written by the resque-v3 PHP producers
// are read and fired as they are.
package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	// Time zones are embedded so that plans keep their zone on hosts
	// without a zoneinfo database (scratch containers).
	_ "time/tzdata"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Misfire is what a plan does with slots that passed while no scheduler
// ran.
type Misfire string

// Misfire policies.
const (
	// Coalesce (the default) fires once for all the missed slots, then
	// goes on from the next slot after now.
	Coalesce Misfire = protocol.MisfireCoalesce
	// CatchUp fires every missed slot (what the resque-v3 PHP scheduler
	// did).
	CatchUp Misfire = protocol.MisfireCatchUp
	// Skip fires no slot that is more than the planner's MisfireGrace
	// late, and goes on from the next slot after now.
	Skip Misfire = protocol.MisfireSkip
)

// ErrNotFound is returned for a plan id with no plan:<id>.
var ErrNotFound = errors.New("plan: no such plan")

// ErrExists is returned by Add for an id that is taken.
var ErrExists = errors.New("plan: a plan with this id exists")

// ErrInvalid is wrapped by every error about a plan that cannot be added.
var ErrInvalid = errors.New("plan: invalid plan")

// Plan is a recurring job. Exactly one of Every, Period and Cron is set.
type Plan struct {
	// ID is opaque; Add generates one when empty.
	ID    string
	Queue string
	Class string
	// Args is a JSON array or object; empty means [].
	Args json.RawMessage
	// UniqueID gives the job "unique":{"uid":UniqueID}: a slot whose uid
	// is still queued (or running) is skipped (docs/protocol.md#unique-jobs).
	UniqueID string
	// Every is an interval of whole seconds (elapsed time). It is stored
	// as its period (5m is P0Y0M0DT0H5M0S); plans read back report Period.
	Every time.Duration
	// Period is an ISO 8601 period (P1M, P1D, PT5M, P1DT12H...); its date
	// part follows the calendar in Timezone (see Periodic).
	Period string
	// Cron is a 5-field cron line evaluated in Timezone (see Cron).
	Cron string
	// Timezone is an IANA zone for Period and Cron; default UTC.
	Timezone string
	// Start, for Every and Period, is the slot the recurrence counts from
	// (default: the time of Add); for Cron, no slot is before it. Either
	// way the first slot is strictly after the time of Add: a past start
	// never fires retroactively.
	Start time.Time
	// Misfire defaults to Coalesce.
	Misfire Misfire

	// Filled when read back (Get, List):
	NextRun time.Time
	// Raw is the plan's JSON as stored.
	Raw []byte
	// Problem, when not empty, says why the plan cannot be fired.
	Problem string
}

// Recurrence returns the plan's recurrence; base is the start of an
// every/period plan that has none (a resque-v3 plan counts from its slot).
func (p Plan) Recurrence(base time.Time) (Recurrence, error) {
	loc, err := location(p.Timezone)
	if err != nil {
		return nil, err
	}
	return p.recurrenceIn(base, loc)
}

// recurrenceIn is Recurrence with the plan's zone loaded.
func (p Plan) recurrenceIn(base time.Time, loc *time.Location) (Recurrence, error) {
	var err error
	n := 0
	for _, set := range []bool{p.Every != 0, p.Period != "", p.Cron != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("%w: give one of every, period or cron", ErrInvalid)
	}
	if p.Cron != "" {
		c, err := ParseCron(p.Cron, loc)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		return c, nil
	}
	var per protocol.Period
	if p.Every != 0 {
		if p.Timezone != "" {
			return nil, fmt.Errorf("%w: a time zone applies to a period or a cron line, not to an interval of elapsed time", ErrInvalid)
		}
		per, err = protocol.PeriodOf(p.Every)
	} else {
		per, err = protocol.ParsePeriod(p.Period)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	start := p.Start
	if start.IsZero() {
		start = base
	}
	return Periodic{Start: start.Truncate(time.Second), Period: per, Loc: loc}, nil
}

func location(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("%w: time zone %q: %v", ErrInvalid, tz, err)
	}
	return loc, nil
}

// MaxYearsAhead bounds how far after now a plan's start and first run may
// be. Further is a typo (P1000000Y, a start in the year 9999) that would
// leave a plan that never fires, and a time past the year 5138 is not read
// back as Unix seconds.
const MaxYearsAhead = 100

// checkHorizon refuses a start before 1970 (plans store Unix seconds, read
// as unsigned) or a start or first run of the recurrence named rec more
// than MaxYearsAhead after now.
func checkHorizon(rec string, start, first, now time.Time) error {
	limit := now.AddDate(MaxYearsAhead, 0, 0)
	switch {
	case !start.IsZero() && start.Unix() < 0:
		return fmt.Errorf("%w: start %s is before 1970", ErrInvalid, start.UTC().Format(time.RFC3339))
	case start.After(limit):
		return fmt.Errorf("%w: start in the year %d is more than %d years away", ErrInvalid, start.UTC().Year(), MaxYearsAhead)
	case first.After(limit):
		return fmt.Errorf("%w: %s: the first run would be in the year %d, more than %d years away", ErrInvalid, rec, first.UTC().Year(), MaxYearsAhead)
	}
	return nil
}

// recurrenceName is the plan's recurrence as given: every 5m0s, period "P1M"
// or cron "0 3 * * *".
func (p Plan) recurrenceName() string {
	switch {
	case p.Cron != "":
		return fmt.Sprintf("cron %q", p.Cron)
	case p.Period != "":
		return fmt.Sprintf("period %q", p.Period)
	}
	return "every " + p.Every.String()
}

func (p Plan) check() error {
	if p.Class == "" || p.Queue == "" {
		return fmt.Errorf("%w: a plan needs a queue and a class", ErrInvalid)
	}
	if err := protocol.ValidateQueueName(p.Queue); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if a := bytes.TrimSpace(p.Args); len(a) > 0 && (!json.Valid(a) || (a[0] != '[' && a[0] != '{')) {
		return fmt.Errorf("%w: args must be a JSON array or object", ErrInvalid)
	}
	switch p.Misfire {
	case "", Coalesce, CatchUp, Skip:
	default:
		return fmt.Errorf("%w: misfire %q: want coalesce, catch-up or skip", ErrInvalid, p.Misfire)
	}
	return nil
}

// Add creates a plan due first at the first slot after now (time.Now); see
// AddAt.
func Add(ctx context.Context, c *rdb.Client, p Plan) (string, error) {
	return AddAt(ctx, c, p, time.Now())
}

// AddAt creates a plan whose first slot is the first one strictly after
// now, writing plan:<id>, the schedule and the slot list in one step. It
// returns the plan's id; ErrExists when the id is taken, an error wrapping
// ErrInvalid when the plan is not valid.
func AddAt(ctx context.Context, c *rdb.Client, p Plan, now time.Time) (string, error) {
	if err := p.check(); err != nil {
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
	first, ok := rec.Next(after)
	if !ok {
		return "", fmt.Errorf("%w: the recurrence has no slot after %s", ErrInvalid, after.Format(time.RFC3339))
	}
	if err := checkHorizon(p.recurrenceName(), p.Start, first, now); err != nil {
		return "", err
	}
	spec := protocol.PlanSpec{ID: p.ID, Class: p.Class, Queue: p.Queue, Args: p.Args, UniqueID: p.UniqueID,
		NextRun: first.Unix(), Cron: p.Cron, Timezone: p.Timezone, Misfire: string(p.Misfire)}
	if spec.Misfire == "" {
		spec.Misfire = string(Coalesce)
	}
	if per, ok := rec.(Periodic); ok {
		spec.RecurrenceInterval, spec.Start = per.Period, per.Start.Unix()
	} else if spec.Timezone == "" {
		spec.Timezone = "UTC"
	}
	if spec.ID == "" {
		spec.ID = protocol.NewJobID()
	}
	raw, err := protocol.EncodePlan(spec)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := c.AddPlan(ctx, spec.ID, raw, spec.NextRun); err != nil {
		if errors.Is(err, rdb.ErrPlanExists) {
			return "", fmt.Errorf("plan %q: %w", spec.ID, ErrExists)
		}
		return "", err
	}
	return spec.ID, nil
}

// Get reads plan id; ErrNotFound when there is none.
func Get(ctx context.Context, c *rdb.Client, id string) (Plan, error) {
	raw, err := c.Plan(ctx, id)
	if err != nil {
		return Plan{}, err
	}
	if raw == nil {
		return Plan{}, fmt.Errorf("plan %q: %w", id, ErrNotFound)
	}
	return decode(id, raw), nil
}

// List reads every plan (a SCAN of plan:* keys), by next run, then id.
func List(ctx context.Context, c *rdb.Client) ([]Plan, error) {
	ids, err := c.PlanIDs(ctx)
	if err != nil {
		return nil, err
	}
	var out []Plan
	for len(ids) > 0 {
		n := min(len(ids), 500)
		raws, err := c.Plans(ctx, ids[:n])
		if err != nil {
			return nil, err
		}
		for i, raw := range raws {
			if raw != nil {
				out = append(out, decode(ids[i], raw))
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
func decode(id string, raw []byte) Plan {
	rec, err := protocol.DecodePlan(raw)
	p := fromRecord(id, rec)
	if u, ok, _ := protocol.ParseUnique(raw); ok {
		p.UniqueID = u.UID
	}
	if err == nil {
		_, err = p.fireable(p.NextRun, nil)
	}
	if err != nil {
		p.Problem = err.Error()
	}
	return p
}

func fromRecord(id string, rec protocol.PlanRecord) Plan {
	p := Plan{ID: id, Raw: rec.Raw, Queue: rec.Queue, Class: rec.Class, Args: rec.Args, Period: rec.RecurrenceInterval,
		Cron: rec.Cron, Timezone: rec.Timezone, Misfire: Misfire(rec.Misfire), NextRun: time.Unix(rec.NextRun, 0)}
	if rec.HasStart {
		p.Start = time.Unix(rec.Start, 0)
	}
	return p
}

// fireable checks what the planner needs to fire p and returns its
// recurrence (counted from base when it has no start), in loc (nil: the
// plan's Timezone, loaded).
func (p Plan) fireable(base time.Time, loc *time.Location) (Recurrence, error) {
	if p.Class == "" || p.Queue == "" {
		return nil, errors.New("the plan has no class or no queue")
	}
	if p.Period == "" && p.Cron == "" {
		return nil, errors.New("the plan has neither recurrenceInterval nor cron")
	}
	switch p.Misfire {
	case "", Coalesce, CatchUp, Skip:
	default:
		return nil, fmt.Errorf("misfire %q: want coalesce, catch-up or skip", p.Misfire)
	}
	p.Every = 0
	if p.Cron != "" {
		p.Period = "" // cron wins over a leftover interval
	}
	if loc == nil {
		return p.Recurrence(base)
	}
	return p.recurrenceIn(base, loc)
}

// Upcoming returns the next n slots of a plan read back (Get, List),
// starting at its NextRun.
func Upcoming(p Plan, n int) ([]time.Time, error) {
	rec, err := p.fireable(p.NextRun, nil)
	if err != nil {
		return nil, err
	}
	out := []time.Time{p.NextRun}
	for len(out) < n {
		next, ok := rec.Next(out[len(out)-1])
		if !ok {
			break
		}
		out = append(out, next)
	}
	return out, nil
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
		return fmt.Errorf("plan %q: %w", id, ErrNotFound)
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
