package plan

import (
	"github.com/resque-go/resque-go/internal/protocol"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

func prague(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Prague")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// slots returns the slots of r after from, up to and including to.
func slots(r Recurrence, from, to time.Time) []string {
	var out []string
	for t := from; ; {
		next, ok := r.Next(t)
		if !ok || next.After(to) || len(out) > 1000 {
			return out
		}
		out = append(out, next.UTC().Format(time.RFC3339))
		t = next
	}
}

func period(t *testing.T, s string) Period {
	t.Helper()
	p, err := ParsePeriod(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPeriodicSlots(t *testing.T) {
	t.Parallel()
	utc, cet := time.UTC, prague(t)
	for _, tc := range []struct {
		name     string
		start    string
		period   string
		loc      *time.Location
		from, to string
		want     string // UTC slots, space separated
	}{
		{"every 5m", "2026-01-01T00:00:00Z", "PT5M", utc, "2026-01-01T00:07:00Z", "2026-01-01T00:20:00Z",
			"2026-01-01T00:10:00Z 2026-01-01T00:15:00Z 2026-01-01T00:20:00Z"},
		{"start after from is the first slot", "2026-01-01T00:00:00Z", "PT5M", utc, "2025-12-31T00:00:00Z", "2026-01-01T00:05:00Z",
			"2026-01-01T00:00:00Z 2026-01-01T00:05:00Z"},
		{"month end clamps, the anchor day comes back", "2026-01-31T09:00:00Z", "P1M", utc, "2026-01-31T09:00:00Z", "2026-06-01T00:00:00Z",
			"2026-02-28T09:00:00Z 2026-03-31T09:00:00Z 2026-04-30T09:00:00Z 2026-05-31T09:00:00Z"},
		{"month end in a leap year", "2028-01-31T09:00:00Z", "P1M", utc, "2028-01-31T09:00:00Z", "2028-03-31T09:00:00Z",
			"2028-02-29T09:00:00Z 2028-03-31T09:00:00Z"},
		{"the 30th", "2026-01-30T00:00:00Z", "P0Y1M0DT0H0M0S", utc, "2026-01-30T00:00:00Z", "2026-03-31T00:00:00Z",
			"2026-02-28T00:00:00Z 2026-03-30T00:00:00Z"},
		{"leap day yearly", "2024-02-29T12:00:00Z", "P1Y", utc, "2024-02-29T12:00:00Z", "2028-03-01T00:00:00Z",
			"2025-02-28T12:00:00Z 2026-02-28T12:00:00Z 2027-02-28T12:00:00Z 2028-02-29T12:00:00Z"},
		{"weeks", "2026-01-01T00:00:00Z", "P2W", utc, "2026-01-01T00:00:00Z", "2026-01-29T00:00:00Z",
			"2026-01-15T00:00:00Z 2026-01-29T00:00:00Z"},
		{"days and hours", "2026-01-01T00:00:00Z", "P1DT12H", utc, "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z",
			"2026-01-02T12:00:00Z 2026-01-04T00:00:00Z"},
		// Prague: CET (+01) until 2026-03-29 02:00, then CEST (+02); back to
		// CET on 2026-10-25 03:00 CEST.
		{"a day across spring forward keeps 02:30 local, 03:00 on the day it does not exist", "2026-03-27T01:30:00Z", "P1D", cet,
			"2026-03-27T01:30:00Z", "2026-03-31T00:00:00Z",
			"2026-03-28T01:30:00Z 2026-03-29T01:00:00Z 2026-03-30T00:30:00Z"},
		{"a day across fall back runs once on the repeated 02:30", "2026-10-23T00:30:00Z", "P1D", cet,
			"2026-10-23T00:30:00Z", "2026-10-27T00:00:00Z",
			"2026-10-24T00:30:00Z 2026-10-25T00:30:00Z 2026-10-26T01:30:00Z"},
		{"PT24H is elapsed time, not a calendar day", "2026-03-28T01:30:00Z", "PT24H", cet,
			"2026-03-28T01:30:00Z", "2026-03-30T02:00:00Z",
			"2026-03-29T01:30:00Z 2026-03-30T01:30:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := Periodic{Start: at(t, tc.start), Period: period(t, tc.period), Loc: tc.loc}
			got := strings.Join(slots(r, at(t, tc.from), at(t, tc.to)), " ")
			if got != tc.want {
				t.Errorf("slots\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestPeriodicNextFarFromStart(t *testing.T) {
	t.Parallel()
	r := Periodic{Start: at(t, "2000-01-31T00:00:00Z"), Period: period(t, "P1M"), Loc: time.UTC}
	if got, _ := r.Next(at(t, "2026-02-10T00:00:00Z")); !got.Equal(at(t, "2026-02-28T00:00:00Z")) {
		t.Errorf("next: %s", got)
	}
	e := Periodic{Start: at(t, "2000-01-01T00:00:00Z"), Period: period(t, "PT7S")}
	if got, _ := e.Next(at(t, "2026-01-01T00:00:00Z")); got.Sub(e.Start)%(7*time.Second) != 0 || got.Sub(at(t, "2026-01-01T00:00:00Z")) > 7*time.Second {
		t.Errorf("every 7s: %s", got)
	}
}

func TestCronSlots(t *testing.T) {
	t.Parallel()
	cet := prague(t)
	for _, tc := range []struct {
		spec     string
		loc      *time.Location
		from, to string
		want     string
	}{
		{"0 3 * * *", cet, "2026-03-27T12:00:00Z", "2026-03-30T12:00:00Z",
			"2026-03-28T02:00:00Z 2026-03-29T01:00:00Z 2026-03-30T01:00:00Z"},
		// 02:30 does not exist on Mar 29: it runs once, when the gap ends
		{"30 2 * * *", cet, "2026-03-27T12:00:00Z", "2026-03-30T12:00:00Z",
			"2026-03-28T01:30:00Z 2026-03-29T01:00:00Z 2026-03-30T00:30:00Z"},
		// 02:30 happens twice on Oct 25: it runs once, at the first
		{"30 2 * * *", cet, "2026-10-23T12:00:00Z", "2026-10-26T12:00:00Z",
			"2026-10-24T00:30:00Z 2026-10-25T00:30:00Z 2026-10-26T01:30:00Z"},
		// every 30 minutes goes on by elapsed time through both changes
		{"*/30 * * * *", cet, "2026-03-28T23:59:00Z", "2026-03-29T01:30:00Z",
			"2026-03-29T00:00:00Z 2026-03-29T00:30:00Z 2026-03-29T01:00:00Z 2026-03-29T01:30:00Z"},
		{"*/30 * * * *", cet, "2026-10-24T23:59:00Z", "2026-10-25T02:00:00Z",
			"2026-10-25T00:00:00Z 2026-10-25T00:30:00Z 2026-10-25T01:00:00Z 2026-10-25T01:30:00Z 2026-10-25T02:00:00Z"},
		{"0 0 31 * *", time.UTC, "2026-01-01T00:00:00Z", "2026-06-01T00:00:00Z",
			"2026-01-31T00:00:00Z 2026-03-31T00:00:00Z 2026-05-31T00:00:00Z"},
		{"0 12 29 2 *", time.UTC, "2026-03-01T00:00:00Z", "2029-01-01T00:00:00Z", "2028-02-29T12:00:00Z"},
		{"@daily", nil, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "2026-01-02T00:00:00Z"},
		{"0 9 * * MON-FRI", time.UTC, "2026-01-02T10:00:00Z", "2026-01-06T10:00:00Z",
			"2026-01-05T09:00:00Z 2026-01-06T09:00:00Z"},
	} {
		t.Run(tc.spec+" "+tc.from, func(t *testing.T) {
			t.Parallel()
			c, err := ParseCron(tc.spec, tc.loc)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(slots(c, at(t, tc.from), at(t, tc.to)), " ")
			if got != tc.want {
				t.Errorf("slots\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestRobfigDST pins what robfig/cron v3.0.1 does on its own in a zone
// with DST (walking real time): the reason Cron evaluates wall clocks.
func TestRobfigDST(t *testing.T) {
	t.Parallel()
	cet := prague(t)
	s, err := cron.ParseStandard("30 2 * * *")
	if err != nil {
		t.Fatal(err)
	}
	s.(*cron.SpecSchedule).Location = cet
	run := func(from, to string) string {
		var got []string
		for x := s.Next(at(t, from)); x.Before(at(t, to)); x = s.Next(x) {
			got = append(got, x.UTC().Format(time.RFC3339))
		}
		return strings.Join(got, " ")
	}
	if got := run("2026-03-28T12:00:00Z", "2026-03-30T12:00:00Z"); got != "2026-03-30T00:30:00Z" {
		t.Errorf("robfig on spring forward: %v (it skipped Mar 29 when this was written)", got)
	}
	if got := run("2026-10-24T12:00:00Z", "2026-10-25T12:00:00Z"); got != "2026-10-25T00:30:00Z 2026-10-25T01:30:00Z" {
		t.Errorf("robfig on fall back: %v (it ran twice on Oct 25 when this was written)", got)
	}
}

func TestParseCronRefuses(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"TZ=Europe/Prague 0 3 * * *", "CRON_TZ=UTC 0 3 * * *", "@every 5m", "61 * * * *", "0 3 * *", "nope"} {
		if _, err := ParseCron(spec, nil); err == nil {
			t.Errorf("%q: no error", spec)
		}
	}
	c, err := ParseCron("0 0 30 2 *", nil)
	if err != nil {
		t.Fatal(err)
	}
	if next, ok := c.Next(at(t, "2026-01-01T00:00:00Z")); ok {
		t.Errorf("Feb 30: next %s", next)
	}
}

// The misfire policies are the words resque-v3 writes in a plan.
func TestMisfireWords(t *testing.T) {
	for got, want := range map[Misfire]string{Coalesce: protocol.MisfireCoalesce, CatchUp: protocol.MisfireCatchUp, Skip: protocol.MisfireSkip} {
		if string(got) != want {
			t.Errorf("misfire %q, protocol writes %q", got, want)
		}
	}
}
