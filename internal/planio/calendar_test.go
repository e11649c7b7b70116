package planio_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/plan"
)

// runUntil moves the clock to each due slot in turn up to end, passing
// the planner at each.
func (e *env) runUntil(p *planio.Planner, end time.Time) {
	e.t.Helper()
	k := e.c.Keys()
	for range 100_000 {
		v := e.strs("ZRANGE", k.PlanSchedule(), 0, 0)
		if len(v) == 0 {
			return
		}
		var ts int64
		fmt.Sscan(v[0], &ts)
		if ts > end.Unix() {
			return
		}
		e.clock.set(time.Unix(ts, 0))
		e.pass(p)
	}
	e.t.Fatal("the schedule did not reach the end")
}

// A year of a test clock with two Europe/Prague plans on a calendar that
// excludes 25 Dec and 1 Jan: the daily 09:00 and 02:30 plans (misfire
// skip) push one job a day except on the holidays, at 09:00 and 02:30
// local across both DST changes (03:00 on the spring-forward day). A
// coalescing plan on the same calendar fires its holiday slots at the
// next day's 00:00 instead.
func TestPlannerCalendarYear(t *testing.T) {
	t.Parallel()
	prague, _ := time.LoadLocation("Europe/Prague")
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, prague)
	end := start.AddDate(1, 0, 0).Add(-time.Second)
	e := newEnv(t, start)
	ctx := context.Background()
	cal := plan.Calendar{Name: "holidays", Timezone: "Europe/Prague", Dates: []string{"2026-12-25", "2027-01-01"}}
	if err := planio.AddCalendar(ctx, e.c, cal, false); err != nil {
		t.Fatal(err)
	}
	if err := planio.AddCalendar(ctx, e.c, cal, false); !errors.Is(err, plan.ErrCalendarExists) {
		t.Fatalf("second add: %v, want ErrCalendarExists", err)
	}
	e.add(plan.Plan{ID: "nine", Queue: "nine", Class: "C", Cron: "0 9 * * *", Timezone: "Europe/Prague", Misfire: plan.Skip, Calendar: "holidays"})
	e.add(plan.Plan{ID: "early", Queue: "early", Class: "C", Cron: "30 2 * * *", Timezone: "Europe/Prague", Misfire: plan.Skip, Calendar: "holidays"})
	e.add(plan.Plan{ID: "moved", Queue: "moved", Class: "C", Period: "P1D", Start: time.Date(2026, 6, 1, 9, 0, 0, 0, prague),
		Timezone: "Europe/Prague", Calendar: "holidays"})
	if _, err := planio.AddAt(ctx, e.c, plan.Plan{Queue: "q", Class: "C", Every: time.Hour, Calendar: "nope"}, start); !errors.Is(err, plan.ErrInvalid) {
		t.Fatalf("plan on a missing calendar: %v, want ErrInvalid", err)
	}
	e.runUntil(e.planner(), end)
	holiday := func(w time.Time) bool {
		return w.Month() == 12 && w.Day() == 25 || w.Month() == 1 && w.Day() == 1
	}
	for _, q := range []string{"nine", "early"} {
		jobs := e.jobs(q)
		if len(jobs) != 363 {
			t.Errorf("%s: %d jobs, want 363", q, len(jobs))
		}
		for _, j := range jobs {
			w := time.Unix(int64(j.QueueTime), 0).In(prague)
			spring := w.Month() == 3 && w.Day() == 28
			want := map[bool][2]int{true: {9, 0}, false: {2, 30}}[q == "nine"]
			if q == "early" && spring {
				want = [2]int{3, 0}
			}
			if holiday(w) || w.Hour() != want[0] || w.Minute() != want[1] {
				t.Fatalf("%s: a job at %s", q, w)
			}
		}
	}
	moved := 0
	for _, j := range e.jobs("moved") {
		w := time.Unix(int64(j.QueueTime), 0).In(prague)
		if holiday(w) {
			t.Fatalf("moved: a job at %s", w)
		}
		if w.Hour() == 0 {
			moved++
		}
	}
	if n := len(e.jobs("moved")); n != 365 || moved != 2 {
		t.Errorf("moved: %d jobs, %d of them at 00:00; want 365 and 2", n, moved)
	}
}

