package schedule_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/schedule"
)

// durationSeeds are the durations of the tests and of rufus-scheduler's
// documentation.
var durationSeeds = []string{
	"30s", "5m", "1h", "1d", "1w", "1M", "1y", "90", "1h30m", "1.5h", "2 days", "15mins", "1 hour and 10 minutes",
	"1d, 2h", "10 sec", "2H", "PT5M", "1h30", "", "abc", "5x", "0s", "-5m", "0.5s", "5 Min", "90 5m", "P", "PT",
	"P1Y2M3W4DT5H6M7S", "P0.5D", "PT-1S", "1e3", "9223372036s", "9223372037s", "300y", "+5m -1m", "and", "5m and",
	"1.", ".5m", "P1DT", "PTT1S", "99999999999999999999999999999999999y",
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range durationSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := schedule.ParseDuration(s)
		if err != nil {
			if d != 0 {
				t.Fatalf("ParseDuration(%q) = %s with error %v", s, d, err)
			}
			return
		}
		if d <= 0 || d%time.Second != 0 {
			t.Fatalf("ParseDuration(%q) = %s: want a positive whole number of seconds", s, d)
		}
		// the bare number of seconds, its "s" form and ISO 8601 read the same
		secs := strconv.FormatInt(int64(d/time.Second), 10)
		for _, again := range []string{secs, secs + "s", "PT" + secs + "S"} {
			if d2, err := schedule.ParseDuration(again); err != nil || d2 != d {
				t.Fatalf("ParseDuration(%q) = %s, but ParseDuration(%q) = %s, %v", s, d, again, d2, err)
			}
		}
	})
}

// nexts is how many slots a fuzzed entry is walked, budget how long that
// may take: the scheduler asks every entry for its next slot on each pass.
const (
	nexts  = 40
	budget = 3 * time.Second
)

// fuzzFrom maps any int64 to Unix seconds between 1900 and 2200.
func fuzzFrom(v int64) time.Time {
	const lo, span = -2208988800, 9467280000
	if v < lo || v >= lo+span {
		v = (v%span+span)%span + lo
	}
	return time.Unix(v, 0)
}

// checkEntry walks e's slots from from: each strictly after the last,
// whole seconds, all of them within the budget.
func checkEntry(t *testing.T, e schedule.Entry, from time.Time) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		at := from
		for range nexts {
			next := e.Next(at)
			if next.IsZero() {
				break
			}
			if !next.After(at) || next.Nanosecond() != 0 {
				done <- fmt.Errorf("%s: Next(%s) = %s", e.When(), at, next)
				return
			}
			at = next
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(budget):
		t.Fatalf("%s: %d slots from %s took more than %s", e.When(), nexts, from, budget)
	}
}

// entrySeeds are the dynamic schedules of the fixtures (what Ruby's
// Resque.set_schedule stored) and hand-written configs.
func entrySeeds(f *testing.F) []string {
	var seeds []string
	for _, sc := range fixtures.Scenarios("resque-scheduler-5.0.0") {
		for _, v := range fixtures.MustLoad("resque-scheduler-5.0.0", sc).Hash("resque:persistent_schedules") {
			seeds = append(seeds, v)
		}
	}
	if len(seeds) == 0 {
		f.Fatal("no persistent_schedules in the fixtures")
	}
	return append(seeds,
		`{"class":"SendEmail","args":"POC email subject","every":["1h",{"first_in":300}],"queue":"mail"}`,
		`{"class":"C","queue":"q","cron":"0 3 * * * Europe/Prague"}`,
		`{"class":"C","queue":"q","cron":"CRON_TZ=America/New_York 30 2 * * *"}`,
		`{"class":"C","queue":"q","cron":"*/10 * * * * * +09:00"}`,
		`{"class":"C","queue":"q","cron":"0 0 30 2 *"}`,
		`{"class":"C","queue":"q","every":["1m",{"first_at":"2030-01-02 03:04:05 +0100","last_at":"2030-01-02 04:00:00 +0100"}]}`,
		`{"class":"C","queue":"q","every":["9223372036s",{"first_in":"1y"}]}`,
		`{"class":"C","queue":"q","every":["1s",{"last_in":"1s"}]}`,
		`{"class":"C","queue":"q","cron":["* * * * * *",{"first_at":"1900-01-01T00:00:00Z"}]}`,
		`{"class":"C","queue":"q","every":[]}`,
		`{"class":"C","queue":"q","cron":""}`,
		`{"class":"C","queue":"q","every":"5m","rails_env":"production, staging"}`,
		`{"class":1}`, `[]`, `null`, `{`,
	)
}

