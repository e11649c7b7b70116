package statsio

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
	"github.com/resque-go/resque-go/stats"
)

// recordTTLIntervals is how many refresh intervals a record outlives its last
// refresh: a dead process's record expires on its own after that.
const recordTTLIntervals = 3

// removeTimeout bounds the DEL at Stop, so a stop with Redis down does not hang.
const removeTimeout = 2 * time.Second

// PublisherConfig configures a Publisher. Zero values mean the documented
// defaults.
type PublisherConfig struct {
	// Client is the Redis client (required).
	Client *rdb.Client
	// Hostname defaults to os.Hostname(); it must be the host part of the
	// process's worker ids so that stats can join the two.
	Hostname string
	// PID defaults to os.Getpid(). Process metrics are read for this pid.
	PID int
	// Interval between refreshes; default 5 s. The record expires after 3.
	Interval time.Duration
	// Slots reports busy and total job slots; default 0 of len(WorkerIDs).
	Slots func() (busy, total int)
	// WorkerIDs are the process's worker ids (runtime.Worker.IDs()).
	WorkerIDs []string
	// WrongTypeQueues, when set, reports the queues the process's claims
	// skipped lately because their key holds another type
	// (runtime.Worker.WrongTypeQueues): the record's wrong_type_queues.
	WrongTypeQueues func() []string
	// Paused, when set, reports whether the process takes no new job
	// (runtime.Worker.Paused): the record's paused.
	Paused func() bool
	// Refresh, when set, makes the publisher write the record at once
	// whenever it receives (a pause or resume: lists show the new state
	// without waiting for the next interval).
	Refresh <-chan struct{}
	// Logger defaults to a disabled logger.
	Logger *zerolog.Logger
	// Now is the clock for started_at and updated_at; default time.Now.
	// CPU rates are measured on the monotonic clock regardless.
	Now func() time.Time
	// NoHistory leaves the processed/failed history alone. By default each
	// refresh also samples it (rdb.Client.SampleHistory).
	NoHistory bool
	// OnHistory, when set, is called after every history sample (tests).
	OnHistory func(res rdb.HistorySample, err error)
	// OnPublish, when set, is called after every write attempt with the
	// record and its error (tests wait on it).
	OnPublish func(rec stats.Record, err error)
}

func (c *PublisherConfig) setDefaults() error {
	if c.Client == nil {
		return errors.New("stats: PublisherConfig.Client is required")
	}
	if c.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("stats: hostname: %w", err)
		}
		c.Hostname = h
	}
	if c.PID <= 0 {
		c.PID = os.Getpid()
	}
	if c.Interval <= 0 {
		c.Interval = 5 * time.Second
	}
	c.WorkerIDs = append([]string{}, c.WorkerIDs...)
	if c.Slots == nil {
		n := len(c.WorkerIDs)
		c.Slots = func() (int, int) { return 0, n }
	}
	c.Logger = service.Logger(c.Logger)
	c.Now = service.Clock(c.Now)
	return nil
}

// Publisher keeps this process's runtime record in Redis: written at Start,
// refreshed every Interval with a TTL of 3 intervals, deleted at Stop.
type Publisher struct {
	cfg    PublisherConfig
	log    zerolog.Logger
	runner service.Runner
}

// NewPublisher validates cfg; Start runs the publisher.
func NewPublisher(cfg PublisherConfig) (*Publisher, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	log := cfg.Logger.With().Str("host", cfg.Hostname).Int("pid", cfg.PID).Logger()
	return &Publisher{cfg: cfg, log: log}, nil
}

// Start writes the record and keeps refreshing it until Stop or ctx ends;
// then the record is deleted. A second Start while running does nothing.
func (p *Publisher) Start(ctx context.Context) { p.runner.Start(ctx, p.loop) }

// Stop stops refreshing, deletes the record and returns when both are done.
func (p *Publisher) Stop() { p.runner.Stop() }

func (p *Publisher) loop(ctx context.Context) {
	started := p.cfg.Now()
	smp := newSampler(p.cfg.PID, &p.log)
	t := time.NewTicker(p.cfg.Interval)
	defer t.Stop()
	for {
		p.publish(ctx, smp, started)
		select {
		case <-ctx.Done():
			p.remove()
			return
		case <-t.C:
		case <-p.cfg.Refresh:
		}
	}
}

// publish samples the metrics and writes the record, bounded by one interval
// (at least a second) so a hung Redis cannot stall the loop. A stop does not
// cut the write short: an abandoned SET could reach Redis after remove's DEL.
func (p *Publisher) publish(ctx context.Context, smp *sampler, started time.Time) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(p.cfg.Interval, time.Second))
	defer cancel()
	rec := p.record(ctx, smp, started)
	val, err := protocol.EncodeProcessRecord(protocol.ProcessRecord(rec))
	if err == nil {
		err = p.cfg.Client.SetProcessRecord(ctx, p.cfg.Hostname, p.cfg.PID, val, recordTTLIntervals*p.cfg.Interval)
	}
	if err != nil && ctx.Err() == nil {
		p.log.Warn().Err(err).Msg("runtime record not written")
	}
	p.sampleHistory(ctx)
	if p.cfg.OnPublish != nil {
		p.cfg.OnPublish(rec, err)
	}
}

func (p *Publisher) record(ctx context.Context, smp *sampler, started time.Time) stats.Record {
	busy, total := p.cfg.Slots()
	m := smp.sample(ctx)
	var wrong []string
	if p.cfg.WrongTypeQueues != nil {
		wrong = p.cfg.WrongTypeQueues()
	}
	paused := p.cfg.Paused != nil && p.cfg.Paused()
	return stats.Record{
		PID: p.cfg.PID, Host: p.cfg.Hostname,
		StartedAt: started, UpdatedAt: p.cfg.Now(),
		HeartbeatIntervalS: p.cfg.Interval.Seconds(),
		WorkerIDs:          p.cfg.WorkerIDs,
		SlotsBusy:          busy, SlotsTotal: total,
		RSSBytes: m.rss, CPUPercent: round2(m.cpu), Goroutines: m.goroutines,
		HostCPUPercent: round2(m.hostCPU), MemUsedPercent: round2(m.memUsed),
		Load1: round2(m.load1), Load5: round2(m.load5), Load15: round2(m.load15),
		WrongTypeQueues: wrong, Paused: paused,
	}
}

// sampleHistory adds the growth of stat:processed and stat:failed to the
// history (docs/protocol.md#history): one script call per refresh, which
// returns at once when another process sampled within the last interval,
// so the history costs Redis the same with one process or a hundred.
func (p *Publisher) sampleHistory(ctx context.Context) {
	if p.cfg.NoHistory {
		return
	}
	res, err := p.cfg.Client.SampleHistory(ctx, p.cfg.Now(), p.cfg.Interval)
	if err != nil && ctx.Err() == nil {
		p.log.Warn().Err(err).Msg("history not sampled")
	}
	if p.cfg.OnHistory != nil {
		p.cfg.OnHistory(res, err)
	}
}

// remove deletes the record on its own short context: the loop's is done.
func (p *Publisher) remove() {
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	if err := p.cfg.Client.DeleteProcessRecord(ctx, p.cfg.Hostname, p.cfg.PID); err != nil {
		p.log.Warn().Err(err).Msg("runtime record not deleted; it expires on its own")
	}
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }
