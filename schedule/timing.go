package schedule

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// cronParser reads rufus-scheduler's cron forms: five fields, or six with
// seconds first, and the @hourly/@daily/@weekly/@monthly/@yearly
// descriptors. robfig/cron has no L, W or # (fugit's last day and nth
// weekday); those are errors.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// offsetZone matches a UTC offset given as a cron expression's zone.
var offsetZone = regexp.MustCompile(`^([+-])(\d\d):?(\d\d)$`)

// timing is when an entry's slots fall: a cron schedule, or every
// interval from an anchor. Slots are whole seconds.
type timing struct {
	cron  cron.Schedule
	loc   *time.Location // the cron's own zone; nil: the scheduler's (Local)
	every time.Duration
	// anchor is the Unix second every slot of an interval falls on
	// (anchor + k*every): the Unix epoch, or first_at.
	anchor int64
	// first_in, first_at, last_in, last_at (rufus options)
	firstIn, lastIn time.Duration
	firstAt, lastAt time.Time
}

// parseCron reads a cron expression with an optional trailing time zone
// ("0 3 * * * Europe/Prague", as rufus-scheduler takes it).
func parseCron(s string) (*timing, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty cron expression")
	}
	var loc *time.Location
	if n := len(fields); n >= 2 && !strings.Contains(fields[0], "TZ=") {
		l, isZone, err := cronZone(fields[n-1])
		if err != nil {
			return nil, err
		}
		if isZone {
			loc, fields = l, fields[:n-1]
		}
	}
	if fields[0] == "@every" {
		return nil, fmt.Errorf("cron %q: use every: for intervals", s)
	}
	sched, err := cronParser.Parse(strings.Join(fields, " "))
	if err != nil {
		msg := err.Error()
		if strings.ContainsAny(s, "L#W") {
			msg += " (L, W and # are not supported)"
		}
		return nil, fmt.Errorf("cron %q: %s", s, msg)
	}
	if spec, ok := sched.(*cron.SpecSchedule); ok && loc != nil {
		spec.Location = loc
	} else if ok && spec.Location != time.Local {
		loc = spec.Location // given as CRON_TZ=
	}
	return &timing{cron: sched, loc: loc}, nil
}

// cronZone reports whether tok, the last word of a cron expression, is a
// time zone (an IANA name, UTC, or an offset such as +09:00) rather than
// a cron field, and loads it.
func cronZone(tok string) (*time.Location, bool, error) {
	if m := offsetZone.FindStringSubmatch(tok); m != nil {
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

// in is t in the zone the schedule's fields are read in.
func (tm *timing) in(t time.Time, def *time.Location) time.Time {
	if tm.loc != nil {
		return t.In(tm.loc)
	}
	if def == nil {
		def = time.Local
	}
	// robfig/cron reads a schedule without a zone in the zone of the time
	// it is given.
	return t.In(def)
}

// next returns the first slot strictly after t, or the zero time when there
// is none (past last_at, or a cron that never matches).
func (tm *timing) next(t time.Time, def *time.Location) time.Time {
	if !tm.firstAt.IsZero() && t.Before(tm.firstAt) {
		t = tm.firstAt.Add(-time.Nanosecond)
	}
	var s time.Time
	if tm.cron != nil {
		s = tm.cron.Next(tm.in(t, def))
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
func (tm *timing) latest(now, floor time.Time, def *time.Location) (time.Time, bool) {
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
	s := tm.next(floor.Add(-time.Nanosecond), def)
	if s.IsZero() || s.After(now) {
		return time.Time{}, false
	}
	// Walk to the last slot before now; the floor keeps this short (a
	// catch-up window), and the bound keeps a per-second cron over a long
	// window from looping forever.
	for range 1_000_000 {
		n := tm.next(s, def)
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
