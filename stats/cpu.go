package stats

import (
	"runtime"
	"time"
)

// DefaultCPUWindow is the shortest span a CPUMeter computes a rate over.
const DefaultCPUWindow = time.Second

// CPUMeter turns a process's cumulative CPU time (user+system seconds, as
// gopsutil reads it from /proc/<pid>/stat in 10 ms clock ticks) into a
// percentage of one core: 100 is one core busy all the time, so a process
// with four busy threads on a machine with four or more cores shows 400,
// and nothing shows more than 100 times the machine's cores.
//
// A rate is only computed over at least MinWindow: the counters move in
// whole ticks, so one tick within 5 ms reads as 200%, which is how pool
// status, sampling on every child start, came to show 394% on two cores.
// Samples that come sooner keep the last rate. The first sample only
// starts a window (rate 0): gopsutil's process start time is derived from
// the boot time in whole seconds and is about a second off, too coarse an
// anchor for a process a moment old.
//
// The zero value is ready to use; a CPUMeter is not safe for concurrent use.
type CPUMeter struct {
	// MinWindow defaults to DefaultCPUWindow; Cores to runtime.NumCPU().
	MinWindow time.Duration
	Cores     int

	started bool
	at      time.Time // start of the current window (monotonic)
	seconds float64   // CPU seconds at its start
	rate    float64
}

// Observe records the process's CPU seconds at now and returns its rate.
func (m *CPUMeter) Observe(now time.Time, seconds float64) float64 {
	if !m.started {
		m.started, m.at, m.seconds = true, now, seconds
		return 0
	}
	window := m.MinWindow
	if window <= 0 {
		window = DefaultCPUWindow
	}
	wall := now.Sub(m.at)
	if wall < window {
		return m.rate
	}
	cores := m.Cores
	if cores <= 0 {
		cores = runtime.NumCPU()
	}
	// A counter that went back is another process under a reused pid.
	m.rate = min(max(0, (seconds-m.seconds)/wall.Seconds()*100), float64(cores)*100)
	m.at, m.seconds = now, seconds
	return m.rate
}
