package delayedio

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
)

// EnqueueAt puts payload in the delayed queue to be pushed to queue at t
// (rounded up to the second, the layout's resolution).
func EnqueueAt(ctx context.Context, c *rdb.Client, queue string, payload []byte, t time.Time) error {
	if err := protocol.CheckDue("due time", t); err != nil {
		return fmt.Errorf("delayed: %w", err)
	}
	item, err := protocol.DelayedItem(payload, queue)
	if err != nil {
		return fmt.Errorf("delayed: %w", err)
	}
	ts := t.Unix()
	if t.Nanosecond() > 0 {
		ts++
	}
	return c.Delay(ctx, item, ts)
}

// EnqueueIn is EnqueueAt for the time d from now (this machine's clock).
func EnqueueIn(ctx context.Context, c *rdb.Client, queue string, payload []byte, d time.Duration) error {
	return EnqueueAt(ctx, c, queue, payload, time.Now().Add(d))
}

// MoverConfig configures a Mover. Zero values mean the documented defaults.
type MoverConfig struct {
	Client *rdb.Client
	// Interval between checks for due buckets; default 1 s.
	Interval time.Duration
	// Hostname and WorkerID fill failed entries of items that cannot be promoted.
	Hostname string
	WorkerID string
	Logger   *zerolog.Logger
	Now      func() time.Time
	// OnPass, when set, is called after every pass (tests wait on it).
	OnPass func(moved int)
	// Elect makes the mover take part in an election: only the holder of
	// the mover lease (protocol.Keys.MoverLease, held by WorkerID) polls the
	// schedule, so a fleet of idle workers costs Redis one poll per Interval
	// in all; the others try for the lease every Lease/2 and take over
	// within that when the holder stops or dies. Promotion stays safe with
	// any number of movers, elected or not (resque-scheduler, other hosts).
	Elect bool
	// Lease is the lease length; default 10 s.
	Lease time.Duration
}

// Mover promotes due delayed items, oldest bucket first, FIFO in a bucket.
type Mover struct {
	cfg    MoverConfig
	log    zerolog.Logger
	runner service.Runner
	stuck  service.OnceIn // buckets left for the next pass, logged once a minute
}

