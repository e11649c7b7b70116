package statsio

import (
	"context"
	"os"
	"runtime"
	"time"

	"github.com/rs/zerolog"
	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/load"
	"github.com/shirou/gopsutil/v3/mem"
	"github.com/shirou/gopsutil/v3/process"

	"github.com/resque-go/resque-go/stats"
)

// metrics is one sample of the process and its host.
type metrics struct {
	rss                  uint64
	cpu                  float64 // percent of one core
	goroutines           int
	hostCPU, memUsed     float64 // percent
	load1, load5, load15 float64
}

// sampler reads metrics with gopsutil. CPU percentages are rates between two
// samples; it keeps the previous counters itself rather than use gopsutil's
// package-level "last call" state, which every caller in the process shares.
// Only the publisher loop uses a sampler, so it needs no lock.
type sampler struct {
	pid    int
	log    *zerolog.Logger
	warned map[string]bool

	proc        *process.Process
	procCPU     stats.CPUMeter
	hostBusy    float64 // busy and total CPU seconds at the previous sample
	hostTotal   float64
	hostSampled bool
}

func newSampler(pid int, log *zerolog.Logger) *sampler {
	return &sampler{pid: pid, log: log, warned: map[string]bool{}}
}

// sample reads every metric; one that cannot be read is 0 and logged (at
// warn the first time, then at debug).
func (s *sampler) sample(ctx context.Context) metrics {
	var m metrics
	if s.pid == os.Getpid() {
		m.goroutines = runtime.NumGoroutine()
	}
	if err := s.sampleProcess(ctx, &m); err != nil {
		s.failed("process", err)
	}
	if err := s.sampleHostCPU(ctx, &m); err != nil {
		s.failed("host_cpu", err)
	}
	if vm, err := mem.VirtualMemoryWithContext(ctx); err != nil {
		s.failed("memory", err)
	} else {
		m.memUsed = vm.UsedPercent
	}
	if avg, err := load.AvgWithContext(ctx); err != nil {
		s.failed("load", err)
	} else {
		m.load1, m.load5, m.load15 = avg.Load1, avg.Load5, avg.Load15
	}
	return m
}

// sampleProcess reads RSS and the CPU rate (see CPUMeter: none at the
// first sample).
func (s *sampler) sampleProcess(ctx context.Context, m *metrics) error {
	if s.proc == nil {
		p, err := process.NewProcessWithContext(ctx, int32(s.pid))
		if err != nil {
			return err
		}
		s.proc = p
	}
	mi, err := s.proc.MemoryInfoWithContext(ctx)
	if err != nil {
		return err
	}
	m.rss = mi.RSS
	times, err := s.proc.TimesWithContext(ctx)
	if err != nil {
		return err
	}
	m.cpu = s.procCPU.Observe(time.Now(), times.User+times.System)
	return nil
}

// sampleHostCPU computes the busy share of all cores since the previous
// sample (since boot, for the first one).
func (s *sampler) sampleHostCPU(ctx context.Context, m *metrics) error {
	ts, err := cpu.TimesWithContext(ctx, false)
	if err != nil {
		return err
	}
	if len(ts) == 0 {
		return nil
	}
	t := ts[0]
	// Guest time is already part of user time on Linux; leave it out.
	total := t.User + t.System + t.Idle + t.Nice + t.Iowait + t.Irq + t.Softirq + t.Steal
	busy := total - t.Idle - t.Iowait
	dTotal, dBusy := total, busy
	if s.hostSampled {
		dTotal, dBusy = total-s.hostTotal, busy-s.hostBusy
	}
	if dTotal > 0 {
		m.hostCPU = min(100, max(0, dBusy/dTotal*100))
	}
	s.hostBusy, s.hostTotal, s.hostSampled = busy, total, true
	return nil
}

func (s *sampler) failed(metric string, err error) {
	ev := s.log.Debug()
	if !s.warned[metric] {
		s.warned[metric] = true
		ev = s.log.Warn()
	}
	ev.Err(err).Str("metric", metric).Msg("runtime metric unavailable")
}
