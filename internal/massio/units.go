package massio

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
)

// HeartbeatConfig configures a Heartbeat. Zero values mean the documented
// defaults.
type HeartbeatConfig struct {
	Client *rdb.Client
	// Interval between beats; default 5 s. It must be well under the
	// allocators' DeadAfter (default 30 s).
	Interval time.Duration
	Logger   *zerolog.Logger
	Now      func() time.Time
}

// Heartbeat keeps this node's units (and static pools) alive: every
// Interval it writes each unit's last beat (pool:<pool>:heartbeats, unit
// -> Unix ms; a unit seen the first time joins the pool's load index) and
// each static pool's (static:pools). A unit silent for an allocator's
// DeadAfter is dead: its batches are handed back.
type Heartbeat struct {
	cfg    HeartbeatConfig
	log    zerolog.Logger
	runner service.Runner

	mu     sync.Mutex
	static []string
	units  map[string][]string
}

// NewHeartbeat returns a heartbeat with nothing to beat for; Set says what.
func NewHeartbeat(cfg HeartbeatConfig) (*Heartbeat, error) {
	if cfg.Client == nil {
		return nil, errors.New("massqueue: HeartbeatConfig.Client is required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 5 * time.Second
	}
	cfg.Now = service.Clock(cfg.Now)
	cfg.Logger = service.Logger(cfg.Logger)
	return &Heartbeat{cfg: cfg, log: *cfg.Logger, units: map[string][]string{}}, nil
}

// Set replaces what this node serves: static pool names and, per batch
// pool, unit ids. A unit left out stops beating (retire it with
// RetireUnit once its workers stopped, or it is handed back after
// DeadAfter).
func (h *Heartbeat) Set(static []string, units map[string][]string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.static = append([]string(nil), static...)
	h.units = make(map[string][]string, len(units))
	for p, us := range units {
		h.units[p] = append([]string(nil), us...)
	}
}

// Start beats until Stop or ctx ends (a first beat at once).
func (h *Heartbeat) Start(ctx context.Context) { h.runner.Start(ctx, h.loop) }

// Stop stops beating and waits.
func (h *Heartbeat) Stop() { h.runner.Stop() }

func (h *Heartbeat) loop(ctx context.Context) {
	for {
		if err := h.Beat(ctx); err != nil && ctx.Err() == nil {
			h.log.Warn().Err(err).Msg("mass unit heartbeat failed")
		}
		if !service.Sleep(ctx, h.cfg.Interval) {
			return
		}
	}
}

// Beat writes one beat for everything Set named.
func (h *Heartbeat) Beat(ctx context.Context) error {
	h.mu.Lock()
	static, units := h.static, h.units
	h.mu.Unlock()
	now := h.cfg.Now()
	for _, p := range static {
		if err := h.cfg.Client.StaticPoolBeat(ctx, p, now); err != nil {
			return err
		}
	}
	pools := make([]string, 0, len(units))
	for p := range units {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	for _, p := range pools {
		for _, u := range units[p] {
			if err := h.cfg.Client.UnitBeat(ctx, p, u, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// RetireUnit makes a unit dead at once (its heartbeat removed): the next
// allocator pass hands its batches back. Call it after the unit's workers
// stopped (a pool that shrank).
func RetireUnit(ctx context.Context, c *rdb.Client, pool, unit string) error {
	if err := c.RetireUnit(ctx, pool, unit); err != nil {
		return fmt.Errorf("massqueue: %w", err)
	}
	return nil
}
