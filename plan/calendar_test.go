package plan

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func TestCalendarExcluded(t *testing.T) {
	prague, _ := time.LoadLocation("Europe/Prague")
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04:05", s, prague)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cal := Calendar{Name: "cz", Timezone: "Europe/Prague",
		Dates: []string{"2026-12-25", "2027-03-28", "2026-10-25"}, Cron: []string{"* * * * 0", "* 0-6 1 1 *"}}
	x, err := cal.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Time
		want bool
	}{
		{at("2026-12-24 23:59:59"), false},
		{at("2026-12-25 00:00:00"), true},
		{at("2026-12-25 23:59:59"), true},
		{at("2026-12-26 00:00:00"), false}, // a Saturday
		{at("2026-12-27 12:00:00"), true},  // Sunday
		{at("2027-01-01 06:59:59"), true},  // 1 Jan 00:00-06:59
		{at("2027-01-01 07:00:00"), false},
		{at("2027-03-29 00:00:00"), false},
		// the DST days: 23 and 25 hours long, excluded whole
		{time.Date(2027, 3, 28, 1, 30, 0, 0, time.UTC), true},   // 03:30 CEST
		{time.Date(2027, 3, 27, 22, 59, 0, 0, time.UTC), false}, // 23:59 CET on Saturday 27th
		{time.Date(2027, 3, 27, 23, 0, 0, 0, time.UTC), true},   // 00:00 CET on Sunday 28th
		{time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC), true},  // 02:30 CEST, first pass
		{time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC), true},  // 02:30 CET, second pass
		{time.Date(2026, 10, 25, 22, 59, 59, 0, time.UTC), true},
	} {
		if got := x.Excluded(c.at); got != c.want {
			t.Errorf("Excluded(%s) = %v, want %v", c.at.In(prague), got, c.want)
		}
	}
}

func TestCalendarAllowed(t *testing.T) {
	prague, _ := time.LoadLocation("Europe/Prague")
	x, err := Calendar{Name: "c", Timezone: "Europe/Prague", Dates: []string{"2026-12-25"}, Cron: []string{"* 0-7 * * *"}}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, want time.Time }{
		{time.Date(2026, 12, 25, 9, 0, 0, 0, prague), time.Date(2026, 12, 26, 8, 0, 0, 0, prague)},
		{time.Date(2026, 12, 24, 9, 0, 0, 0, prague), time.Date(2026, 12, 24, 9, 0, 0, 0, prague)},
		{time.Date(2026, 12, 24, 3, 0, 0, 0, prague), time.Date(2026, 12, 24, 8, 0, 0, 0, prague)},
		// across spring forward: 02:00-02:59 does not exist, 08:00 CEST
		{time.Date(2027, 3, 28, 1, 0, 0, 0, prague), time.Date(2027, 3, 28, 8, 0, 0, 0, prague)},
	} {
		got, ok := x.Allowed(c.from)
		if !ok || !got.Equal(c.want) {
			t.Errorf("Allowed(%s) = %s %v, want %s", c.from, got, ok, c.want)
		}
	}
	all, _ := Calendar{Name: "all", Cron: []string{"* * * * *"}}.Compile()
	if _, ok := all.Allowed(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Error("a calendar excluding every minute allowed an instant")
	}
}

func TestCalendarValidate(t *testing.T) {
	for _, c := range []Calendar{
		{Name: "", Dates: []string{"2026-12-25"}},
		{Name: "a b", Dates: []string{"2026-12-25"}},
		{Name: "x"},
		{Name: "x", Dates: []string{"2026-13-01"}},
		{Name: "x", Dates: []string{"25.12.2026"}},
		{Name: "x", Cron: []string{"* * *"}},
		{Name: "x", Dates: []string{"2026-12-25"}, Timezone: "Mars/Olympus"},
	} {
		if err := c.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalid", c, err)
		}
	}
	if err := (Calendar{Name: "ok", Dates: []string{"2026-12-25"}, Cron: []string{"* * * * 0,6"}, Timezone: "Europe/Prague"}).Validate(); err != nil {
		t.Error(err)
	}
}

