package planio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/plan"
)

// fleetPlan is plan i of the exactly-once test: a mix of intervals,
// periods and cron lines, some in Europe/Prague across its spring-forward
// day (2026-03-29).
func fleetPlan(i int) plan.Plan {
	p := plan.Plan{ID: fmt.Sprintf("p%02d", i), Queue: "fleet", Class: "Tick", Args: json.RawMessage(fmt.Sprintf("[%d]", i))}
	switch i % 5 {
	case 0:
		p.Every = time.Duration(40+11*(i%3)) * time.Minute
	case 1:
		p.Cron = "*/30 * * * *"
		p.Timezone = "Europe/Prague"
	case 2:
		p.Cron = "30 2 * * *" // runs at 03:00 on Mar 29
		p.Timezone = "Europe/Prague"
	case 3:
		p.Period = "PT1H"
	case 4:
		p.Period = "P1D"
		p.Timezone = "Europe/Prague"
		p.Start = time.Date(2026, 3, 27, 23, 37, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	}
	return p
}

// Four planners pass concurrently at every step of an injected clock over
// three simulated days, one of them cut off at a random instant of each of
// its passes: every slot of every plan is pushed exactly once.
func TestFourPlannersFireEachSlotOnce(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 28, 0, 0, 0, 0, time.UTC)
	end := start.Add(72 * time.Hour)
	const step = 10 * time.Minute // no period is shorter: nothing coalesces
	e := newEnv(t, start)
	ctx := context.Background()
	want := map[int]int{}
	for i := range 50 {
		p := fleetPlan(i)
		e.add(p)
		got, err := planio.Get(ctx, e.c, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		slots, err := plan.Upcoming(got, 2000)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range slots {
			if !s.After(end) {
				want[i]++
			}
		}
	}
	planners := make([]*planio.Planner, 4)
	for i := range planners {
		planners[i] = e.planner()
	}
	total := 0
	for now := start.Add(step); !now.After(end); now = now.Add(step) {
		// a little jitter: the planners pass at different seconds of a step
		e.clock.set(now.Add(time.Duration(now.Unix()/600%7) * time.Second))
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i, p := range planners {
			wg.Go(func() {
				pctx := ctx
				if i == 0 {
					// this one dies at any instant of its pass, as a
					// kill -9 would: its call may or may not have run
					var cancel context.CancelFunc
					pctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(3000))*time.Microsecond)
					defer cancel()
				}
				n, err := p.Pass(pctx)
				if err != nil && i != 0 {
					t.Error(err)
				}
				mu.Lock()
				total += n
				mu.Unlock()
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}
	got := map[int]int{}
	jobs := e.jobs("fleet")
	for _, j := range jobs {
		var args []int
		if err := json.Unmarshal(j.Args, &args); err != nil || len(args) != 1 {
			t.Fatalf("args %s", j.Args)
		}
		got[args[0]]++
	}
	sum := 0
	for i := range 50 {
		sum += want[i]
		if got[i] != want[i] {
			t.Errorf("plan %d (%+v): pushed %d, want %d", i, fleetPlan(i), got[i], want[i])
		}
	}
	if total > len(jobs) || sum != len(jobs) {
		// a killed pass may have pushed a job it could not count
		t.Errorf("passes reported %d fires, %d jobs pushed, %d slots due", total, len(jobs), sum)
	}
	// the spring-forward day: the 02:30 cron ran once, at 03:00 CEST
	if want[2] != 3 {
		t.Errorf("the 02:30 cron had %d slots in 3 days", want[2])
	}
	t.Logf("%d jobs pushed by 4 planners over %d steps", len(jobs), int(end.Sub(start)/step))
}
