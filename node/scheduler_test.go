package node_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/statsio"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/plan"
	"github.com/resque-go/resque-go/stats"
)

// One scheduler process does the three jobs: promotes due delayed items,
// fires plans and (as master) recurring schedules; its record shows in
// stats while it runs and is gone after Stop.
func TestSchedulerPromotesFiresAndReports(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "schedule.yml")
	if err := os.WriteFile(file, []byte("tick:\n  every: 1s\n  class: Tick\n  queue: ticks\n  args: [1]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := delayedio.EnqueueAt(ctx, e.client, "later", []byte(`{"class":"Job","args":[]}`), time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := planio.Add(ctx, e.client, plan.Plan{Queue: "planned", Class: "Report", Every: time.Second}); err != nil {
		t.Fatal(err)
	}
	s, err := node.NewScheduler(node.SchedulerConfig{Redis: node.Redis{URL: os.Getenv(redisEnv), Namespace: e.ns},
		Hostname: "schedhost", Schedule: file}, node.WithLogger(zerolog.New(e.log)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return e.do("LLEN", k.Queue("later")).(int64) == 1 }, "the delayed item promoted")
	redistest.Eventually(t, 0, func() bool { return e.do("LLEN", k.Queue("planned")).(int64) >= 1 }, "a plan fired")
	redistest.Eventually(t, 0, func() bool { return e.do("LLEN", k.Queue("ticks")).(int64) >= 1 }, "a schedule fired")
	var snap *stats.Snapshot
	redistest.Eventually(t, 0, func() bool {
		snap, err = statsio.Collect(ctx, e.client, "")
		return err == nil && len(snap.Schedulers) == 1 && snap.Schedulers[0].Master
	}, "the scheduler in stats, master")
	in := snap.Schedulers[0]
	if in.Host != "schedhost" || in.PID != os.Getpid() || in.Schedules != 1 || in.NextPlanSlot.IsZero() {
		t.Errorf("record = %+v", in)
	}
	s.Stop()
	if n := len(e.do("KEYS", k.SchedulerRecord("schedhost", os.Getpid())).([]any)); n != 0 {
		t.Error("the scheduler record outlived Stop")
	}
}

// A schedule file that does not parse is a config error before anything
// runs.
func TestSchedulerBadScheduleFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(file, []byte("tick:\n  every: soon\n  class: Tick\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := node.NewScheduler(node.SchedulerConfig{Redis: node.Redis{URL: os.Getenv(redisEnv)}, Schedule: file})
	if !errors.Is(err, node.ErrConfig) {
		t.Errorf("NewScheduler = %v, want ErrConfig", err)
	}
}

// Without a schedule file (or dynamic schedules) a scheduler has no
// recurring schedule to fire and never takes resque-scheduler's master
// lock: a Ruby resque-scheduler on the same Redis keeps firing its own.
func TestSchedulerWithoutScheduleLeavesTheMasterLock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	s, err := node.NewScheduler(node.SchedulerConfig{Redis: node.Redis{URL: os.Getenv(redisEnv), Namespace: e.ns},
		Hostname: "schedhost"}, node.WithLogger(zerolog.New(e.log)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := delayedio.EnqueueAt(context.Background(), e.client, "later", []byte(`{"class":"Job","args":[]}`), time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return e.do("LLEN", k.Queue("later")).(int64) == 1 }, "a pass of the scheduler (the delayed item promoted)")
	if n := e.do("EXISTS", k.SchedulerMasterLock("")).(int64); n != 0 {
		t.Error("the master lock was taken by a scheduler with no schedule")
	}
	if s.Info().Master {
		t.Error("a scheduler with no schedule says it is master")
	}
}

// SchedulerConfig's durations are time.Duration, strings in JSON (seconds
// as earlier releases wrote them, or a Go duration); a lock TTL under a
// second is refused naming the field.
func TestSchedulerConfigDurations(t *testing.T) {
	var cfg node.SchedulerConfig
	if err := json.Unmarshal([]byte(`{"lock_timeout":"60","schedule_interval":"500ms"}`), &cfg); err != nil ||
		cfg.LockTimeout != time.Minute || cfg.ScheduleInterval != 500*time.Millisecond {
		t.Fatalf("decoded %+v, %v", cfg, err)
	}
	b, err := json.Marshal(cfg)
	if err != nil || !strings.Contains(string(b), `"lock_timeout":"1m0s","schedule_interval":"500ms"`) {
		t.Errorf("encoded %s, %v", b, err)
	}
	if err := json.Unmarshal([]byte(`{"lock_timeout":"soon"}`), &cfg); err == nil || !errors.Is(err, node.ErrConfig) {
		t.Errorf("a bad lock_timeout decoded: %v", err)
	}
	_, err = node.NewScheduler(node.SchedulerConfig{Redis: node.Redis{URL: os.Getenv(redisEnv)}, LockTimeout: 500 * time.Millisecond})
	if err == nil || !errors.Is(err, node.ErrConfig) || !strings.HasPrefix(err.Error(), "node: SchedulerConfig.LockTimeout 500ms: want at least 1 second") {
		t.Errorf("NewScheduler = %v", err)
	}
}