// TestExcludeYear walks a year of two Europe/Prague plans with 25 Dec and
// 1 Jan excluded: a daily 09:00 cron (skip: the holidays are dropped) and
// a daily 02:30 cron (kept at 02:30 local across both DST changes; 03:00
// on the spring-forward day). With coalesce the holiday slot is moved to
// the next day's 00:00.
func TestExcludeYear(t *testing.T) {
	prague, _ := time.LoadLocation("Europe/Prague")
	x, err := Calendar{Name: "h", Timezone: "Europe/Prague", Dates: []string{"2026-12-25", "2027-01-01"}}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	nine, _ := ParseCron("0 9 * * *", prague)
	early, _ := ParseCron("30 2 * * *", prague)
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, prague)
	end := start.AddDate(1, 0, 0)
	walk := func(r Recurrence) []time.Time {
		var out []time.Time
		for t0 := start; ; {
			n, ok := r.Next(t0)
			if !ok || !n.Before(end) {
				return out
			}
			out = append(out, n)
			t0 = n
		}
	}
	days := int(end.Sub(start).Hours()/24 + 0.5)
	got := walk(Exclude(nine, x, Skip))
	if len(got) != days-2 {
		t.Fatalf("09:00 skip: %d slots, want %d", len(got), days-2)
	}
	for _, s := range got {
		w := s.In(prague)
		if w.Hour() != 9 || w.Minute() != 0 || x.Excluded(s) {
			t.Fatalf("09:00 skip: slot %s", w)
		}
	}
	got = walk(Exclude(early, x, Skip))
	if len(got) != days-2 {
		t.Fatalf("02:30 skip: %d slots, want %d", len(got), days-2)
	}
	for _, s := range got {
		w := s.In(prague)
		spring := w.Month() == time.March && w.Day() == 28
		if spring && (w.Hour() != 3 || w.Minute() != 0) || !spring && (w.Hour() != 2 || w.Minute() != 30) {
			t.Fatalf("02:30 skip: slot %s", w)
		}
	}
	got = walk(Exclude(nine, x, Coalesce))
	if len(got) != days {
		t.Fatalf("09:00 coalesce: %d slots, want %d", len(got), days)
	}
	moved := 0
	for _, s := range got {
		if w := s.In(prague); w.Hour() == 0 {
			moved++
			if d := w.Day(); !(w.Month() == 12 && d == 26 || w.Month() == 1 && d == 2) {
				t.Errorf("coalesce: moved to %s", w)
			}
		}
	}
	if moved != 2 {
		t.Errorf("coalesce: %d slots moved, want 2", moved)
	}
}

// A calendar that excludes every slot of a plan leaves it no next slot
// under Skip, and moves the slot past the exclusion under Coalesce.
func TestExcludeEverySlot(t *testing.T) {
	t.Parallel()
	x, _ := Calendar{Name: "nights", Cron: []string{"* 0-7 * * *"}}.Compile()
	c, _ := ParseCron("30 2 * * *", nil)
	from := time.Date(2026, 7, 10, 10, 0, 0, 0, time.UTC)
	if n, ok := Exclude(c, x, Skip).Next(from); ok {
		t.Errorf("skip: Next = %s, want none", n)
	}
	if n, ok := Exclude(c, x, Coalesce).Next(from); !ok || !n.Equal(time.Date(2026, 7, 11, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("coalesce: Next = %s %v, want 08:00 the next day", n, ok)
	}
}

// Exclude never returns an excluded instant nor one at or before t, for
// random starts over several zones, calendars and policies.
func TestExcludeNeverExcluded(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tz := range []string{"UTC", "Europe/Prague", "America/New_York", "Australia/Lord_Howe"} {
		loc, err := LoadLocation(tz)
		if err != nil {
			t.Fatal(err)
		}
		cals := []Calendar{
			{Name: "a", Timezone: tz, Dates: []string{"2026-03-29", "2026-11-01", "2026-12-25"}},
			{Name: "b", Timezone: tz, Cron: []string{"* * * * 0,6", "* 0-1 * * *"}},
			{Name: "c", Timezone: "Europe/Prague", Cron: []string{"50-59 * * * *"}, Dates: []string{"2026-10-25"}},
		}
		recs := []string{"30 2 * * *", "*/20 * * * *", "0 9 * * 1-5", "15 * * * *"}
		for _, cal := range cals {
			x, err := cal.Compile()
			if err != nil {
				t.Fatal(err)
			}
			for _, spec := range recs {
				c, err := ParseCron(spec, loc)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range []Misfire{Skip, Coalesce} {
					r := Exclude(c, x, m)
					from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(365*24*3600)) * time.Second)
					for range 50 {
						n, ok := r.Next(from)
						if !ok || !n.After(from) || x.Excluded(n) {
							t.Fatalf("%s %s %q %s: Next(%s) = %s %v (excluded %v)", tz, cal.Name, spec, m, from, n, ok, x.Excluded(n))
						}
						from = n
					}
				}
			}
		}
	}
}
