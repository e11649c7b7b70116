package schedule

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"30s", 30 * time.Second}, {"5m", 5 * time.Minute}, {"1h", time.Hour}, {"1d", day}, {"1w", week},
		{"1M", month}, {"1y", year}, {"90", 90 * time.Second}, {"1h30m", 90 * time.Minute},
		{"1.5h", 90 * time.Minute}, {"2 days", 2 * day}, {"15mins", 15 * time.Minute}, {"1 hour and 10 minutes", 70 * time.Minute},
		{"1d, 2h", 26 * time.Hour}, {"10 sec", 10 * time.Second}, {"2H", 2 * time.Hour}, {"PT5M", 5 * time.Minute}, {"1h30", time.Hour + 30*time.Second},
		{"P1DT1H", 25 * time.Hour}, {"p1w", week}, {" 45s ", 45 * time.Second},
	} {
		got, err := ParseDuration(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "abc", "5x", "0s", "-5m", "0.5s", "5 Min", "90 5m", "P", "PT"} {
		if d, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, d)
		}
	}
}

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no zone data for %s: %v", name, err)
	}
	return loc
}

func TestCronZones(t *testing.T) {
	t.Parallel()
	prague := mustLoc(t, "Europe/Prague")
	from := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		expr string
		want time.Time
	}{
		{"0 3 * * * Europe/Prague", time.Date(2026, 7, 1, 3, 0, 0, 0, prague)},
		{"0 3 * * * UTC", time.Date(2026, 7, 1, 3, 0, 0, 0, time.UTC)},
		{"0 3 * * * +09:00", time.Date(2026, 7, 1, 3, 0, 0, 0, time.FixedZone("", 9*3600)).Add(24 * time.Hour)},
		{"30 0 3 * * * Europe/Prague", time.Date(2026, 7, 1, 3, 0, 30, 0, prague)},
		{"0 3 * * MON-FRI Europe/Prague", time.Date(2026, 7, 1, 3, 0, 0, 0, prague)}, // a Wednesday
		{"0 0 * * SUN", time.Date(2026, 7, 5, 0, 0, 0, 0, time.Local)},               // no zone: the local one
		{"0 0 * * SUN UTC", time.Date(2026, 7, 5, 0, 0, 0, 0, time.UTC)},
		{"CRON_TZ=Europe/Prague 0 3 * * *", time.Date(2026, 7, 1, 3, 0, 0, 0, prague)},
		{"@daily Europe/Prague", time.Date(2026, 7, 2, 0, 0, 0, 0, prague)},
	} {
		tm, err := parseCron(c.expr)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		if got := tm.next(from); !got.Equal(c.want) {
			t.Errorf("%q: next after %v = %v, want %v", c.expr, from, got, c.want)
		}
	}
	// DST in Prague: five fields follow the wall clock, as plans do: the
	// 02:30 that does not exist runs at 03:00 CEST, the repeated one once
	spring := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)
	fall := time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC)
	tm, err := parseCron("30 2 * * * Europe/Prague")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		from time.Time
		want []time.Time
	}{
		{spring, []time.Time{time.Date(2026, 3, 29, 3, 0, 0, 0, prague), time.Date(2026, 3, 30, 2, 30, 0, 0, prague)}},
		{fall, []time.Time{time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC), time.Date(2026, 10, 26, 2, 30, 0, 0, prague)}},
	} {
		s := c.from
		for _, want := range c.want {
			if s = tm.next(s); !s.Equal(want) {
				t.Errorf("02:30 Prague after %v: %v, want %v", c.from, s, want)
			}
		}
	}
	for _, c := range []struct{ expr, msg string }{
		{"0 3 * * * Mars/Olympus", "unknown time zone"},
		{"0 3 L * *", "not supported"},
		{"0 3 * * 1#2", "not supported"},
		{"@every 5m", "use every"},
		{"61 * * * *", "above maximum"},
		{"* * *", "expected"},
	} {
		if _, err := parseCron(c.expr); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: error %v, want one with %q", c.expr, err, c.msg)
		}
	}
}

func TestLatestSlot(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	every := &timing{every: 5 * time.Minute}
	cr, err := parseCron("*/5 * * * * UTC")
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range []*timing{every, cr} {
		for _, c := range []struct {
			now, floor time.Time
			want       time.Time
			ok         bool
		}{
			{base.Add(7 * time.Minute), base, base.Add(5 * time.Minute), true},
			{base.Add(5 * time.Minute), base.Add(5 * time.Minute), base.Add(5 * time.Minute), true},
			{base.Add(9 * time.Minute), base.Add(6 * time.Minute), time.Time{}, false},
			{base.Add(59 * time.Minute), base, base.Add(55 * time.Minute), true},
		} {
			got, ok := tm.latest(c.now, c.floor)
			if ok != c.ok || !got.Equal(c.want) {
				t.Errorf("cron=%v latest(%v, %v) = %v %v, want %v %v", tm.cron != nil, c.now, c.floor, got, ok, c.want, c.ok)
			}
		}
		if n := tm.next(base.Add(time.Second)); !n.Equal(base.Add(5 * time.Minute)) {
			t.Errorf("next = %v", n)
		}
	}
	// first_at anchors an interval's slots and bounds them; last_at ends them
	fa := base.Add(90 * time.Second)
	anchored := &timing{every: 10 * time.Minute, firstAt: fa, anchor: fa.Unix(), lastAt: base.Add(time.Hour)}
	if n := anchored.next(base); !n.Equal(fa) {
		t.Errorf("first_at: next = %v, want %v", n, fa)
	}
	if n := anchored.next(fa); !n.Equal(fa.Add(10 * time.Minute)) {
		t.Errorf("first_at: second slot %v", n)
	}
	if _, ok := anchored.latest(base.Add(80*time.Second), base); ok {
		t.Error("first_at: a slot before first_at")
	}
	if n := anchored.next(base.Add(59 * time.Minute)); !n.IsZero() {
		t.Errorf("last_at: next = %v, want none", n)
	}
}
