package bench

import (
	"context"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// benchQueue is the queue every throughput run drains.
const benchQueue = "bench"

// A drain checks the queue and the counter every 1/200 of the time it has
// run, within these bounds: the end is seen within 0.5% of the wall time
// (or 2 ms), and a long run is polled at most 50 times a second, so that
// the polls' own Redis CPU (a round trip each) stays out of the figures.
const (
	minPoll = 2 * time.Millisecond
	maxPoll = 20 * time.Millisecond
)

func pollInterval(elapsed time.Duration) time.Duration {
	return min(max(elapsed/200, minPoll), maxPoll)
}

// throughput runs the throughput scenarios cfg.Runs times each, in rounds:
// each round runs every scenario once, in order, so that a machine that
// slows down or speeds up for a while (a shared host) moves every
// scenario's figures alike and their ratios stay comparable.
func (b *bencher) throughput(ctx context.Context, scs []scenario) ([]Throughput, error) {
	out := make([]Throughput, len(scs))
	for j, sc := range scs {
		out[j] = Throughput{Scenario: sc.name, Description: sc.description, Processes: sc.procs, Slots: sc.slots, Jobs: sc.jobs}
	}
	for i := 1; i <= b.cfg.Runs; i++ {
		for j, sc := range scs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			b.log.Info().Str("scenario", sc.name).Int("run", i).Int("runs", b.cfg.Runs).Int("jobs", sc.jobs).Msg("bench run started")
			run, err := b.throughputRun(ctx, sc)
			if err != nil {
				return nil, fmt.Errorf("%s run %d: %w", sc.name, i, err)
			}
			b.log.Info().Str("scenario", sc.name).Int("run", i).Float64("jobs_per_sec", run.JobsPerSec).
				Float64("redis_cpu_us_per_job", run.RedisCPU).Msg("bench run finished")
			out[j].Runs = append(out[j].Runs, run)
		}
	}
	for j := range out {
		out[j].summarize()
	}
	return out, nil
}

// throughputRun drains sc.jobs no-op jobs once. The jobs are pushed to a
// staging list first; the workers start, register and go idle; then one
// RENAME makes the staging list the queue. The window measured runs from
// just before the RENAME to the last finish, so it holds the jobs and
// nothing of the workers' start or stop.
func (b *bencher) throughputRun(ctx context.Context, sc scenario) (run ThroughputRun, err error) {
	ns := b.namespace()
	keys := protocol.NewKeys(ns)
	defer func() {
		if cerr := b.cleanup(ns); err == nil {
			err = cerr
		}
	}()
	queueKey, staging := keys.Queue(benchQueue), keys.Queue(benchQueue+"-staging")
	spec := childSpec{procs: sc.procs, slots: sc.slots, queues: benchQueue, namespace: ns, exec: sc.exec, fork: sc.fork, flags: sc.flags}
	begin := func() error {
		if _, err := b.mon.do("RENAME", staging, queueKey); err != nil {
			return fmt.Errorf("rename: %w", err)
		}
		return nil
	}
	if sc.sources > 0 {
		// a static pool: the sources' FIFOs, a staging copy of the ring
		// and the ring's marks in its state hash are written first, and
		// the window starts when one RENAME makes the staging list the
		// ring (the workers poll it meanwhile), as for a queue: the
		// window holds the claims, not the allocator's placing of the
		// sources (which costs 10,000 sources more than one)
		sources := min(sc.sources, sc.jobs) // each with a job
		if err := b.prefillSources(keys, sc.jobs, sources); err != nil {
			return run, err
		}
		ring := keys.StaticRing(staticPool)
		if err := b.stageRing(ring+"-staging", keys.StaticState(staticPool), sources); err != nil {
			return run, err
		}
		queueKey, spec.mass = ring, "static:"+staticPool
		begin = func() error {
			if _, err := b.mon.do("RENAME", ring+"-staging", ring); err != nil {
				return fmt.Errorf("rename the ring: %w", err)
			}
			return nil
		}
	} else {
		if _, err := b.mon.do("SADD", keys.Queues(), benchQueue); err != nil {
			return run, err
		}
		if err := b.prefill(staging, sc.jobs); err != nil {
			return run, err
		}
	}
	var children []*child
	if sc.procs > 0 {
		if children, err = b.startChildren(spec); err != nil {
			return run, err
		}
		defer func() {
			if children != nil {
				stopChildren(children)
			}
		}()
		if err := b.waitRegistered(ctx, keys, sc.procs*sc.slots, children); err != nil {
			return run, err
		}
		if err := sleep(ctx, b.cfg.Settle); err != nil {
			return run, err
		}
	}

	selfBefore := selfCPU()
	a, err := b.mon.snapshot(keys.StatProcessed())
	if err != nil {
		return run, err
	}
	if err := begin(); err != nil {
		return run, err
	}
	loopDone := make(chan error, 1)
	if sc.procs == 0 {
		go func() { loopDone <- runLoop(ctx, b.url, keys, benchQueue, sc.slots) }()
	}
	if err := b.drain(ctx, queueKey, keys.StatProcessed(), int64(sc.jobs), children, loopDone); err != nil {
		return run, err
	}
	z, err := b.mon.snapshot(keys.StatProcessed())
	if err != nil {
		return run, err
	}
	selfAfter := selfCPU()

	var workerCPU time.Duration
	var peakRSS int64
	if sc.procs == 0 {
		if err := <-loopDone; err != nil {
			return run, err
		}
		workerCPU = selfAfter - selfBefore
	} else {
		usages, err := stopChildren(children)
		children = nil
		if err != nil {
			return run, err
		}
		for _, u := range usages {
			workerCPU += u.cpu
			peakRSS = max(peakRSS, u.peakRSS)
		}
	}
	d := diff(a, z)
	if d.jobs <= 0 {
		return run, fmt.Errorf("no job was counted in stat:processed")
	}
	return makeRun(d, workerCPU, peakRSS), nil
}

