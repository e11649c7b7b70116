package uniqueio

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
)

// SweeperConfig configures a Sweeper. Zero values mean the documented
// defaults.
type SweeperConfig struct {
	Client *rdb.Client
	// Owner identifies this process in the sweep lease (a worker id).
	Owner string
	// Interval between sweeps; default 1 minute. Only the holder of the
	// sweep lease (protocol.Keys.UniqueSweepLease) sweeps: a fleet costs
	// Redis one lease call per process and interval.
	Interval time.Duration
	// Grace is how long a running state must stay without a holder before
	// it is cleared; default 5 minutes.
	Grace  time.Duration
	Logger *zerolog.Logger
	Now    func() time.Time
	// OnPass, when set, is called after every sweep with how many uids it
	// freed (tests wait on it).
	OnPass func(freed int)
}

// Sweeper frees uids whose running state has no holder: no registered
// worker (Resque's registry or resque-go's) holds a job with that uid in
// its worker:<id> record, on two sweeps at least Grace apart, the state
// unchanged. resque-go's own workers never leave such a state (the claim
// sets it with the record, recovery of a dead worker resets it); it comes
// from other runtimes: a killed resque-v3 PHP worker (its known failure: a
// uid blocked for ever), or Ruby Resque's prune of a dead resque-go worker
// (it records the job as failed but knows nothing of unique states). A
// parked deferred job of such a uid is released, not dropped.
type Sweeper struct {
	cfg      SweeperConfig
	log      zerolog.Logger
	runner   service.Runner
	suspects map[string]time.Time // uid -> first seen running with no holder
}

// NewSweeper returns a sweeper; Start runs it.
func NewSweeper(cfg SweeperConfig) (*Sweeper, error) {
	if cfg.Client == nil {
		return nil, errors.New("unique: SweeperConfig.Client is required")
	}
	if cfg.Owner == "" {
		return nil, errors.New("unique: SweeperConfig.Owner is required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Minute
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 5 * time.Minute
	}
	cfg.Now = service.Clock(cfg.Now)
	cfg.Logger = service.Logger(cfg.Logger)
	return &Sweeper{cfg: cfg, log: *cfg.Logger, suspects: map[string]time.Time{}}, nil
}

// Start runs the sweeper until Stop or ctx ends.
func (s *Sweeper) Start(ctx context.Context) { s.runner.Start(ctx, s.loop) }

// Stop stops the sweeper and waits for it.
func (s *Sweeper) Stop() { s.runner.Stop() }

func (s *Sweeper) loop(ctx context.Context) {
	key := s.cfg.Client.Keys().UniqueSweepLease()
	for {
		held, err := s.cfg.Client.Lease(ctx, key, s.cfg.Owner, 2*s.cfg.Interval, false)
		if err != nil && ctx.Err() == nil {
			s.log.Warn().Err(err).Msg("unique sweep lease failed")
		}
		if held {
			freed, err := s.Pass(ctx)
			if err != nil && ctx.Err() == nil {
				s.log.Warn().Err(err).Msg("unique sweep failed")
			}
			if s.cfg.OnPass != nil {
				s.cfg.OnPass(freed)
			}
		} else {
			clear(s.suspects) // another process sweeps; start afresh if we take over
		}
		if !service.Sleep(ctx, s.cfg.Interval) {
			if held {
				callCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, _ = s.cfg.Client.Lease(callCtx, key, s.cfg.Owner, 0, true)
				cancel()
			}
			return
		}
	}
}

// Pass sweeps once and returns how many uids it freed. A uid it cannot
// read or clear (a key of another type, written by hand) is skipped and
// named in the error, which joins every such uid's: the others are swept
// all the same.
func (s *Sweeper) Pass(ctx context.Context) (int, error) {
	c := s.cfg.Client
	uids, err := c.UniqueUIDs(ctx)
	if err != nil {
		return 0, err
	}
	infos, err := c.UniqueInfos(ctx, uids)
	if err != nil {
		return 0, err
	}
	var skipped []error
	running := map[string]string{}
	for _, in := range infos {
		if in.Err != nil {
			skipped = append(skipped, in.Err)
			continue
		}
		if protocol.IsRunningState(in.State) {
			running[in.UID] = in.State
		}
	}
	if len(running) == 0 {
		clear(s.suspects)
		return 0, errors.Join(skipped...)
	}
	// read after the states: a job that started since is in the records
	records, err := c.RunningRecords(ctx)
	if err != nil {
		return 0, errors.Join(append(skipped, err)...)
	}
	for _, rec := range records {
		r, err := protocol.ParseWorkerRecord(rec)
		if err != nil {
			continue
		}
		if u, ok, _ := protocol.ParseUnique(r.Payload); ok {
			delete(running, u.UID)
		}
	}
	now := s.cfg.Now()
	for uid := range s.suspects {
		if _, still := running[uid]; !still {
			delete(s.suspects, uid)
		}
	}
	freed := 0
	for uid, state := range running {
		first, seen := s.suspects[uid]
		if !seen {
			s.suspects[uid] = now
			continue
		}
		if now.Sub(first) < s.cfg.Grace {
			continue
		}
		res, err := c.UniqueClear(ctx, uid, state, "resque-go unique sweep", now)
		if err != nil {
			if !rdb.IsReplyError(err) {
				return freed, errors.Join(append(skipped, err)...) // the connection: the next pass goes on
			}
			// this uid's keys: the others are still swept
			skipped = append(skipped, err)
			continue
		}
		delete(s.suspects, uid)
		if res == rdb.ClearCleared || res == rdb.ClearReleased {
			freed++
			s.log.Warn().Str("unique_id", uid).Bool("deferred_released", res == rdb.ClearReleased).
				Dur("without_holder", now.Sub(first)).Msg("freed a unique id whose running job has no live worker")
		}
	}
	return freed, errors.Join(skipped...)
}
