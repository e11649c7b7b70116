package poolrun

import (
	"context"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v3/process"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/recovery"
	"github.com/resque-go/resque-go/internal/service"
	"github.com/resque-go/resque-go/pool"
	"github.com/resque-go/resque-go/stats"
)

// recordTTLIntervals is how many refresh intervals a record outlives its
// last refresh: a manager killed with -9 leaves one that expires on its own.
const recordTTLIntervals = 3

// removeTimeout bounds the DEL at the end, so a stop with Redis down does not hang.
const removeTimeout = 2 * time.Second

// publisher keeps the status record fresh while the supervisor runs.
type publisher struct {
	s      *Supervisor
	runner service.Runner
	kick   chan struct{} // a child started or exited: publish now
}

// poke asks for a publish soon, without blocking.
func (p *publisher) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *publisher) loop(ctx context.Context) {
	s := p.s
	smp := newSampler()
	t := time.NewTicker(s.p.StatusInterval)
	defer t.Stop()
	for {
		p.publish(ctx, smp)
		select {
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
			if err := s.p.Client.DeletePoolRecord(rctx, s.hostname, s.p.PID); err != nil {
				s.log.Warn().Err(err).Msg("pool status record not deleted")
			}
			cancel()
			return
		case <-t.C:
		case <-p.kick:
		}
	}
}

// publish writes the record, bounded by one interval (at least a second)
// so a hung Redis cannot stall the loop. A stop does not cut a write short:
// a SET abandoned mid-flight could reach Redis after the final DEL (another
// connection) and leave the record of a stopped pool behind.
func (p *publisher) publish(ctx context.Context, smp *sampler) {
	s := p.s
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(s.p.StatusInterval, time.Second))
	defer cancel()
	rec := s.record(ctx, smp)
	val, err := protocol.EncodePoolRecord(toProtocol(rec))
	if err == nil {
		err = s.p.Client.SetPoolRecord(ctx, s.hostname, s.p.PID, val, recordTTLIntervals*s.p.StatusInterval)
	}
	if err != nil && ctx.Err() == nil {
		s.log.Warn().Err(err).Msg("pool status record not written")
	}
}

// record builds the status record, with memory and CPU of the manager and
// of every running child.
func (s *Supervisor) record(ctx context.Context, smp *sampler) pool.Record {
	st := s.Status()
	cfg := s.Config()
	now := s.p.Now()
	rec := pool.Record{
		PID: s.p.PID, Host: s.hostname, Config: cfg.Path, Format: cfg.Format,
		StartedAt: st.StartedAt, UpdatedAt: now, RefreshIntervalS: s.p.StatusInterval.Seconds(),
		State: st.State, Children: make([]pool.Child, len(st.Children)),
	}
	pids := []int{s.p.PID}
	for _, c := range st.Children {
		if c.PID > 0 {
			pids = append(pids, c.PID)
		}
	}
	m := smp.sample(ctx, pids)
	rec.RSSBytes, rec.CPUPercent = m[s.p.PID].rss, m[s.p.PID].cpu
	for i, c := range st.Children {
		ch := pool.Child{Slot: c.Slot, Queues: c.Queues, PID: c.PID, State: c.State, Restarts: c.Restarts,
			Recycles: c.Recycles,
			LastExit: c.LastExit, LastExitReason: c.LastExitReason}
		if !c.StartedAt.IsZero() {
			t := c.StartedAt
			ch.StartedAt, ch.UptimeS = &t, now.Sub(t).Seconds()
		}
		if !c.RestartAt.IsZero() {
			t := c.RestartAt
			ch.RestartAt = &t
		}
		if c.PID > 0 {
			ch.RSSBytes, ch.CPUPercent = m[c.PID].rss, m[c.PID].cpu
		}
		rec.Children[i] = ch
	}
	return rec
}

// usage is one process's memory and CPU (percent of one core).
type usage struct {
	rss uint64
	cpu float64
}

// reading is what the sampler reads of one process.
type reading struct {
	rss        uint64
	cpuSeconds float64 // user+system, since the process started
	cpuOK      bool
}

// sampler measures processes. CPU is a rate between samples of the same
// pid (stats.CPUMeter: over a second at least, so the samples the
// publisher takes at every child start or exit do not read a clock tick as
// hundreds of percent).
type sampler struct {
	read func(ctx context.Context, pid int) (reading, error)
	now  func() time.Time // monotonic
	cpu  map[int]*stats.CPUMeter
}

