package poolrun

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

// massServices are what a manager with a mass-queue section runs besides
// its children: an allocator (one in every manager; each step is one
// script, so any number may run) and the heartbeats of this node's static
// pools and units. A reload replaces the allocator and the heartbeat's
// list; a unit no longer wanted stops beating, its child finishes its jobs
// (QUIT), and the allocators hand its batches back once it is dead.
type massServices struct {
	client *rdb.Client
	log    *zerolog.Logger
	host   string

	mu    sync.Mutex
	alloc *massio.Allocator
	beat  *massio.Heartbeat
	units map[[2]string]bool // pool, unit: the units this node serves
}

// apply starts (or restarts) the services for cfg; nil cfg stops them.
func (m *massServices) apply(cfg *massqueue.Config) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.alloc != nil {
		m.alloc.Stop()
		m.alloc = nil
	}
	if cfg == nil {
		if m.beat != nil {
			m.beat.Stop()
			m.beat = nil
		}
		return nil
	}
	alloc, err := massio.NewAllocator(massio.AllocatorConfig{Client: m.client, Config: cfg, Hostname: m.host, Logger: m.log})
	if err != nil {
		return err
	}
	if m.beat == nil {
		if m.beat, err = massio.NewHeartbeat(massio.HeartbeatConfig{Client: m.client, Logger: m.log}); err != nil {
			return err
		}
		defer m.beat.Start(context.Background())
	}
	var static []string
	for _, sp := range cfg.StaticPools {
		if sp.WorkerCount > 0 {
			static = append(static, sp.Name)
		}
	}
	units := map[string][]string{}
	for _, bp := range cfg.BatchPools {
		for k := range bp.UnitCount {
			if bp.WorkersPerUnit > 0 {
				units[bp.Name] = append(units[bp.Name], cfg.UnitID(k))
			}
		}
	}
	m.beat.Set(static, units)
	// a unit this node no longer serves (a reload that shrank its pool) is
	// retired at once: its child got QUIT and claims nothing more, and an
	// allocator hands a batch back only once no worker holds one of its jobs
	now := map[[2]string]bool{}
	for pool, us := range units {
		for _, u := range us {
			now[[2]string{pool, u}] = true
		}
	}
	for pu := range m.units {
		if !now[pu] {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := massio.RetireUnit(ctx, m.client, pu[0], pu[1]); err != nil {
				m.log.Warn().Err(err).Str("pool", pu[0]).Str("unit", pu[1]).Msg("unit not retired; it is handed back once its heartbeat is old")
			} else {
				m.log.Info().Str("pool", pu[0]).Str("unit", pu[1]).Msg("unit retired: its batches go back to committed")
			}
			cancel()
		}
	}
	m.units = now
	// the units beat before the allocator's first pass: else its first
	// batches could all go to whichever unit beat first (or wait for one)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if err := m.beat.Beat(ctx); err != nil {
		m.log.Warn().Err(err).Msg("mass unit heartbeat failed")
	}
	cancel()
	alloc.Start(context.Background())
	m.alloc = alloc
	return nil
}

func (m *massServices) stop() { _ = m.apply(nil) }