// drain waits until the queue is empty and the processed counter reached
// want. It fails when a worker process exits, the loop fails, or no job
// finishes for stallTimeout.
func (b *bencher) drain(ctx context.Context, queueKey, processedKey string, want int64, children []*child, loopDone chan error) error {
	var last int64 = -1
	start := time.Now()
	lastChange := start
	for {
		n, done, err := b.mon.poll(queueKey, processedKey)
		if err != nil {
			return err
		}
		if n == 0 && done >= want {
			return nil
		}
		if done != last {
			last, lastChange = done, time.Now()
		} else if time.Since(lastChange) > stallTimeout {
			return fmt.Errorf("no job finished for %s (%d of %d done, %d queued)", stallTimeout, done, want, n)
		}
		if err := exited(children); err != nil {
			return err
		}
		select {
		case err := <-loopDone:
			if err != nil {
				return err
			}
			loopDone <- nil // finished: the caller reads it again
		default:
		}
		if err := sleep(ctx, pollInterval(time.Since(start))); err != nil {
			return err
		}
	}
}

// makeRun turns a window's counters into per-job figures.
func makeRun(d delta, workerCPU time.Duration, peakRSS int64) ThroughputRun {
	jobs := float64(d.jobs)
	cmds, scripts := d.commands()
	r := ThroughputRun{
		Jobs:    d.jobs,
		Seconds: d.seconds,
		Metrics: Metrics{
			JobsPerSec: jobs / d.seconds,
			RedisCPU:   d.cpu * 1e6 / jobs,
			Commands:   float64(cmds) / jobs,
			Scripts:    float64(scripts) / jobs,
			WorkerCPU:  float64(workerCPU.Microseconds()) / jobs,
			PeakRSSMB:  float64(peakRSS) / (1 << 20),
		},
		PerCommand: map[string]CommandCost{},
	}
	if d.hasMain {
		r.RedisMainCPU = d.mainCPU * 1e6 / jobs
	}
	if d.hasReads {
		r.RoundTrips = float64(d.reads) / jobs
	}
	for name, st := range d.cmds {
		r.PerCommand[name] = CommandCost{Calls: float64(st.Calls) / jobs, Usec: float64(st.Usec) / jobs}
	}
	return r
}

// selfCPU is this process's CPU time so far (user + system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// staticSource names source i of the static scenarios.
func staticSource(i int) string { return "s" + strconv.Itoa(i) }

// prefillSources deals jobs no-op jobs round-robin to sources sources of
// the static pool (none of them on its ring yet) as the allocator places
// them: each source's first job goes into its ring entry (stageRing), the
// others into its FIFO.
func (b *bencher) prefillSources(keys protocol.Keys, jobs, sources int) error {
	for i := range sources {
		n := jobs / sources
		if i < jobs%sources {
			n++
		}
		if n <= 1 {
			continue
		}
		if err := b.prefill(keys.StaticSourceQueue(staticPool, staticSource(i)), n-1); err != nil {
			return err
		}
	}
	return nil
}

// stageRingScript puts the ring entries in ARGV on a static pool's ring
// (KEYS[1], here its staging copy) and marks their sources (ARGV[i + 1]) on
// it in its state hash (KEYS[2]), as the allocator does, in chunks
// (unpack's limit).
const stageRingScript = `
for first = 1, #ARGV, 1000 do
  local entries, marks = {}, {}
  for i = first, math.min(first + 999, #ARGV), 2 do
    entries[#entries + 1] = ARGV[i]
    marks[#marks + 1] = 'm:' .. ARGV[i + 1]
    marks[#marks + 1] = 'r'
  end
  redis.call('RPUSH', KEYS[1], unpack(entries))
  redis.call('HSET', KEYS[2], unpack(marks))
end
return #ARGV / 2`

// stageRing writes the ring of a static scenario's sources to staging,
// each entry holding the source's first job (prefillSources), with their
// marks in the state hash, before the window.
func (b *bencher) stageRing(staging, state string, sources int) error {
	args := []string{stageRingScript, "2", staging, state}
	for i := range sources {
		args = append(args, protocol.StaticInline(staticSource(i), NoopPayload), staticSource(i))
	}
	if _, err := b.mon.do("EVAL", args...); err != nil {
		return fmt.Errorf("stage the sources' ring: %w", err)
	}
	return nil
}
