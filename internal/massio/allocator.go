package massio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
	"github.com/resque-go/resque-go/massqueue"
)

// AllocatorConfig configures an Allocator. Zero values mean the documented
// defaults.
type AllocatorConfig struct {
	Client *rdb.Client
	// Config gives the routing (mapping and pools) and the batch pools whose
	// units this allocator sweeps and hands back.
	Config *massqueue.Config
	// Interval is how long an idle allocator waits for new static jobs
	// (it wakes at once when one arrives), and how often it looks for
	// committed batches, done batches and dead units; default 1 s.
	Interval time.Duration
	// Chunk is how many static payloads one script call routes; default 100.
	Chunk int
	// DeadAfter is how long a unit (or a registered static pool) stays
	// alive after its last heartbeat; default 30 s.
	DeadAfter time.Duration
	// Hostname and WorkerID fill the failed entries of bad payloads;
	// defaults: os.Hostname() and <host>:<pid>:mass-allocator.
	Hostname string
	WorkerID string
	Logger   *zerolog.Logger
	Now      func() time.Time
	// OnPass, when set, is called after every pass (tests wait on it).
	OnPass func(PassStats)
}

// PassStats is what one allocator pass did.
type PassStats struct {
	Static rdb.StaticAllocation
	// BadRecorded quarantined payloads were recorded in failed.
	BadRecorded int
	// Batches allocated by result (assigned, parked, backlog, failed,
	// waiting).
	Batches map[rdb.BatchResult]int
	// Finished batches (done, removed from their units); HandedBack
	// batches of dead units went back to committed.
	Finished   int
	HandedBack int
	// Adopted jobs were found in the released server's static FIFOs or in
	// a Resque queue named like a mass list (queue:static:queue:<pool>,
	// queue:committed:<batch id>) and went back to unassigned.
	Adopted int
	// Deferred unique jobs released with a delay were due and went to
	// unassigned.
	Deferred int
}

func (s PassStats) progressed() bool {
	return s.Static.Total() > 0 || s.BadRecorded > 0 || s.Finished > 0 || s.HandedBack > 0 || s.Adopted > 0 || s.Deferred > 0 ||
		s.Batches[rdb.BatchAssigned]+s.Batches[rdb.BatchParked]+s.Batches[rdb.BatchBacklog]+s.Batches[rdb.BatchFailed] > 0
}

// Allocator moves static payloads from unassigned to their pools and
// committed batches to units, finishes done batches (handing the source's
// next backlog batch on) and hands a dead unit's batches back. Every step
// is one script: any number of allocators (one in every pool manager, on
// any number of hosts) may run at once.
type Allocator struct {
	cfg       AllocatorConfig
	log       zerolog.Logger
	routing   []byte
	runner    service.Runner
	lastSweep time.Time
}