func FuzzScheduleEntry(f *testing.F) {
	for i, s := range entrySeeds(f) {
		f.Add(s, int64(1774612800+i*3607)) // 2026-03-27 onwards
	}
	f.Fuzz(func(t *testing.T, config string, from int64) {
		e, err := schedule.ParseJSON("fuzz", []byte(config))
		if err != nil {
			return
		}
		if e.Manual() {
			if !e.Next(fuzzFrom(from)).IsZero() {
				t.Fatalf("manual entry %q has a next slot", config)
			}
			return
		}
		if e.Class == "" || e.Queue == "" {
			t.Fatalf("entry %q accepted without class or queue: %+v", config, e)
		}
		if _, err := e.Payload(); err != nil {
			t.Fatalf("entry %q: no payload: %v", config, err)
		}
		checkEntry(t, e, fuzzFrom(from))
	})
}

// FuzzScheduleFile reads whole schedule files (YAML).
func FuzzScheduleFile(f *testing.F) {
	for _, p := range []string{"testdata/resque_schedule.yml", "testdata/bad_schedule.yml", "../examples/resque_schedule.yml"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, int64(1774612800))
	}
	for _, s := range []string{
		"a: &a {every: 1s, queue: q, args: [*a]}",
		"a: &x [1, 2]\nb: {every: 1m, queue: q, args: [*x, *x, *x]}",
		"a: {every: [5m, {first_in: 1m}], queue: q}\nb: {cron: '0 3 * * * Europe/Prague', queue: q}",
		"a: b", "- 1", "", "a: {<<: {every: 1s}, queue: q}",
		"x: &a {every: 1m, queue: q, <<: *a}",
	} {
		f.Add([]byte(s), int64(1774612800))
	}
	f.Fuzz(func(t *testing.T, data []byte, from int64) {
		entries, err := schedule.Parse(data)
		if err != nil {
			return
		}
		for _, e := range entries {
			if !e.Manual() {
				checkEntry(t, e, fuzzFrom(from))
			}
		}
	})
}

// A mapping that merges itself once overflowed the stack (a crash of every
// command reading the file), and aliases that multiply expanded without
// bound; both are bad entries now (found by FuzzScheduleFile).
func TestParseRefusesAliasLoopsAndBombs(t *testing.T) {
	t.Parallel()
	bomb := "a0: &a0 [1,1,1,1,1,1,1,1,1,1]\n"
	merges := "m0: &m0 {k: 1}\n"
	for i := 1; i < 10; i++ {
		bomb += fmt.Sprintf("a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
		merges += fmt.Sprintf("m%d: &m%d {<<: [*m%d,*m%d,*m%d,*m%d,*m%d,*m%d,*m%d,*m%d,*m%d,*m%d]}\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	for name, file := range map[string]string{
		"merges itself":        "x: &a {every: 1m, queue: q, <<: *a}\n",
		"merges itself deeper": "x: &a {every: 1m, queue: q, args: [{<<: *a}]}\n",
		"billion laughs":       bomb + "x: {every: 1m, queue: q, args: *a9}\n",
		"merge bomb":           merges + "x: {every: 1m, queue: q, <<: *m9}\n",
	} {
		entries, err := schedule.Parse([]byte(file))
		for _, e := range entries {
			if e.Name == "x" {
				t.Errorf("%s: entry x accepted", name)
			}
		}
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