// A calendar replaced after a plan was filed excludes the slot it is
// filed in: skip drops it, coalesce files it at the first allowed instant.
func TestPlannerCalendarChangedLater(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 24, 12, 0, 0, 0, time.UTC)
	e := newEnv(t, start)
	ctx := context.Background()
	if err := planio.AddCalendar(ctx, e.c, plan.Calendar{Name: "c", Dates: []string{"2030-01-01"}}, false); err != nil {
		t.Fatal(err)
	}
	e.add(plan.Plan{ID: "s", Queue: "s", Class: "C", Cron: "0 9 * * *", Misfire: plan.Skip, Calendar: "c"})
	e.add(plan.Plan{ID: "m", Queue: "m", Class: "C", Cron: "0 9 * * *", Calendar: "c"})
	if err := planio.AddCalendar(ctx, e.c, plan.Calendar{Name: "c", Dates: []string{"2026-12-25"}}, true); err != nil {
		t.Fatal(err)
	}
	p := e.planner()
	e.clock.set(time.Date(2026, 12, 25, 9, 0, 0, 0, time.UTC))
	e.pass(p)
	if n := len(e.jobs("s")) + len(e.jobs("m")); n != 0 {
		t.Fatalf("%d jobs on an excluded day", n)
	}
	s, _ := planio.Get(ctx, e.c, "s")
	m, _ := planio.Get(ctx, e.c, "m")
	if !s.NextRun.Equal(time.Date(2026, 12, 26, 9, 0, 0, 0, time.UTC)) || !m.NextRun.Equal(time.Date(2026, 12, 26, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("next runs: skip %s, coalesce %s", s.NextRun.UTC(), m.NextRun.UTC())
	}
	if err := planio.RemoveCalendar(ctx, e.c, "c"); !errors.Is(err, plan.ErrInvalid) {
		t.Fatalf("removing a calendar in use: %v, want ErrInvalid", err)
	}
}

// Pausing a group takes its plans off the schedule (no slot list holds
// them, so neither resque-go nor the PHP scheduler fires them); resuming
// files each in the slot it was paused at, and the slots missed meanwhile
// fire by the plan's misfire policy.
func TestPauseResumeGroupMisfire(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		misfire plan.Misfire
		jobs    int
	}{{plan.Coalesce, 1}, {plan.CatchUp, 5}, {plan.Skip, 0}} {
		t.Run(string(c.misfire), func(t *testing.T) {
			t.Parallel()
			start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
			e := newEnv(t, start)
			ctx := context.Background()
			e.add(plan.Plan{ID: "a", Queue: "g", Class: "C", Every: time.Hour, Misfire: c.misfire, Group: "g"})
			e.add(plan.Plan{ID: "b", Queue: "g", Class: "C", Every: time.Hour, Misfire: c.misfire, Group: "g"})
			e.add(plan.Plan{ID: "other", Queue: "other", Class: "C", Every: time.Hour, Misfire: c.misfire, Group: "h"})
			if n, err := planio.PauseGroup(ctx, e.c, "g"); err != nil || n != 2 {
				t.Fatalf("PauseGroup = %d, %v", n, err)
			}
			if got := e.schedule(); got != fmt.Sprint(start.Unix()+3600, "=other") {
				t.Fatalf("schedule while paused: %s", got)
			}
			// a plan added to a paused group starts paused
			e.add(plan.Plan{ID: "late", Queue: "g", Class: "C", Every: time.Hour, Misfire: c.misfire, Group: "g"})
			if p, _ := planio.Get(ctx, e.c, "late"); !p.Paused {
				t.Fatal("a plan added to a paused group is not paused")
			}
			p := e.planner()
			for h := 1; h <= 5; h++ {
				e.clock.set(start.Add(time.Duration(h) * time.Hour))
				e.pass(p)
			}
			if n := len(e.jobs("g")); n != 0 {
				t.Fatalf("%d jobs of a paused group", n)
			}
			if n := len(e.jobs("other")); n != 5 {
				t.Fatalf("other group: %d jobs, want 5", n)
			}
			e.clock.set(start.Add(5*time.Hour + 30*time.Minute))
			if n, err := planio.ResumeGroup(ctx, e.c, "g"); err != nil || n != 3 {
				t.Fatalf("ResumeGroup = %d, %v", n, err)
			}
			e.pass(p)
			want := 3 * c.jobs // a, b and late (added at the start too)
			if n := len(e.jobs("g")); n != want {
				t.Fatalf("after resume: %d jobs, want %d", n, want)
			}
			for _, id := range []string{"a", "b", "late"} {
				got, _ := planio.Get(ctx, e.c, id)
				if got.Paused || !got.NextRun.Equal(start.Add(6*time.Hour)) {
					t.Fatalf("%s after resume: paused %v, next %s", id, got.Paused, got.NextRun.UTC())
				}
			}
		})
	}
}

// Two planners race over two simulated days while the group of every plan
// is paused and resumed at random: with catch-up, every slot of every plan
// is pushed exactly once in the end.
func TestTwoPlannersPauseResumeExactlyOnce(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(48 * time.Hour)
	e := newEnv(t, start)
	ctx := context.Background()
	const plans = 20
	for i := range plans {
		e.add(plan.Plan{ID: fmt.Sprintf("p%02d", i), Queue: "q", Class: "C", Args: []byte(fmt.Sprintf("[%d]", i)),
			Every: 10 * time.Minute, Misfire: plan.CatchUp, Group: "g"})
	}
	a, b := e.planner(), e.planner()
	rng := rand.New(rand.NewPCG(1, 2))
	for now := start; !now.After(end); now = now.Add(10 * time.Minute) {
		e.clock.set(now)
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		for _, p := range []*planio.Planner{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := p.Pass(ctx)
				errs <- err
			}()
		}
		pause := rng.IntN(3)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			switch pause {
			case 0:
				_, err = planio.PauseGroup(ctx, e.c, "g")
			case 1:
				_, err = planio.ResumeGroup(ctx, e.c, "g")
			}
			errs <- err
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := planio.ResumeGroup(ctx, e.c, "g"); err != nil {
		t.Fatal(err)
	}
	e.pass(a)
	count := map[string]int{}
	for _, j := range e.jobs("q") {
		count[string(j.Args)]++
	}
	want := int(end.Sub(start) / (10 * time.Minute))
	for i := range plans {
		if n := count[fmt.Sprintf("[%d]", i)]; n != want {
			t.Errorf("plan %d: %d jobs, want %d (one per slot)", i, n, want)
		}
	}
}

