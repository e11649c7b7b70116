package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Recurrence yields a plan's slots.
type Recurrence interface {
	// Next returns the first slot strictly after t (whole seconds), or
	// false when there is none.
	Next(t time.Time) (time.Time, bool)
}

// dstMargin bounds how far a wall clock moves at a zone transition (one
// hour almost everywhere, two at most).
const dstMargin = 3 * time.Hour

// Periodic is an every/period recurrence: slot n is the start plus n times
// the period. The date part (years, months, days) follows the calendar in
// Loc: a day is a calendar day (23 or 25 hours across a DST change), and a
// month that lacks the start's day of month takes its last day, while
// later months go back to the start's day (Jan 31 + P1M is Feb 28, or 29
// in a leap year; + P2M is Mar 31). The time part (hours, minutes,
// seconds) is elapsed time. A date-part slot whose wall-clock time does
// not exist (skipped by a DST change) is the first instant after the gap;
// one that exists twice (repeated hour) is the first of the two.
type Periodic struct {
	Start  time.Time
	Period Period
	Loc    *time.Location
}

// Period is an ISO 8601 period: a date part (years, months, days) that
// follows the calendar and a time part (hours, minutes, seconds) that is
// elapsed time.
type Period struct {
	Years, Months, Days, Hours, Minutes, Seconds int
}

// ParsePeriod reads an ISO 8601 duration: the long form resque-v3 writes
// (P0Y0M0DT0H5M0S) or any short one (P1M, PT5M, P1D, P2W, P1DT12H). A
// period of zero length is an error.
func ParsePeriod(s string) (Period, error) {
	p, err := protocol.ParsePeriod(s)
	return Period(p), err
}

// String is the form resque-v3 writes (P0Y0M0DT0H5M0S).
func (p Period) String() string { return protocol.Period(p).String() }

// Calendar reports whether the period has a date part (years, months or
// days), which follows the calendar rather than elapsed time.
func (p Period) Calendar() bool { return protocol.Period(p).Calendar() }

// Clock is the period's time part as elapsed time.
func (p Period) Clock() time.Duration { return protocol.Period(p).Clock() }

// Slot returns slot n (n >= 0).
func (p Periodic) Slot(n int64) time.Time {
	at := p.Start.Truncate(time.Second)
	if p.Period.Calendar() {
		loc := p.location()
		w := at.In(loc)
		wall := addMonthsClamped(naive(w), int(n)*(p.Period.Years*12+p.Period.Months)).
			AddDate(0, 0, int(n)*p.Period.Days)
		at = instants(wall, loc)[0]
	}
	return addSeconds(at, n*p.clockSeconds())
}

// clockSeconds is the period's time part in seconds. Slots are counted in
// seconds, not in time.Duration, which overflows 292 years from the start.
func (p Periodic) clockSeconds() int64 {
	c := p.Period
	return int64(c.Hours)*3600 + int64(c.Minutes)*60 + int64(c.Seconds)
}

// addSeconds is t plus s seconds, in t's location (t is a whole second).
func addSeconds(t time.Time, s int64) time.Time { return time.Unix(t.Unix()+s, 0).In(t.Location()) }

func (p Periodic) location() *time.Location {
	if p.Loc == nil {
		return time.UTC
	}
	return p.Loc
}

// Next returns the first slot strictly after t.
func (p Periodic) Next(t time.Time) (time.Time, bool) {
	start := p.Start.Truncate(time.Second)
	if start.After(t) {
		return start, true
	}
	step := p.clockSeconds()
	if !p.Period.Calendar() {
		n := (t.Unix()-start.Unix())/step + 1
		return addSeconds(start, n*step), true
	}
	// estimate n from the period's mean length (seconds: 8766 h a year,
	// 730 h a month), then walk: slots grow with n
	approx := int64(p.Period.Years)*31557600 + int64(p.Period.Months)*2628000 + int64(p.Period.Days)*86400 + step
	n := (t.Unix()-start.Unix())/approx - 2
	if n < 0 {
		n = 0
	}
	for !p.Slot(n).After(t) {
		n++
	}
	for n > 0 && p.Slot(n-1).After(t) {
		n--
	}
	return p.Slot(n), true
}

// addMonthsClamped adds months to a wall-clock time, keeping its day of
// month where the target month has it and taking the month's last day
// where it does not.
func addMonthsClamped(w time.Time, months int) time.Time {
	y, m, d := w.Date()
	first := time.Date(y, m+time.Month(months), 1, w.Hour(), w.Minute(), w.Second(), 0, time.UTC)
	if last := first.AddDate(0, 1, -1).Day(); d > last {
		d = last
	}
	return first.AddDate(0, 0, d-1)
}

