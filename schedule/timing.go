package schedule

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/resque-go/resque-go/plan"
)

// secondsParser reads rufus-scheduler's six-field cron (seconds first).
var secondsParser = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// offsetZone matches a UTC offset given as a cron expression's zone.
var offsetZone = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([+-])(\d\d):?(\d\d)$`) })

// nexter yields a cron's slots: the first one strictly after t.
type nexter interface {
	Next(t time.Time) (time.Time, bool)
}

// secondsCron is a six-field cron; robfig walks real time in its zone.
type secondsCron struct{ s *cron.SpecSchedule }

func (c secondsCron) Next(t time.Time) (time.Time, bool) {
	n := c.s.Next(t)
	return n, !n.IsZero()
}

// timing is when an entry's slots fall: a cron schedule, or every
// interval from an anchor. Slots are whole seconds.
type timing struct {
	cron  nexter
	every time.Duration
	// anchor is the Unix second every slot of an interval falls on
	// (anchor + k*every): the Unix epoch, or first_at.
	anchor int64
	// first_in, first_at, last_in, last_at (rufus options)
	firstIn, lastIn time.Duration
	firstAt, lastAt time.Time
}

// parseCron reads a cron expression with an optional trailing time zone
// ("0 3 * * * Europe/Prague", as rufus-scheduler takes it; also a leading
// CRON_TZ=zone); without a zone it is read in the local zone, as
// resque-scheduler reads it in the server's. Five fields (and the
// @hourly...@yearly descriptors) are evaluated on the zone's wall clock,
// as plans are (plan.ParseCron: a time skipped by a DST change runs at the
// end of the gap, a repeated one once); six fields (seconds first, for
// jobs more often than a minute) by robfig/cron directly.
func parseCron(s string) (*timing, error) {
	fields := strings.Fields(s)
	loc := time.Local
	if len(fields) > 0 {
		for _, p := range []string{"CRON_TZ=", "TZ="} {
			if name, ok := strings.CutPrefix(fields[0], p); ok {
				l, err := time.LoadLocation(name)
				if err != nil {
					return nil, fmt.Errorf("unknown time zone %q", name)
				}
				loc, fields = l, fields[1:]
				break
			}
		}
	}
	if n := len(fields); n >= 2 {
		l, isZone, err := cronZone(fields[n-1])
		if err != nil {
			return nil, err
		}
		if isZone {
			loc, fields = l, fields[:n-1]
		}
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty cron expression")
	}
	if fields[0] == "@every" {
		return nil, fmt.Errorf("cron %q: use every: for intervals", s)
	}
	var c nexter
	var err error
	if len(fields) == 6 {
		var sched cron.Schedule
		if sched, err = secondsParser.Parse(strings.Join(fields, " ")); err == nil {
			spec := sched.(*cron.SpecSchedule)
			spec.Location = loc
			c = secondsCron{spec}
		}
	} else {
		var pc *plan.Cron
		if pc, err = plan.ParseCron(strings.Join(fields, " "), loc); err == nil {
			c = pc
		}
	}
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), fmt.Sprintf("cron %q: ", strings.Join(fields, " ")))
		if strings.ContainsAny(s, "L#W") {
			msg += " (L, W and # are not supported)"
		}
		return nil, fmt.Errorf("cron %q: %s", s, msg)
	}
	return &timing{cron: c}, nil
}

// cronZone reports whether tok, the last word of a cron expression, is a
// time zone (an IANA name, UTC, or an offset such as +09:00) rather than
// a cron field, and loads it.
func cronZone(tok string) (*time.Location, bool, error) {
	if m := offsetZone().FindStringSubmatch(tok); m != nil {
		h, _ := strconv.Atoi(m[2])
		min, _ := strconv.Atoi(m[3])
		off := (h*60 + min) * 60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(tok, off), true, nil
	}
	if strings.ContainsAny(tok, "*?,") || !strings.ContainsAny(strings.ToLower(tok), "abcdefghijklmnopqrstuvwxyz") {
		return nil, false, nil
	}
	loc, err := time.LoadLocation(tok)
	if err == nil && tok != "Local" {
		return loc, true, nil
	}
	if strings.Contains(tok, "/") {
		return nil, false, fmt.Errorf("unknown time zone %q", tok)
	}
	return nil, false, nil // a month or weekday name
}

// next returns the first slot strictly after t, or the zero time when there
// is none (past last_at, or a cron that never matches).
func (tm *timing) next(t time.Time) time.Time {
	if !tm.firstAt.IsZero() && t.Before(tm.firstAt) {
		t = tm.firstAt.Add(-time.Nanosecond)
	}
	var s time.Time
	if tm.cron != nil {
		s, _ = tm.cron.Next(t)
	} else {
		d := int64(tm.every / time.Second)
		k := floorDiv(t.Unix()-tm.anchor, d) + 1
		s = time.Unix(tm.anchor+k*d, 0)
	}
	if s.IsZero() || !tm.lastAt.IsZero() && s.After(tm.lastAt) {
		return time.Time{}
	}
	return s
}

// latest returns the latest slot s with floor <= s <= now.
func (tm *timing) latest(now, floor time.Time) (time.Time, bool) {
	if !tm.firstAt.IsZero() && floor.Before(tm.firstAt) {
		floor = tm.firstAt
	}
	if !tm.lastAt.IsZero() && now.After(tm.lastAt) {
		now = tm.lastAt
	}
	if now.Before(floor) {
		return time.Time{}, false
	}
	if tm.cron == nil {
		d := int64(tm.every / time.Second)
		s := time.Unix(tm.anchor+floorDiv(now.Unix()-tm.anchor, d)*d, 0)
		if s.Before(floor) {
			return time.Time{}, false
		}
		return s, true
	}
	s := tm.next(floor.Add(-time.Nanosecond))
	if s.IsZero() || s.After(now) {
		return time.Time{}, false
	}
	// Walk to the last slot before now; the floor keeps this short (a
	// catch-up window), and the bound keeps a per-second cron over a long
	// window from looping forever.
	for range 1_000_000 {
		n := tm.next(s)
		if n.IsZero() || n.After(now) {
			break
		}
		s = n
	}
	return s, true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
