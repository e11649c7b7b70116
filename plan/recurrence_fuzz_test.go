package plan

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/resque-go/resque-go/fixtures"
)

// fuzzZones are the zones a fuzzed recurrence is evaluated in: UTC, zones
// with one-hour DST changes on either hemisphere, a half-hour change (Lord
// Howe), a zone that skipped a whole day (Apia, 2011-12-30) and one with a
// quarter-hour offset.
var fuzzZones = []string{"UTC", "Europe/Prague", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia", "Asia/Kathmandu", "America/Santiago"}

func fuzzZone(t *testing.T, i uint8) *time.Location {
	loc, err := time.LoadLocation(fuzzZones[int(i)%len(fuzzZones)])
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// fuzzTime maps any int64 to Unix seconds between 1900 and 2200: v itself
// when it is in that range.
func fuzzTime(v int64) time.Time {
	const lo, span = -2208988800, 9467280000 // 1900-01-01, 300 years
	if v < lo || v >= lo+span {
		v = (v%span + span) % span
		v += lo
	}
	return time.Unix(v, 0).UTC()
}

// fuzzNexts is how many slots a fuzzed recurrence is walked, and
// fuzzBudget how long the walk may take (Next is called by the planner on
// every pass: a slow or endless one stalls every plan).
const (
	fuzzNexts  = 40
	fuzzBudget = 3 * time.Second
)

// checkNexts walks r from from: every slot is whole seconds, strictly
// after the time it was asked from, and the walk ends within the budget.
func checkNexts(t *testing.T, what string, r Recurrence, from time.Time) {
	t.Helper()
	type step struct {
		from, next time.Time
		ok         bool
	}
	steps := make(chan step, fuzzNexts)
	go func() {
		defer close(steps)
		at := from
		for range fuzzNexts {
			next, ok := r.Next(at)
			steps <- step{at, next, ok}
			if !ok {
				return
			}
			at = next
		}
	}()
	timeout := time.After(fuzzBudget)
	for {
		select {
		case s, more := <-steps:
			if !more {
				return
			}
			if !s.ok {
				if !s.next.IsZero() {
					t.Fatalf("%s: Next(%s) = %s, false", what, s.from, s.next)
				}
				return
			}
			if !s.next.After(s.from) {
				t.Fatalf("%s: Next(%s) = %s, not after it", what, s.from, s.next)
			}
			if s.next.Nanosecond() != 0 {
				t.Fatalf("%s: Next(%s) = %s, not a whole second", what, s.from, s.next)
			}
		case <-timeout:
			t.Fatalf("%s: %d slots from %s took more than %s", what, fuzzNexts, from, fuzzBudget)
		}
	}
}

// cronSeeds are the cron lines of the tests and the timings of the
// fixtures' dynamic schedules (resque-scheduler's persistent_schedules).
func cronSeeds() []string {
	seeds := []string{
		"0 3 * * *", "30 2 * * *", "*/30 * * * *", "0 0 31 * *", "0 12 29 2 *", "@daily", "0 9 * * MON-FRI",
		"0 0 30 2 *", "61 * * * *", "0 3 * *", "nope", "@every 5m", "TZ=UTC 0 3 * * *", "* * * * *",
		"0-59/7 0-23/5 1-31/3 1-12/2 0-6/4", "@yearly", "@monthly", "@weekly", "@hourly", "0 0 29 2 1",
		"*/1 * * * ?", "0 0 1,15 * SUN", "5-4 * * * *", "0/0 * * * *", "1-2/3-4 * * * *", "0 0 0 * *",
	}
	for _, sc := range fixtures.Scenarios("resque-scheduler-5.0.0") {
		d := fixtures.MustLoad("resque-scheduler-5.0.0", sc)
		for _, v := range d.Hash("resque:persistent_schedules") {
			var e struct{ Cron, Every string }
			if json.Unmarshal([]byte(v), &e) == nil {
				seeds = append(seeds, e.Cron, e.Every)
			}
		}
	}
	return seeds
}

func FuzzCron(f *testing.F) {
	for i, s := range cronSeeds() {
		f.Add(s, uint8(i), int64(1774612800)) // 2026-03-27
	}
	f.Fuzz(func(t *testing.T, spec string, zone uint8, from int64) {
		loc := fuzzZone(t, zone)
		c, err := ParseCron(spec, loc)
		if err != nil {
			if c != nil {
				t.Fatalf("ParseCron(%q) = %v with error %v", spec, c, err)
			}
			return
		}
		checkNexts(t, "cron "+spec+" in "+loc.String(), c, fuzzTime(from))
	})
}

func FuzzPeriodic(f *testing.F) {
	for i, s := range []string{
		"P0Y0M0DT0H5M0S", "PT5M", "P1M", "P1D", "P2W", "P1Y2M3DT4H5M6S", "PT90M", "P1DT12H", "PT1S",
		"P1000000Y", "P1000000M", "P1000000D", "PT1000000H", "P1000000Y1000000M1000000DT1000000H1000000M1000000S",
		"P1Y", "P0Y0M0DT0H0M1S", "P31D", "P1M1D",
	} {
		f.Add(s, uint8(i), int64(1769817600), int64(1769817600+int64(i)*86400*40)) // start 2026-01-31
	}
	// more than 292 years (a time.Duration) after the start: slots once
	// wrapped around to before it
	f.Add("PT1000000H", uint8(5), int64(-2208988800), int64(7258118399))
	f.Add("P1000000Y1000000M1000000DT1000000H1000000M1000000S", uint8(6), int64(-2208988800), int64(7258118399))
	f.Add("P1DT1S", uint8(1), int64(-2208988800), int64(7258118399))
	f.Fuzz(func(t *testing.T, s string, zone uint8, start, from int64) {
		per, err := ParsePeriod(s)
		if err != nil {
			return
		}
		p := Periodic{Start: fuzzTime(start), Period: per, Loc: fuzzZone(t, zone)}
		checkNexts(t, "period "+s+" in "+p.Loc.String()+" from "+p.Start.String(), p, fuzzTime(from))
	})
}
