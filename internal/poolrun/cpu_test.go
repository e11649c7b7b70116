package poolrun

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

// The status record's CPU% is a percent of one core over at least a
// second. The publisher samples at every child start and exit: samples a
// few milliseconds apart used to turn one or two 10 ms clock ticks into
// 200% or 400% (394% on a 2-core machine).
func TestSamplerCPUFromInjectedSamples(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0
	cpu := map[int]float64{}
	s := newSampler()
	s.now = func() time.Time { return now }
	s.read = func(_ context.Context, pid int) (reading, error) {
		v, ok := cpu[pid]
		if !ok {
			return reading{}, errors.New("no such process")
		}
		return reading{rss: 1 << 20, cpuSeconds: v, cpuOK: true}, nil
	}
	step := func(d time.Duration, manager, child float64, pids ...int) map[int]usage {
		now = now.Add(d)
		cpu[1], cpu[2] = manager, child
		return s.sample(context.Background(), pids)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

	// A child starts (a publish) and another event follows 3 ms later.
	if m := step(0, 0.50, 0.02, 1, 2); m[1].cpu != 0 || m[2].cpu != 0 || m[2].rss != 1<<20 {
		t.Errorf("first sample: %+v", m)
	}
	if m := step(3*time.Millisecond, 0.51, 0.04, 1, 2); m[1].cpu != 0 || m[2].cpu != 0 {
		t.Errorf("3 ms later: %+v (a tick over milliseconds must not be a rate)", m)
	}
	// The regular refresh: rates over the whole window since the first sample.
	m := step(997*time.Millisecond, 0.55, 0.32, 1, 2)
	if !near(m[1].cpu, 5) || !near(m[2].cpu, 30) {
		t.Errorf("after a second: manager %g%%, child %g%%; want 5, 30", m[1].cpu, m[2].cpu)
	}
	// Another quick event keeps the last rates.
	if m := step(2*time.Millisecond, 0.57, 0.35, 1, 2); !near(m[1].cpu, 5) || !near(m[2].cpu, 30) {
		t.Errorf("quick resample: %+v", m)
	}
	// The child exits: it is no longer sampled and its meter goes; a new
	// process under the same pid starts over.
	if m := step(time.Second, 0.60, 0, 1); len(m) != 1 || len(s.cpu) != 1 {
		t.Errorf("after the exit: %+v, meters %d", m, len(s.cpu))
	}
	if m := step(time.Second, 0.61, 0.9, 1, 2); m[2].cpu != 0 {
		t.Errorf("a new process under an old pid: %g%%", m[2].cpu)
	}
	// A vanished process is left out.
	delete(cpu, 2)
	now = now.Add(time.Second)
	if m := s.sample(context.Background(), []int{1, 2}); len(m) != 1 {
		t.Errorf("vanished pid sampled: %+v", m)
	}
}
