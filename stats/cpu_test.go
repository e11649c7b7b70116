package stats_test

import (
	"math"
	"testing"
	"time"

	"github.com/resque-go/resque-go/stats"
)

// CPU rates from injected samples: percent of one core, never over a
// window shorter than a second, never more than the machine's cores.
func TestCPUMeter(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type sample struct {
		after   time.Duration // since t0
		seconds float64       // cumulative CPU seconds
		want    float64
	}
	tests := []struct {
		name    string
		cores   int
		samples []sample
	}{
		{"first sample has no rate", 2, []sample{{0, 12.5, 0}}},
		{"half a core", 2, []sample{{0, 1, 0}, {2 * time.Second, 2, 50}}},
		{"two busy threads", 4, []sample{{0, 0, 0}, {time.Second, 2, 200}}},
		// the bug: one 10 ms tick 5 ms after the previous sample read as 200%,
		// two ticks in 5 ms as 400% (pool status showed 394% on 2 cores)
		{"ticks over a few milliseconds", 2, []sample{
			{0, 0.03, 0}, {5 * time.Millisecond, 0.05, 0}, {10 * time.Millisecond, 0.06, 0},
			{time.Second, 0.13, 10}, {time.Second + 3*time.Millisecond, 0.15, 10}, {2 * time.Second, 0.33, 20}}},
		{"never more than the cores", 2, []sample{{0, 0, 0}, {time.Second, 3.94, 200}}},
		{"a reused pid's counter goes back", 2, []sample{{0, 50, 0}, {time.Second, 0.2, 0}, {2 * time.Second, 0.7, 50}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := stats.CPUMeter{Cores: tt.cores}
			for i, s := range tt.samples {
				if got := m.Observe(t0.Add(s.after), s.seconds); math.Abs(got-s.want) > 1e-9 {
					t.Errorf("sample %d (%v, %gs): %g%%, want %g%%", i, s.after, s.seconds, got, s.want)
				}
			}
		})
	}
}
