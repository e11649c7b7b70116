package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/statsio"
	"github.com/resque-go/resque-go/plan"
)

// A pool with `scheduler: true` runs a scheduler child next to its
// workers: the schedule file (relative to the pool file) fires, a plan
// fires, a delayed job is promoted, and stats shows the scheduler.
func TestPoolRunsScheduler(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	dir := t.TempDir()
	writeFile(t, dir, "schedule.yml", "tick:\n  every: 1s\n  class: Tick\n  queue: ticks\n  args: [1]\n")
	cfg := writeFile(t, dir, "pool.yml", fmt.Sprintf(`
redis: %s
namespace: %s
scheduler:
  schedule: schedule.yml
workers:
  - queues: jobs
    processes: 1
`, redisURL, ns))
	if err := delayedio.EnqueueAt(context.Background(), c, "later", []byte(`{"class":"Later","args":[]}`), time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := planio.Add(context.Background(), c, plan.Plan{Queue: "planned", Class: "Report", Every: time.Second}); err != nil {
		t.Fatal(err)
	}
	p := startPool(t, ns, cfg)
	redistest.Eventually(t, 0, func() bool {
		return do(t, c, "LLEN", k.Queue("ticks")).(int64) > 0 && do(t, c, "LLEN", k.Queue("planned")).(int64) > 0 &&
			do(t, c, "LLEN", k.Queue("later")).(int64) == 1
	}, "schedule, plan and delayed job")
	redistest.Eventually(t, 0, func() bool {
		s, err := statsio.Collect(t.Context(), c, "")
		return err == nil && len(s.Schedulers) == 1 && s.Schedulers[0].Master && s.Schedulers[0].PID != p.cmd.Process.Pid
	}, "the scheduler in stats")
	p.signal(t, syscall.SIGQUIT)
	if code := p.wait(t); code != 0 {
		t.Errorf("pool exit %d", code)
	}
	if n := len(do(t, c, "KEYS", k.SchedulerPattern()).([]any)); n != 0 {
		t.Errorf("%d scheduler records after the pool stopped", n)
	}
}

// kill -9 of scheduler processes at random moments, with another always
// running: every delayed item is promoted exactly once and every plan slot
// fires exactly once (a job per second of the plan's life, none twice).
func TestSchedulerKill9NothingLostOrDoubled(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	ctx := context.Background()
	start0 := time.Now()
	const items = 300
	for i := range items {
		// due over the next ~6 s
		due := start0.Add(time.Duration(i) * 20 * time.Millisecond)
		if err := delayedio.EnqueueAt(ctx, c, "later", []byte(fmt.Sprintf(`{"class":"Later","args":[%d]}`, i)), due); err != nil {
			t.Fatal(err)
		}
	}
	// catch-up: a slot a loaded machine fires late is still fired on its
	// own (the default, coalesce, folds two late slots into one job)
	if _, err := planio.Add(ctx, c, plan.Plan{ID: "p1", Queue: "planned", Class: "Report", Every: time.Second, Misfire: plan.CatchUp}); err != nil {
		t.Fatal(err)
	}
	// the plan's first slot, read back: the 300 enqueues above may cross
	// a second boundary, so it is not start0+1s
	first, err := planio.Get(ctx, c, "p1")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"scheduler", "--schedules=false", "--log-format", "json"}
	a := start(t, ns, args...)
	b := start(t, ns, args...)
	kills := 0
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		<-time.After(time.Duration(300+kills*137%400) * time.Millisecond) // pacing between kills
		victim := a
		if kills%2 == 1 {
			victim = b
		}
		victim.signal(t, syscall.SIGKILL)
		victim.wait(t)
		kills++
		if kills%2 == 1 {
			a = start(t, ns, args...)
		} else {
			b = start(t, ns, args...)
		}
	}
	redistest.Eventually(t, 0, func() bool {
		return do(t, c, "LLEN", k.Queue("later")).(int64) >= items && do(t, c, "ZCARD", k.DelayedSchedule()).(int64) == 0
	}, "every delayed item promoted")
	a.signal(t, syscall.SIGQUIT)
	b.signal(t, syscall.SIGQUIT)
	a.wait(t)
	b.wait(t)
	got := strs(do(t, c, "LRANGE", k.Queue("later"), 0, -1))
	seen := map[string]int{}
	for _, p := range got {
		i := strings.Index(p, `"args":[`)
		seen[p[i:i+strings.Index(p[i:], "]")]]++
	}
	for key, n := range seen {
		if n != 1 {
			t.Errorf("delayed item %s promoted %d times", key, n)
		}
	}
	if len(seen) != items {
		t.Errorf("%d distinct items promoted, want %d", len(seen), items)
	}
	// the plan: one job per slot from its first slot to the one it is
	// filed at now, none twice
	fired := do(t, c, "LLEN", k.Queue("planned")).(int64)
	raw, _ := do(t, c, "GET", k.Plan("p1")).([]byte)
	pl, err := planio.Get(ctx, c, "p1")
	if err != nil {
		t.Fatalf("plan: %v (%s)", err, raw)
	}
	slots := pl.NextRun.Unix() - first.NextRun.Unix()
	if fired != slots {
		t.Errorf("plan fired %d jobs for %d slots (next run %s, first slot %s)", fired, slots, pl.NextRun, first.NextRun)
	}
	t.Logf("%d kills; %d delayed items promoted once each; plan fired %d slots once each", kills, items, fired)
}
