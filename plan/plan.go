// Package plan is resque-v3's recurring plans (docs/protocol.md#plans): a job
// enqueued at every slot of a recurrence (an interval, an ISO 8601 period
// or a cron line in a time zone). It holds the Plan type, its validation
// and the recurrences (Periodic, Cron, Upcoming), and calendars (Calendar,
// Exclude: instants a plan does not fire at): pure logic a program can use
// on its own. Plans are added, listed, paused, resumed and removed through
// package client (AddPlan, Plans, Plan, PausePlan, PausePlanGroup,
// ResumePlan, ResumePlanGroup, RemovePlan; calendars with AddCalendar);
// resque-go's planner fires them, each (plan, slot) exactly once. Plans written by the resque-v3 PHP
// producers are read and fired as they are.
package plan

import (
	"bytes"

	"encoding/json"
	"errors"
	"fmt"

	"time"

	// Time zones are embedded so that plans keep their zone on hosts
	// without a zoneinfo database (scratch containers).
	_ "time/tzdata"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Misfire is what a plan does with slots that passed while no scheduler
// ran.
type Misfire string

// Misfire policies.
const (
	// Coalesce (the default) fires once for all the missed slots, then
	// goes on from the next slot after now.
	Coalesce Misfire = "coalesce"
	// CatchUp fires every missed slot (what the resque-v3 PHP scheduler
	// did).
	CatchUp Misfire = "catch-up"
	// Skip fires no slot that is more than the planner's MisfireGrace
	// late, and goes on from the next slot after now.
	Skip Misfire = "skip"
)

// ErrNotFound is returned for a plan id with no plan:<id>.
var ErrNotFound = errors.New("plan: no such plan")

// ErrExists is returned by client.AddPlan for an id that is taken.
var ErrExists = errors.New("plan: a plan with this id exists")

// ErrInvalid is wrapped by every error about a plan that cannot be added.
var ErrInvalid = errors.New("plan: invalid plan")

// Plan is a recurring job. Exactly one of Every, Period and Cron is set.
type Plan struct {
	// ID is opaque; client.AddPlan generates one when empty.
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
	// Misfire defaults to Coalesce. It also says what a slot excluded by
	// the plan's calendar does: Skip drops it, Coalesce and CatchUp move it
	// to the first instant the calendar allows (see Calendar).
	Misfire Misfire
	// Calendar names a calendar (client.AddCalendar) whose excluded
	// instants the plan does not fire at; a calendar that does not exist
	// excludes nothing.
	Calendar string
	// Group names the plan's group: client.PausePlanGroup pauses every
	// plan of it, and a plan added to a paused group starts paused.
	Group string

	// Filled when read back (client.Plan, client.Plans):
	NextRun time.Time
	// Paused: the plan is out of the schedule until resumed; NextRun is
	// the slot it is filed in again then, to fire by its misfire policy.
	Paused bool
	// Raw is the plan's JSON as stored.
	Raw []byte
	// Problem, when not empty, says why the plan cannot be fired.
	Problem string
}

// Recurrence returns the plan's recurrence; base is the start of an
// every/period plan that has none (a resque-v3 plan counts from its slot).
func (p Plan) Recurrence(base time.Time) (Recurrence, error) {
	loc, err := LoadLocation(p.Timezone)
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
	return Periodic{Start: start.Truncate(time.Second), Period: Period(per), Loc: loc}, nil
}

// LoadLocation loads a plan's Timezone: UTC when empty, an error wrapping
// ErrInvalid when unknown.
func LoadLocation(tz string) (*time.Location, error) {
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

// Validate reports whether p can be added: a queue and a class, a valid
// queue name, args as a JSON array or object, a known misfire policy.
func (p Plan) Validate() error {
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
	for _, name := range []string{p.Calendar, p.Group} {
		if name != "" {
			if err := ValidCalendarName(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// Fireable checks what the planner needs to fire p and returns its
// recurrence (counted from base when it has no start), in loc (nil: the
// plan's Timezone, loaded).
func (p Plan) Fireable(base time.Time, loc *time.Location) (Recurrence, error) {
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

// Upcoming returns the next n slots of a plan read back (client.Plan, Plans),
// starting at its NextRun.
func Upcoming(p Plan, n int) ([]time.Time, error) {
	return UpcomingExcluding(p, nil, n)
}

// UpcomingExcluding is Upcoming for a plan whose calendar is x (nil:
// none): excluded slots are skipped or moved by the plan's misfire policy.
func UpcomingExcluding(p Plan, x *Exclusion, n int) ([]time.Time, error) {
	rec, err := p.Fireable(p.NextRun, nil)
	if err != nil {
		return nil, err
	}
	rec = Exclude(rec, x, p.Misfire)
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
