package bench

import (
	"bytes"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/doccheck"
)

// What the bench prints speaks of the product and the targets it measures
// against, never of how the project's own work was organised: a report with
// every scenario, target and definition holds none of doccheck's phrases.
func TestReportWordsAreTheProducts(t *testing.T) {
	cfg := Config{Jobs: 10000, Runs: 3, Procs: 2, Sources: 10000, Idle: 3 * time.Second, Settle: time.Second,
		LatencyJobs: 2000, LatencyRate: 200, LatencySlots: 16}
	rep := &Report{Settings: settingsOf(cfg), Definitions: definitions(cfg)}
	m := Metrics{JobsPerSec: 50000, RedisCPU: 12, Commands: 4.25, Scripts: 0.125, RoundTrips: 0.125, WorkerCPU: 20, PeakRSSMB: 18}
	for _, s := range []struct {
		name         string
		procs, slots int
	}{{ScenarioLoop, 0, 16}, {ScenarioSlots1, 1, 1}, {ScenarioSlots16, 1, 16}, {ScenarioSlots64, 1, 64}, {"2x16", 2, 16},
		{ScenarioStatic, 1, 16}, {"2x16-static", 2, 16}, {ScenarioStaticSources, 1, 16}, {ScenarioExec, 1, 16}, {ScenarioFork, 1, 16}} {
		th := Throughput{Scenario: s.name, Description: s.name, Processes: s.procs, Slots: s.slots, Jobs: cfg.Jobs,
			Median: m, Min: m, Max: m, PerCommand: map[string]CommandCost{"fcall": {Calls: 0.125, Usec: 10}}}
		if s.name != ScenarioLoop {
			th.VsLoop = &Ratios{RedisCPU: 1.1, JobsPerSec: 0.7, Commands: 0.85, RoundTrips: 0.1}
		}
		rep.Throughput = append(rep.Throughput, th)
	}
	rep.Idle = []Idle{{Config: "1 slot, 1 queue", Slots: 1, Queues: 1, Seconds: 3, Median: IdleMetrics{Commands: 1.2, PeakRSSMB: 15}}}
	rep.Latency = &Latency{Jobs: 2000, Rate: 200, Slots: 16, Median: LatencyMetrics{P50: 0.3, P99: 0.6, Max: 1.2}}
	rep.Checks = rep.checks()

	var text, js bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{text.String(), js.String()} {
		if words := doccheck.ProcessWords(out); len(words) > 0 {
			t.Errorf("the report says %q; say what is measured instead:\n%s", words, out)
		}
	}
}