func newSampler() *sampler {
	return &sampler{read: readProcess, now: time.Now, cpu: map[int]*stats.CPUMeter{}}
}

// readProcess reads a process with gopsutil.
func readProcess(ctx context.Context, pid int) (reading, error) {
	p, err := process.NewProcessWithContext(ctx, int32(pid))
	if err != nil {
		return reading{}, err
	}
	var r reading
	if mi, err := p.MemoryInfoWithContext(ctx); err == nil {
		r.rss = mi.RSS
	}
	if t, err := p.TimesWithContext(ctx); err == nil {
		r.cpuSeconds, r.cpuOK = t.User+t.System, true
	}
	return r, nil
}

// sample measures pids; one that cannot be read (it just exited) is zero.
// The meters of pids no longer asked for are dropped.
func (s *sampler) sample(ctx context.Context, pids []int) map[int]usage {
	out := make(map[int]usage, len(pids))
	meters := make(map[int]*stats.CPUMeter, len(pids))
	for _, pid := range pids {
		r, err := s.read(ctx, pid)
		if err != nil {
			continue
		}
		u := usage{rss: r.rss}
		if r.cpuOK {
			m := s.cpu[pid]
			if m == nil {
				m = &stats.CPUMeter{}
			}
			u.cpu = m.Observe(s.now(), r.cpuSeconds)
			meters[pid] = m
		}
		out[pid] = u
	}
	s.cpu = meters
	return out
}

// pruner runs a recovery pass after children die: a killed child's
// registrations are removed and the job it held is pushed back to its
// queue; its runtime record (resque-go stats) goes too instead of waiting to
// expire. Requests that come while a pass runs are folded into one more.
type pruner struct {
	s      *Supervisor
	runner service.Runner
	req    chan struct{}

	mu   sync.Mutex
	dead []int // children whose runtime records are still to delete
}

// request asks for a pass; pid, when not 0, is a child that died.
func (p *pruner) request(pid int) {
	if pid > 0 {
		p.mu.Lock()
		p.dead = append(p.dead, pid)
		p.mu.Unlock()
	}
	select {
	case p.req <- struct{}{}:
	default:
	}
}

func (p *pruner) loop(ctx context.Context) {
	retry := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.req:
		}
		for {
			pctx, cancel := context.WithTimeout(ctx, p.s.p.PruneTimeout)
			err := p.pass(pctx)
			cancel()
			if err == nil || ctx.Err() != nil {
				retry = time.Second
				break
			}
			if !service.Sleep(ctx, retry) {
				return
			}
			retry = min(2*retry, 30*time.Second)
		}
	}
}

// pass runs one pruning pass as this host's observer, recovering with
// the children's settings (observerConfig).
func (p *pruner) pass(ctx context.Context) error {
	s := p.s
	rec, err := recovery.New(observerConfig(s.Config(), recovery.Config{Client: s.p.Client, Hostname: s.hostname, PID: s.p.PID, Logger: &s.log}))
	if err == nil {
		err = rec.Prune(ctx)
	}
	p.mu.Lock()
	dead := p.dead
	p.dead = nil
	p.mu.Unlock()
	for i, pid := range dead {
		if err == nil {
			err = s.p.Client.DeleteProcessRecord(ctx, s.hostname, pid)
		}
		if err != nil { // keep the rest for the next pass
			p.mu.Lock()
			p.dead = append(p.dead, dead[i:]...)
			p.mu.Unlock()
			break
		}
	}
	if err != nil && ctx.Err() == nil {
		s.log.Warn().Err(err).Msg("pruning dead workers failed")
	}
	s.emit(pool.Event{Kind: pool.EventPruned, Err: err})
	return err
}

// observerConfig completes rc, the observer's recovery, with what the
// file gives every child (cfg.Work) about a dead worker's job: its
// recoveries before it is failed, the caps whose slots it frees at once
// (instead of at the end of their lease) and the events it writes, as the
// children's own recoveries do.
func observerConfig(cfg *pool.Config, rc recovery.Config) recovery.Config {
	w := cfg.Work
	rc.MaxRecoveries, rc.RubyPrune = w.MaxRecoveries, w.RubyPrune
	for _, spec := range w.Limits {
		// the file was validated when it was loaded: a spec that does
		// not parse frees nothing, as before
		if l, err := protocol.ParseLimit(spec); err == nil {
			rc.Limits = append(rc.Limits, l)
		}
	}
	rc.Events = rdb.EventsConfig{On: w.Events, MaxLen: w.EventsMaxLen, MaxAge: w.EventsMaxAge}
	return rc
}