// naive is t's wall clock in its own location, as the same fields in UTC:
// a time with no zone rules, for calendar arithmetic.
func naive(t time.Time) time.Time {
	y, m, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, m, d, h, mi, s, 0, time.UTC)
}

// instants returns the instants whose wall clock in loc is wall (a naive
// time), earliest first: one usually, two in a repeated hour, and for a
// wall clock skipped by a DST change the first instant after the gap.
func instants(wall time.Time, loc *time.Location) []time.Time {
	var out []time.Time
	for _, probe := range []time.Duration{-36 * time.Hour, 0, 36 * time.Hour} {
		_, off := wall.Add(probe).In(loc).Zone()
		c := wall.Add(-time.Duration(off) * time.Second).In(loc)
		if naive(c).Equal(wall) && !contains(out, c) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		// a gap: with the offset from before it, the wall clock lands
		// after the change; the zone that starts there is the gap's end
		_, off := wall.Add(-36 * time.Hour).In(loc).Zone()
		start, _ := wall.Add(-time.Duration(off) * time.Second).In(loc).ZoneBounds()
		return []time.Time{start}
	}
	if len(out) == 2 && out[1].Before(out[0]) {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

func contains(ts []time.Time, t time.Time) bool {
	for _, x := range ts {
		if x.Equal(t) {
			return true
		}
	}
	return false
}

// Cron is a 5-field cron recurrence evaluated on the wall clock of Loc,
// parsed by github.com/robfig/cron/v3. robfig walks real time, which in a
// zone with DST skips a daily 02:30 job on the spring-forward day and runs
// it twice on the fall-back day; Cron instead matches the wall clock and
// maps each match to an instant: a time skipped by the change runs at the
// first instant after the gap (03:00 in Europe/Prague), a time that occurs
// twice runs once, at the first occurrence, unless the hour field is "*"
// (hourly or more often: such a cron runs by elapsed time, in both passes
// of the repeated hour, as cronie does).
type Cron struct {
	Spec     string
	Loc      *time.Location
	schedule *cron.SpecSchedule
	everyHr  bool
}

// ParseCron parses a standard 5-field cron line (minute hour day-of-month
// month day-of-week, names and @daily-style descriptors allowed) for zone
// loc (nil: UTC). @every and TZ= prefixes are refused: use an every plan
// and the time zone setting.
func ParseCron(spec string, loc *time.Location) (*Cron, error) {
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return nil, fmt.Errorf("cron %q: give the time zone separately, not as TZ=", spec)
	}
	if strings.HasPrefix(spec, "@every") {
		return nil, fmt.Errorf("cron %q: use an every interval instead of @every", spec)
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("cron %q: %w", spec, err)
	}
	ss, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("cron %q: not a calendar schedule", spec)
	}
	ss.Location = time.UTC // it is evaluated on naive wall-clock times
	if loc == nil {
		loc = time.UTC
	}
	const allHours = 1<<24 - 1
	return &Cron{Spec: spec, Loc: loc, schedule: ss, everyHr: ss.Hour&allHours == allHours}, nil
}

// Next returns the first slot strictly after t.
func (c *Cron) Next(t time.Time) (time.Time, bool) {
	t = t.Truncate(time.Second)
	from := naive(t.In(c.Loc))
	if nearChange(t, c.Loc) {
		// a wall clock before t's may map to an instant after it
		from = from.Add(-dstMargin)
	}
	var best, bestWall time.Time
	wall := c.schedule.Next(from.Add(-time.Second))
	for i := 0; i < 100_000 && !wall.IsZero(); i++ {
		if !best.IsZero() && (wall.Sub(bestWall) > dstMargin || !nearChange(best, c.Loc)) {
			// a later wall clock maps to an earlier instant only
			// across a change within dstMargin of it
			break
		}
		cands := instants(wall, c.Loc)
		if !c.everyHr {
			cands = cands[:1]
		}
		for _, at := range cands {
			if at.After(t) && (best.IsZero() || at.Before(best)) {
				best, bestWall = at, wall
			}
		}
		wall = c.schedule.Next(wall)
	}
	return best, !best.IsZero()
}

// nearChange reports whether loc's offset changes within dstMargin of t.
func nearChange(t time.Time, loc *time.Location) bool {
	_, before := t.Add(-dstMargin).In(loc).Zone()
	_, after := t.Add(dstMargin).In(loc).Zone()
	return before != after
}