// A PHP plan whose nextRun the PHP scheduler left stale sits in a later
// slot than nextRun names; paused, it stays in that slot, and the planner
// that meets it there takes it out unfired and keeps that slot for its
// resume, where it fires once.
func TestPausedStalePHPPlanNotFired(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Unix(1506093000, 0))
	ctx := context.Background()
	k := e.c.Keys()
	const id = "1506092109.1235"
	e.writePHP(id, phpPlan, 1506092700) // nextRun says 1506092400
	if ok, err := planio.Pause(ctx, e.c, id); err != nil || !ok {
		t.Fatalf("Pause = %v, %v", ok, err)
	}
	if n := e.pass(e.planner()); n != 0 {
		t.Fatalf("a paused plan fired %d jobs", n)
	}
	if got := e.schedule(); got != "" {
		t.Fatalf("schedule after the pass: %q", got)
	}
	if got := e.strs("ZRANGE", k.PausedPlans(), 0, -1, "WITHSCORES"); fmt.Sprint(got) != "["+id+" 1506092700]" {
		t.Fatalf("paused: %v", got)
	}
	if ok, err := planio.Resume(ctx, e.c, id); err != nil || !ok {
		t.Fatalf("Resume = %v, %v", ok, err)
	}
	if n := e.pass(e.planner()); n != 1 {
		t.Fatalf("after resume: fired %d, want 1", n)
	}
}

// Removing a paused plan removes its paused entry too; pausing or
// resuming a plan that does not exist is ErrNotFound.
func TestRemovePausedPlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
	ctx := context.Background()
	k := e.c.Keys()
	e.add(plan.Plan{ID: "a", Queue: "q", Class: "C", Every: time.Hour})
	if ok, err := planio.Pause(ctx, e.c, "a"); err != nil || !ok {
		t.Fatalf("Pause = %v, %v", ok, err)
	}
	if ok, err := planio.Pause(ctx, e.c, "a"); err != nil || ok {
		t.Fatalf("Pause again = %v, %v; want false", ok, err)
	}
	if err := planio.Remove(ctx, e.c, "a"); err != nil {
		t.Fatal(err)
	}
	if n := e.do("EXISTS", k.Plan("a"), k.PausedPlans(), k.PlanSchedule()).(int64); n != 0 {
		t.Fatalf("%d keys left", n)
	}
	for _, f := range []func(context.Context, *rdb.Client, string) (bool, error){planio.Pause, planio.Resume} {
		if _, err := f(ctx, e.c, "a"); !errors.Is(err, plan.ErrNotFound) {
			t.Errorf("%v, want ErrNotFound", err)
		}
	}
}

// A calendar changed to exclude every slot of a plan parks the plan with a
// failed entry naming the calendar, instead of leaving it without a slot
// unnoticed.
func TestPlannerCalendarExcludesEverySlot(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 7, 10, 0, 0, 0, 0, time.UTC)
	e := newEnv(t, start)
	ctx := context.Background()
	if err := planio.AddCalendar(ctx, e.c, plan.Calendar{Name: "nights", Cron: []string{"* 0-1 * * *"}}, false); err != nil {
		t.Fatal(err)
	}
	e.add(plan.Plan{ID: "p", Queue: "q", Class: "C", Cron: "30 2 * * *", Misfire: plan.Skip, Calendar: "nights"})
	if err := planio.AddCalendar(ctx, e.c, plan.Calendar{Name: "nights", Cron: []string{"* 0-7 * * *"}}, true); err != nil {
		t.Fatal(err)
	}
	_, err := planio.AddAt(ctx, e.c, plan.Plan{Queue: "q", Class: "C", Cron: "30 2 * * *", Misfire: plan.Skip, Calendar: "nights"}, start)
	if !errors.Is(err, plan.ErrInvalid) || !strings.Contains(err.Error(), `calendar "nights" excludes every slot`) {
		t.Fatalf("adding a plan the calendar excludes whole: %v", err)
	}
	e.clock.set(start.Add(150 * time.Minute))
	e.pass(e.planner())
	failed := e.strs("LRANGE", e.c.Keys().Failed(), 0, -1)
	if len(failed) != 1 || !strings.Contains(failed[0], `calendar \"nights\" excludes every slot`) {
		t.Fatalf("failed: %q", failed)
	}
	if n := len(e.jobs("q")); n != 0 || e.schedule() != "" {
		t.Fatalf("%d jobs, schedule %q", n, e.schedule())
	}
}