// NewAllocator returns an allocator; Start runs it.
func NewAllocator(cfg AllocatorConfig) (*Allocator, error) {
	if cfg.Client == nil || cfg.Config == nil {
		return nil, errors.New("massqueue: AllocatorConfig.Client and Config are required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Chunk <= 0 {
		cfg.Chunk = 100
	}
	if cfg.DeadAfter <= 0 {
		cfg.DeadAfter = 30 * time.Second
	}
	if cfg.Hostname == "" {
		cfg.Hostname, _ = os.Hostname()
	}
	if cfg.WorkerID == "" {
		cfg.WorkerID = fmt.Sprintf("%s:%d:mass-allocator", cfg.Hostname, os.Getpid())
	}
	cfg.Now = service.Clock(cfg.Now)
	cfg.Logger = service.Logger(cfg.Logger)
	return &Allocator{cfg: cfg, log: *cfg.Logger, routing: cfg.Config.Routing()}, nil
}

// Start runs the allocator until Stop or ctx ends.
func (a *Allocator) Start(ctx context.Context) { a.runner.Start(ctx, a.loop) }

// Stop stops the allocator and waits for it.
func (a *Allocator) Stop() { a.runner.Stop() }

func (a *Allocator) loop(ctx context.Context) {
	c := a.cfg.Client
	for ctx.Err() == nil {
		st, err := a.Pass(ctx)
		if err != nil && ctx.Err() == nil {
			a.log.Warn().Err(err).Msg("mass allocator pass failed")
		}
		if a.cfg.OnPass != nil {
			a.cfg.OnPass(st)
		}
		if err != nil {
			if !service.Sleep(ctx, a.cfg.Interval) {
				return
			}
			continue
		}
		if st.progressed() {
			continue
		}
		// idle: wake when a static job arrives, or after Interval
		if _, err := c.WaitList(ctx, c.Keys().Unassigned(), a.cfg.Interval); err != nil && ctx.Err() == nil {
			a.log.Warn().Err(err).Msg("mass allocator wait failed")
			if !service.Sleep(ctx, a.cfg.Interval) {
				return
			}
		}
	}
}

// Pass runs one round: every static payload waiting, the quarantine, every
// committed batch, and (at most once per Interval) the units' done batches
// and dead units.
func (a *Allocator) Pass(ctx context.Context) (PassStats, error) {
	st := PassStats{Batches: map[rdb.BatchResult]int{}}
	if err := a.deferred(ctx, &st); err != nil {
		return st, err
	}
	if err := a.static(ctx, &st); err != nil {
		return st, err
	}
	if err := a.quarantine(ctx, &st); err != nil {
		return st, err
	}
	if err := a.batches(ctx, &st); err != nil {
		return st, err
	}
	now := a.cfg.Now()
	if now.Sub(a.lastSweep) >= a.cfg.Interval || now.Before(a.lastSweep) {
		a.lastSweep = now
		if err := a.sweep(ctx, &st); err != nil {
			return st, err
		}
		if err := a.adopt(ctx, &st); err != nil {
			return st, err
		}
	}
	return st, nil
}

// deferred moves the released deferred unique jobs that are due (their
// deferrableBy over) to unassigned, to be routed with the rest.
func (a *Allocator) deferred(ctx context.Context, st *PassStats) error {
	for ctx.Err() == nil {
		n, err := a.cfg.Client.PromoteMassDeferred(ctx, a.cfg.Now(), 100)
		if err != nil {
			return err
		}
		st.Deferred += n
		if n < 100 {
			return nil
		}
	}
	return nil
}

// adopt moves what the released PHP server left in its static pools' FIFOs
// (static:queue:<pool>, which resque-go itself never fills) back to
// unassigned, oldest first, one atomic LMOVE a job: a team switching
// servers loses none of the jobs the old one had already routed.
//
// It also adopts the Resque queue named like a static pool's jobs
// (queue:static:queue:<pool>): a tool that knows only Resque's layout puts a
// static job back there, resque-web's retry of its failed entry for one,
// and no worker serves that queue. So are batch jobs put back in the
// Resque queue of their batch's list (queue:committed:<batch id>, any queue
// of the queues set named committed:...): like `resque-go failed retry`,
// they go through routing again, as static jobs of their source and name
// (the batch may be long finished); a payload without them is recorded in
// failed with the reason, as any unroutable static payload.
func (a *Allocator) adopt(ctx context.Context, st *PassStats) error {
	k := a.cfg.Client.Keys()
	type from struct {
		list string
		move func(context.Context, string, string) (bool, error)
	}
	var froms []from
	for _, sp := range a.cfg.Config.StaticPools {
		froms = append(froms, from{k.StaticQueue(sp.Name), a.cfg.Client.MoveOne},
			from{k.Queue(protocol.StaticQueueName(sp.Name)), a.cfg.Client.MoveOneFromHead})
	}
	queues, err := a.cfg.Client.KnownQueues(ctx)
	if err != nil {
		return err
	}
	for _, q := range queues {
		// the name stays in queues: Ruby adds it before it pushes, so a
		// removal here could hide a job pushed just after it
		if strings.HasPrefix(q, protocol.CommittedPrefix) {
			froms = append(froms, from{k.Queue(q), a.cfg.Client.MoveOneFromHead})
		}
	}
	for _, f := range froms {
		for ctx.Err() == nil {
			moved, err := f.move(ctx, f.list, k.Unassigned())
			if err != nil {
				return err
			}
			if !moved {
				break
			}
			st.Adopted++
		}
	}
	return nil
}

func (a *Allocator) args() rdb.AllocArgs {
	return rdb.AllocArgs{Routing: a.routing, Now: a.cfg.Now(), Alive: a.cfg.DeadAfter}
}

func (a *Allocator) static(ctx context.Context, st *PassStats) error {
	for ctx.Err() == nil {
		r, err := a.cfg.Client.AllocateStatic(ctx, a.args(), a.cfg.Chunk)
		if err != nil {
			return err
		}
		st.Static.Moved += r.Moved
		st.Static.Quarantined += r.Quarantined
		st.Static.Failed += r.Failed
		if r.Failed > 0 {
			a.log.Warn().Int("jobs", r.Failed).Msg("static jobs recorded in allocation failures")
		}
		if r.Total() < a.cfg.Chunk {
			return nil
		}
	}
	return ctx.Err()
}

// quarantine records the payloads routing could not read in failed.
func (a *Allocator) quarantine(ctx context.Context, st *PassStats) error {
	c := a.cfg.Client
	for ctx.Err() == nil {
		ps, err := c.Quarantined(ctx, 100)
		if err != nil || len(ps) == 0 {
			return err
		}
		for _, p := range ps {
			why := "mass payload cannot be routed"
			if _, err := protocol.DecodeMassPayload(p); err != nil {
				why = err.Error()
			}
			f := protocol.Failure{FailedAt: a.cfg.Now(), Payload: p, Exception: protocol.ExcBadPayload, Error: why,
				Backtrace: []string{}, Worker: a.cfg.WorkerID, Queue: "unassigned", ProcessedBy: a.cfg.Hostname}
			ok, err := c.FailQuarantined(ctx, p, f.Encode())
			if err != nil {
				return err
			}
			if ok {
				st.BadRecorded++
				a.log.Warn().Str("error", why).Msg("bad mass payload recorded in failed")
			}
		}
	}
	return ctx.Err()
}

func (a *Allocator) batches(ctx context.Context, st *PassStats) error {
	c := a.cfg.Client
	n, err := c.Len(ctx, c.Keys().CommittedList())
	if err != nil {
		return err
	}
	for i := int64(0); i < n && ctx.Err() == nil; i++ {
		r, err := c.AllocateBatch(ctx, a.args())
		if err != nil {
			return err
		}
		if r.Result == rdb.BatchEmpty {
			return nil
		}
		st.Batches[r.Result]++
		ev := a.log.Debug()
		if r.Result == rdb.BatchFailed {
			ev = a.log.Warn().Str("reason", r.Reason)
		}
		ev.Str("batch_id", r.ID).Str("pool", r.Pool).Str("unit", r.Unit).Str("result", string(r.Result)).Msg("batch allocation")
	}
	return ctx.Err()
}

// sweep finishes done batches and hands dead units' batches back, in the
// batch pools of the config.
func (a *Allocator) sweep(ctx context.Context, st *PassStats) error {
	c := a.cfg.Client
	deadBefore := a.cfg.Now().Add(-a.cfg.DeadAfter)
	for _, p := range a.cfg.Config.BatchPools {
		units, err := c.PoolUnits(ctx, p.Name)
		if err != nil {
			return err
		}
		for _, u := range units {
			done, err := c.SweepUnit(ctx, p.Name, u.Unit)
			if err != nil {
				return err
			}
			st.Finished += len(done)
			for _, id := range done {
				a.log.Debug().Str("batch_id", id).Str("pool", p.Name).Str("unit", u.Unit).Msg("batch finished")
			}
		}
		for _, ul := range units {
			if !ul.Beat.Before(deadBefore) {
				continue
			}
			u := ul.Unit
			h, err := c.HandBack(ctx, p.Name, u, deadBefore)
			if err != nil {
				return err
			}
			st.HandedBack += h.Back
			st.Finished += h.Finished
			if h.Back > 0 || h.Gone {
				a.log.Warn().Str("pool", p.Name).Str("unit", u).Int("batches", h.Back).Int("held", h.Held).
					Bool("gone", h.Gone).Msg("dead unit's batches handed back")
			}
		}
	}
	return nil
}
