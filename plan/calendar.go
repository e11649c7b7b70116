package plan

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/robfig/cron/v3"
)

// ErrNoCalendar is returned for a calendar name with no calendar.
var ErrNoCalendar = errors.New("plan: no such calendar")

// ErrCalendarExists is returned by client.AddCalendar for a name that is
// taken (unless it replaces).
var ErrCalendarExists = errors.New("plan: a calendar with this name exists")

// Calendar is a named set of excluded instants (Quartz's calendars): a plan
// that names it (Plan.Calendar) fires at none of them. What happens to a
// slot that falls on one is the plan's misfire policy: Skip drops the slot
// (the plan goes on at its next slot that is not excluded); Coalesce and
// CatchUp move it to the first instant the calendar allows, where one job
// stands for every slot in the excluded stretch, and the plan then goes on
// at its next slot after that instant.
type Calendar struct {
	Name string `json:"name"`
	// Dates are whole days excluded, YYYY-MM-DD, in Timezone: from 00:00
	// to the next 00:00 (23 or 25 hours across a DST change).
	Dates []string `json:"dates,omitempty"`
	// Cron lines (5 fields, as Plan.Cron) exclude every minute of the
	// wall clock in Timezone that they match: an instant is excluded when
	// the line would fire at the start of its minute. "* * * * 0,6" is
	// every weekend, "* 0-7 * * *" each night until 08:00, "* * 25 12 *"
	// every 25 December. A wall-clock minute that happens twice (the
	// repeated hour of a DST change) is excluded both times.
	Cron []string `json:"cron,omitempty"`
	// Timezone is an IANA zone for Dates and Cron; default UTC.
	Timezone string `json:"timezone,omitempty"`
}

// Exclusion is a calendar ready to test instants (Calendar.Compile).
type Exclusion struct {
	loc   *time.Location
	dates map[day]bool
	cron  []*cron.SpecSchedule
}

// day is a calendar date.
type day struct {
	y int
	m time.Month
	d int
}

func dayOf(t time.Time) day {
	y, m, d := t.Date()
	return day{y, m, d}
}

// maxAllowedSteps bounds Allowed's walk (about two years of excluded
// minutes, more when whole days are excluded).
const maxAllowedSteps = 1_100_000

// ValidCalendarName reports whether name can name a calendar or a plan
// group: 1 to 200 characters, no space or control character.
func ValidCalendarName(name string) error {
	if name == "" || len(name) > 200 {
		return fmt.Errorf("%w: name %q: want 1 to 200 characters", ErrInvalid, name)
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return fmt.Errorf("%w: name %q: no spaces or control characters", ErrInvalid, name)
	}
	return nil
}

// Validate reports whether c can be stored: a valid name, at least one
// date or cron line, each of them valid, a known time zone.
func (c Calendar) Validate() error {
	if err := ValidCalendarName(c.Name); err != nil {
		return err
	}
	if len(c.Dates) == 0 && len(c.Cron) == 0 {
		return fmt.Errorf("%w: calendar %q excludes nothing: give a date or a cron line", ErrInvalid, c.Name)
	}
	_, err := c.Compile()
	return err
}

// Compile parses the calendar's dates, cron lines and zone; an error wraps
// ErrInvalid.
func (c Calendar) Compile() (*Exclusion, error) {
	loc, err := LoadLocation(c.Timezone)
	if err != nil {
		return nil, err
	}
	x := &Exclusion{loc: loc, dates: map[day]bool{}}
	for _, d := range c.Dates {
		t, err := time.Parse(time.DateOnly, d)
		if err != nil {
			return nil, fmt.Errorf("%w: calendar date %q: want YYYY-MM-DD", ErrInvalid, d)
		}
		x.dates[dayOf(t)] = true
	}
	for _, line := range c.Cron {
		pc, err := ParseCron(line, loc)
		if err != nil {
			return nil, fmt.Errorf("%w: calendar %v", ErrInvalid, err)
		}
		x.cron = append(x.cron, pc.schedule)
	}
	return x, nil
}

// Excluded reports whether the calendar excludes instant t.
func (x *Exclusion) Excluded(t time.Time) bool {
	if x == nil {
		return false
	}
	w := t.In(x.loc)
	if x.dates[dayOf(w)] {
		return true
	}
	for _, s := range x.cron {
		if cronMatches(s, w) {
			return true
		}
	}
	return false
}

// Allowed returns the first whole second at or after t that the calendar
// does not exclude; false when there is none within about two years.
func (x *Exclusion) Allowed(t time.Time) (time.Time, bool) {
	if t.Truncate(time.Second).Before(t) {
		t = t.Truncate(time.Second).Add(time.Second)
	}
	if x == nil {
		return t, true
	}
	for range maxAllowedSteps {
		w := t.In(x.loc)
		if x.dates[dayOf(w)] {
			y, m, d := w.Date()
			t = instants(time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC), x.loc)[0]
			continue
		}
		if !slicesAny(x.cron, func(s *cron.SpecSchedule) bool { return cronMatches(s, w) }) {
			return t, true
		}
		t = t.Truncate(time.Minute).Add(time.Minute)
	}
	return time.Time{}, false
}

func slicesAny(ss []*cron.SpecSchedule, f func(*cron.SpecSchedule) bool) bool {
	for _, s := range ss {
		if f(s) {
			return true
		}
	}
	return false
}

// starBit is robfig/cron's mark of a field given as "*" (or "?").
const starBit = 1 << 63

// cronMatches reports whether s fires at the start of w's wall-clock
// minute, by cron's rules (day of month or day of week when both are
// restricted).
func cronMatches(s *cron.SpecSchedule, w time.Time) bool {
	if 1<<uint(w.Minute())&s.Minute == 0 || 1<<uint(w.Hour())&s.Hour == 0 || 1<<uint(w.Month())&s.Month == 0 {
		return false
	}
	dom := 1<<uint(w.Day())&s.Dom > 0
	dow := 1<<uint(w.Weekday())&s.Dow > 0
	if s.Dom&starBit > 0 || s.Dow&starBit > 0 {
		return dom && dow
	}
	return dom || dow
}

// Exclude returns r without the instants x excludes, by misfire policy m:
// Skip drops an excluded slot (the next slot is the first one x allows);
// Coalesce and CatchUp move it to the first instant x allows, and go on
// from there with r's next slot. x nil returns r.
func Exclude(r Recurrence, x *Exclusion, m Misfire) Recurrence {
	if x == nil {
		return r
	}
	return excluding{r: r, x: x, skip: m == Skip}
}

type excluding struct {
	r    Recurrence
	x    *Exclusion
	skip bool
}

// maxExcludedSlots bounds the excluded stretches Next walks over (an
// excluded stretch costs one step however many slots it holds): a plan
// whose next 1,000 stretches of slots are all excluded has no next slot.
const maxExcludedSlots = 1_000

func (e excluding) Next(t time.Time) (time.Time, bool) {
	s, ok := e.r.Next(t)
	for range maxExcludedSlots {
		if !ok || !e.x.Excluded(s) {
			return s, ok
		}
		a, found := e.x.Allowed(s)
		if !found {
			return time.Time{}, false
		}
		if !e.skip {
			return a, true
		}
		s, ok = e.r.Next(a.Add(-time.Second)) // the first slot at or after a
	}
	return time.Time{}, false
}