// NewMover returns a mover; Start runs it.
func NewMover(cfg MoverConfig) (*Mover, error) {
	if cfg.Client == nil {
		return nil, errors.New("delayed: MoverConfig.Client is required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	cfg.Now = service.Clock(cfg.Now)
	if cfg.Lease <= 0 {
		cfg.Lease = 10 * time.Second
	}
	if cfg.Elect && cfg.WorkerID == "" {
		return nil, errors.New("delayed: MoverConfig.WorkerID is required to elect a mover")
	}
	cfg.Logger = service.Logger(cfg.Logger)
	return &Mover{cfg: cfg, log: *cfg.Logger}, nil
}

// Start runs the mover until Stop or ctx ends.
func (m *Mover) Start(ctx context.Context) { m.runner.Start(ctx, m.loop) }

// Stop stops the mover and waits for it.
func (m *Mover) Stop() { m.runner.Stop() }

func (m *Mover) loop(ctx context.Context) {
	t := time.NewTicker(m.cfg.Interval)
	defer t.Stop()
	held, next := false, time.Time{}
	defer func() {
		if held {
			callCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, _ = m.cfg.Client.Lease(callCtx, m.cfg.Client.Keys().MoverLease(), m.cfg.WorkerID, m.cfg.Lease, true)
			cancel()
		}
	}()
	for {
		if m.cfg.Elect && !time.Now().Before(next) {
			was := held
			var err error
			if held, err = m.cfg.Client.Lease(ctx, m.cfg.Client.Keys().MoverLease(), m.cfg.WorkerID, m.cfg.Lease, false); err != nil && ctx.Err() == nil {
				m.log.Warn().Err(err).Msg("delayed mover lease failed")
			}
			if held != was {
				m.log.Debug().Bool("elected", held).Msg("delayed mover lease")
			}
			if held {
				next = time.Now().Add(m.cfg.Lease / 3)
			} else {
				next = time.Now().Add(m.cfg.Lease / 2)
			}
		}
		if !m.cfg.Elect || held {
			moved, err := m.Pass(ctx)
			if err != nil && ctx.Err() == nil {
				m.log.Warn().Err(err).Msg("delayed mover pass failed")
			}
			if m.cfg.OnPass != nil {
				m.cfg.OnPass(moved)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Pass promotes every item due now and returns how many it moved: oldest
// bucket first, up to promoteBatch items of a bucket per step (one read,
// one script), each item moved only while it is still the bucket's head.
//
// One bad entry never stops the others. A schedule member that is not a
// time, or a bucket delayed:<ts> of another type, is taken off the
// schedule with a record in failed naming it (the key itself is left as
// it is); a due item whose queue key holds another type is recorded in
// failed with its payload and queue, so `failed retry` pushes it once the
// key is fixed. A bucket that cannot be handled even so (failed itself
// holds another type) is left for the next pass, and the pass goes on
// with the other buckets. Only an error of Redis itself (unreachable,
// loading) ends the pass.
func (m *Mover) Pass(ctx context.Context) (int, error) {
	c := m.cfg.Client
	moved := 0
	skip := map[string]bool{} // buckets left for the next pass
	for ctx.Err() == nil {
		due, err := c.DueDelayed(ctx, m.cfg.Now().Unix(), len(skip)+1)
		if err != nil {
			return moved, err
		}
		i := slices.IndexFunc(due, func(d rdb.ScheduleMember) bool { return !skip[d.Member] })
		if i < 0 {
			return moved, nil
		}
		d := due[i]
		n, err := m.bucket(ctx, d)
		moved += n
		if err != nil {
			if rdb.IsTransient(err) || ctx.Err() != nil {
				return moved, err
			}
			if m.stuck.Due(d.Member, m.cfg.Now()) {
				m.log.Error().Err(err).Str("member", d.Member).Msg("delayed bucket cannot be promoted now; the other buckets go on (logged once a minute)")
			}
			skip[d.Member] = true
		}
	}
	return moved, ctx.Err()
}

// bucket promotes the items of the due bucket d, or sets d aside when it is
// not a time or its key holds another type.
func (m *Mover) bucket(ctx context.Context, d rdb.ScheduleMember) (int, error) {
	c := m.cfg.Client
	if d.Bad {
		return 0, m.setAside(ctx, d, "", fmt.Sprintf("%s member %q (score %v) is not a Unix time in seconds: taken off the schedule",
			c.Keys().DelayedSchedule(), d.Member, d.Score))
	}
	moved := 0
	blocked := map[string]*rdb.KeyTypeError{} // queues holding another type
	for ctx.Err() == nil {
		items, err := c.BucketHeads(ctx, d.TS, promoteBatch)
		if kt := (*rdb.KeyTypeError)(nil); errors.As(err, &kt) {
			return moved, m.setAside(ctx, d, kt.Type, fmt.Sprintf("%s: taken off %s and left as it is; fix it, then ZADD %s %d %d to promote what it holds",
				kt, c.Keys().DelayedSchedule(), c.Keys().DelayedSchedule(), d.TS, d.TS))
		}
		if err != nil {
			return moved, err
		}
		ps := make([]rdb.Promotion, len(items))
		for i, item := range items {
			ps[i] = m.promotion(d.TS, item, blocked)
		}
		n, empty, err := c.PromoteBatch(ctx, d.TS, ps)
		moved += n
		if kt := (*rdb.KeyTypeError)(nil); errors.As(err, &kt) && n < len(ps) && ps[n].Payload != nil {
			// its queue holds another type: that item, and the others for
			// that queue, go to failed on the next step
			m.log.Error().Str("queue", ps[n].Queue).Str("key", kt.Key).Str("type", kt.Type).Int64("due_at", d.TS).
				Msg("delayed items for a queue key of another type are recorded in failed")
			blocked[ps[n].Queue] = kt
			continue
		}
		if err != nil || empty {
			return moved, err
		}
	}
	return moved, ctx.Err()
}

// setAside takes d off the schedule with a failed entry saying why
// (listType: its bucket holds that type).
func (m *Mover) setAside(ctx context.Context, d rdb.ScheduleMember, listType, why string) error {
	f := protocol.Failure{FailedAt: m.cfg.Now(), Exception: protocol.ExcBadSchedule, Error: why,
		Backtrace: []string{}, Worker: m.cfg.WorkerID, ProcessedBy: m.cfg.Hostname}
	if listType != "" {
		f.Exception = protocol.ExcWrongType
	}
	done, err := m.cfg.Client.SetAsideDelayed(ctx, d, listType, f.Encode())
	if err != nil {
		return err
	}
	if done {
		m.log.Error().Str("member", d.Member).Str("error", why).Msg("delayed schedule entry set aside, recorded in failed")
	}
	return nil
}

// promoteBatch is how many items of a bucket one step moves.
const promoteBatch = 100

// promotion is what item becomes: its payload, or, when it cannot be
// promoted, a failed entry (never dropped). An item for a queue in
// blocked (its key holds another type) is recorded with the payload it
// would have been pushed as, so that `failed retry` pushes it to its queue
// once the key is fixed.
func (m *Mover) promotion(ts int64, item []byte, blocked map[string]*rdb.KeyTypeError) rdb.Promotion {
	p, err := promotionOf(item, m.cfg.Now())
	payload, queue := p.Payload, p.Queue
	if err == nil {
		kt := blocked[queue]
		if kt == nil {
			return p
		}
		f := protocol.Failure{FailedAt: m.cfg.Now(), Payload: payload, Exception: protocol.ExcWrongType,
			Error:     fmt.Sprintf("delayed item due at %d cannot be promoted: %s; retry it once the key is fixed", ts, kt),
			Backtrace: []string{}, Worker: m.cfg.WorkerID, Queue: queue, ProcessedBy: m.cfg.Hostname}
		return rdb.Promotion{Item: item, Queue: queue, Failure: f.Encode()}
	}
	f := protocol.Failure{FailedAt: m.cfg.Now(), Payload: item, Exception: protocol.ExcBadPayload,
		Error: "delayed item cannot be promoted: " + err.Error(), Backtrace: []string{},
		Worker: m.cfg.WorkerID, Queue: queue, ProcessedBy: m.cfg.Hostname}
	m.log.Warn().Err(err).Int64("due_at", ts).Msg("delayed item recorded in failed")
	return rdb.Promotion{Item: item, Queue: queue, Failure: f.Encode()}
}

// promotionOf is what item becomes when it is promoted at now, by a mover
// or queued now: its payload and destination. An error says that it
// cannot be promoted (the payload is nil; the queue, when it has one, is
// set).
func promotionOf(item []byte, now time.Time) (rdb.Promotion, error) {
	payload, queue, err := protocol.PromotedPayload(item, now)
	if err != nil {
		return rdb.Promotion{Item: item, Queue: queue}, err
	}
	// no queue: a mass-queue job (resqu-client's enqueueDelayed), routed
	// through unassigned as the v4 server routes it
	return rdb.Promotion{Item: item, Payload: payload, Queue: queue, Unassigned: queue == ""}, nil
}
