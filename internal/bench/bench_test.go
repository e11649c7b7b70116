package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/bench"
	"github.com/resque-go/resque-go/internal/rdb"
)

// tinyConfig runs every scenario with numbers small enough for the suite.
// Nothing here asserts on speed: only that each figure was measured.
func tinyConfig(t *testing.T) bench.Config {
	return bench.Config{
		RedisURL:      os.Getenv(redisEnv),
		WorkerCommand: []string{os.Args[0], "bench", "worker"},
		// A race-enabled child sleeps 1 s at exit unless told not to.
		WorkerEnv: []string{childEnv + "=1", "GORACE=atexit_sleep_ms=0"},
		Scenarios: []string{"all"},
		Jobs:      200, Runs: 1, Procs: 2, ExecJobs: 20,
		Idle: 300 * time.Millisecond, Settle: 50 * time.Millisecond,
		LatencyJobs: 20, LatencyRate: 1000, LatencySlots: 2,
		Version: "test",
	}
}

func TestRunReportsEveryScenario(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := bench.Run(ctx, tinyConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, th := range rep.Throughput {
		names = append(names, th.Scenario)
		if len(th.Runs) != 1 {
			t.Errorf("%s: %d runs, want 1", th.Scenario, len(th.Runs))
		}
		m := th.Median
		for what, v := range map[string]float64{"jobs/s": m.JobsPerSec, "redis cpu": m.RedisCPU, "commands": m.Commands,
			"round trips": m.RoundTrips, "worker cpu": m.WorkerCPU} {
			if !(v > 0) {
				t.Errorf("%s: %s = %v, want > 0", th.Scenario, what, v)
			}
		}
		if th.Processes > 0 && !(m.PeakRSSMB > 0) {
			t.Errorf("%s: peak RSS %v, want > 0", th.Scenario, m.PeakRSSMB)
		}
		if th.Processes > 0 && !(m.Scripts > 0) {
			t.Errorf("%s: no script call counted: resque-go claims and finishes with scripts", th.Scenario)
		}
		if th.VsLoop == nil || !(th.VsLoop.RedisCPU > 0) {
			t.Errorf("%s: no ratio to the loop: %+v", th.Scenario, th.VsLoop)
		}
		if len(th.PerCommand) == 0 {
			t.Errorf("%s: no per-command figures", th.Scenario)
		}
	}
	if want := []string{"loop", "1x1", "1x16", "1x64", "2x16", "static", "2x16-static", "static-sources", "1x16-limits", "exec", "fork"}; !slices.Equal(names, want) {
		t.Errorf("throughput scenarios %v, want %v", names, want)
	}
	// the static scenarios claimed from the pool's ring (an LRANGE of its
	// head per batch), and the mass-queue bounds are checked for each pair
	for _, th := range rep.Throughput {
		if strings.Contains(th.Scenario, "static") && th.PerCommand["lrange"].Calls == 0 {
			t.Errorf("%s: no LRANGE of the ring: %v", th.Scenario, th.PerCommand)
		}
	}
	var mass []string
	for _, c := range rep.Checks {
		if strings.Contains(c.Target, " vs ") && !strings.Contains(c.Target, "limits") {
			mass = append(mass, c.Target)
		}
	}
	if len(mass) != 3 || !strings.Contains(mass[0], "(static vs 1x16)") || !strings.Contains(mass[1], "(2x16-static vs 2x16)") ||
		!strings.Contains(mass[2], "(static-sources vs static)") {
		t.Errorf("mass-queue checks: %q", mass)
	}
	// The loop is exactly five commands per job (LPOP SET INCR INCR DEL);
	// each of its 16 connections pops once more to find the queue empty.
	loop := rep.Throughput[0]
	if got := loop.PerCommand["set"].Calls; got != 1 {
		t.Errorf("loop: %v SET per job, want 1 (the bench's own commands must not count)", got)
	}
	if got := loop.Median.Scripts; got != 0 {
		t.Errorf("loop: %v scripts per job, want 0", got)
	}
	if len(rep.Idle) != 3 {
		t.Fatalf("%d idle configurations, want 3", len(rep.Idle))
	}
	for _, i := range rep.Idle {
		if !(i.Median.PeakRSSMB > 0) || i.Median.Commands < 0 || i.Median.RoundTrips < 0 {
			t.Errorf("idle %s: %+v", i.Config, i.Median)
		}
	}
	l := rep.Latency
	if l == nil || !(l.Median.P50 > 0) || l.Median.P99 < l.Median.P50 || l.Median.Max < l.Median.P99 {
		t.Errorf("latency: %+v", l)
	}
	if rep.Machine.CPUs < 1 || rep.Machine.RedisVersion == "" || len(rep.Checks) == 0 {
		t.Errorf("machine %+v, %d checks", rep.Machine, len(rep.Checks))
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"THROUGHPUT", "REDIS COMMANDS PER JOB", "IDLE", "PICKUP LATENCY", "TARGETS", "DEFINITIONS", "\nloop ", "\n1x16 ", "\n2x16 ", "\nstatic ", "\nstatic-sources "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"machine", "settings", "throughput", "idle", "latency", "checks", "definitions"} {
		if _, ok := back[k]; !ok {
			t.Errorf("JSON report lacks %q", k)
		}
	}
}

func TestRunLeavesNoKeys(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.Scenarios = []string{"loop"}
	if _, err := bench.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	assertNoBenchKeys(t)
}

func TestParseScenarios(t *testing.T) {
	got, err := bench.ParseScenarios([]string{"latency, LOOP", "1x16"})
	if err != nil || !slices.Equal(got, []string{"loop", "1x16", "latency"}) {
		t.Errorf("got %v, %v", got, err)
	}
	if got, _ := bench.ParseScenarios(nil); !slices.Equal(got, bench.DefaultScenarios) {
		t.Errorf("default: %v", got)
	}
	if got, _ := bench.ParseScenarios([]string{"all"}); !slices.Equal(got, bench.AllScenarios) {
		t.Errorf("all: %v", got)
	}
	if _, err := bench.ParseScenarios([]string{"loop,nope"}); !errors.Is(err, bench.ErrUsage) {
		t.Errorf("unknown scenario: %v", err)
	}
}

func TestWorkerCommandIsRequired(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.WorkerCommand = nil
	cfg.Scenarios = []string{"1x1"}
	if _, err := bench.Run(context.Background(), cfg); !errors.Is(err, bench.ErrUsage) {
		t.Errorf("got %v, want ErrUsage", err)
	}
}

// assertNoBenchKeys fails when a bench namespace left keys on the server.
func assertNoBenchKeys(t *testing.T) {
	t.Helper()
	c, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	keys, err := c.ScanKeys(context.Background(), "resque-go-bench-*")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) > 0 {
		t.Errorf("the bench left %d keys, such as %q", len(keys), keys[0])
	}
}
