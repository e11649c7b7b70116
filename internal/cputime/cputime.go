// Package cputime measures the CPU time of this process and of its
// children, for benchmarks that count what a job's processes cost besides
// wall time (which a busy machine disturbs more).
package cputime

import (
	"syscall"
	"testing"
	"time"
)

// Now returns the user+system CPU time of this process and of its
// waited-for children so far.
func Now() (self, children time.Duration, err error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, err
	}
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0, 0, err
	}
	return self, time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// Meter is a reading taken at the start of a benchmark's timed part.
type Meter struct {
	b              *testing.B
	self, children time.Duration
}

// Start takes the first reading.
func Start(b *testing.B) Meter {
	b.Helper()
	self, children, err := Now()
	if err != nil {
		b.Fatal(err)
	}
	return Meter{b: b, self: self, children: children}
}

// Report reports the CPU time per b.N since Start: this process's as
// worker-cpu-µs/op, its children's as childUnit ("job-cpu-µs/op").
func (m Meter) Report(childUnit string) {
	m.b.Helper()
	self, children, err := Now()
	if err != nil {
		m.b.Fatal(err)
	}
	n := float64(m.b.N)
	m.b.ReportMetric(float64((self-m.self).Microseconds())/n, "worker-cpu-µs/op")
	m.b.ReportMetric(float64((children-m.children).Microseconds())/n, childUnit)
}
