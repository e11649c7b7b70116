// Package recovery keeps a process's worker ids alive and recovers the jobs
// of dead ones, as one service: the heartbeat writes every id of the process
// in one step each HeartbeatInterval, and the pruner finds dead workers (a
// same-host pid that is gone, a heartbeat too old) every PruneInterval
// (and within a second of the death of a same-host worker it saw alive),
// unregisters them and requeues the job each held, or records it as failed
// once it was recovered MaxRecoveries times. The runtime starts one for its
// slots; the pool manager runs single passes as an observer with no ids.
package recovery

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
)

// Config configures a Service. Zero values mean the documented defaults.
type Config struct {
	// Client is the Redis client (required).
	Client *rdb.Client
	// IDs are the worker ids this process holds (its slots): the heartbeat
	// writes them and the pruner never judges them. None for an observer,
	// which only prunes.
	IDs []string
	// Hostname defaults to os.Hostname(); PID to os.Getpid(). They judge
	// same-host ids: one whose pid is gone, or is ours but not in IDs,
	// belongs to a dead process.
	Hostname string
	PID      int
	// HeartbeatInterval defaults to 5 s; PruneInterval to 4 heartbeats.
	HeartbeatInterval time.Duration
	PruneInterval     time.Duration
	// MaxRecoveries is how often a dead worker's job is requeued before it is
	// recorded as failed (a poison job must not loop); 0 means 3, a negative
	// value never requeues. RubyPrune always records it as failed, as Ruby
	// Resque does.
	MaxRecoveries int
	RubyPrune     bool
	// Limits are the caps this process's slots honour (docs/limits.md): a
	// recovered job's slots of them are freed at once (those of other caps
	// end with their lease).
	Limits []protocol.Limit
	// Events are the events settings of the workers whose jobs it
	// recovers, for an observer whose Client is not theirs (resque-go
	// pool's manager): when on, a recovered job's event (requeued,
	// failed) is written with them. A worker's own Client carries its
	// settings already.
	Events rdb.EventsConfig
	// Logger defaults to a disabled logger.
	Logger *zerolog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

func (c *Config) setDefaults() error {
	if c.Client == nil {
		return errors.New("recovery: Config.Client is required")
	}
	if c.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("recovery: hostname: %w", err)
		}
		c.Hostname = h
	}
	if c.PID == 0 {
		c.PID = os.Getpid()
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second
	}
	if c.PruneInterval <= 0 {
		c.PruneInterval = 4 * c.HeartbeatInterval
	}
	if c.MaxRecoveries == 0 {
		c.MaxRecoveries = 3
	}
	if c.RubyPrune || c.MaxRecoveries < 0 {
		c.MaxRecoveries = 0
	}
	c.Logger = service.Logger(c.Logger)
	c.Now = service.Clock(c.Now)
	return nil
}

// Service is the heartbeat and the pruner of one process.
type Service struct {
	cfg    Config
	log    zerolog.Logger
	client *rdb.Client
	own    map[string]bool
	// lockOwner is written to the shared pruning lock, as Ruby writes its
	// worker id there.
	lockOwner string

	heartbeat, pruner service.Runner

	mu      sync.Mutex
	watched []int // pids of same-host workers the last pass saw alive

	// lastBeat is the Unix nanoseconds of the last heartbeat written (or of
	// Start): readiness checks that it is recent.
	lastBeat atomic.Int64
}

// New validates cfg and returns a Service ready to Start (or to Prune).
func New(cfg Config) (*Service, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, log: *cfg.Logger, client: cfg.Client, own: make(map[string]bool, len(cfg.IDs)),
		lockOwner: cfg.Hostname + ":" + strconv.Itoa(cfg.PID) + ":prune"}
	for _, id := range cfg.IDs {
		s.own[id] = true
	}
	if len(cfg.IDs) > 0 {
		s.lockOwner = cfg.IDs[0]
	}
	return s, nil
}

// Start runs the heartbeat (when the process holds ids) and the pruner, the
// first pass at once, until Stop or the end of ctx. A second Start while
// they run does nothing.
func (s *Service) Start(ctx context.Context) {
	if len(s.cfg.IDs) > 0 {
		s.lastBeat.CompareAndSwap(0, s.cfg.Now().UnixNano())
		s.heartbeat.Start(ctx, s.heartbeatLoop)
	}
	s.pruner.Start(ctx, s.pruneLoop)
}

// Stop stops the heartbeat and the pruner and waits for them.
func (s *Service) Stop() {
	s.heartbeat.Stop()
	s.pruner.Stop()
}

// LastHeartbeat is when the heartbeat of the process's ids was last
// written (Start counts as one); zero before Start or without ids.
func (s *Service) LastHeartbeat() time.Time {
	n := s.lastBeat.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
