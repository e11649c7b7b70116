package massqueue

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
)

// Status is the state of every mass-queue pool (`mass status`). Field
// names are a published contract (--json): add fields, never rename them.
type Status struct {
	// Unassigned static jobs and Committed batches wait for an allocator.
	Unassigned int64 `json:"unassigned"`
	Committed  int64 `json:"committed"`
	Failures   int   `json:"allocation_failures"`
	// Paused are the paused sources (mass pause), by source.
	Paused []string       `json:"paused_sources"`
	Static []StaticStatus `json:"static_pools"`
	Batch  []BatchStatus  `json:"batch_pools"`
}

// StaticStatus is a static pool.
type StaticStatus struct {
	Pool string `json:"pool"`
	// Sources are the sources with jobs waiting, by source.
	Sources []SourceWaiting `json:"sources"`
	Waiting int64           `json:"waiting"`
	// Ring is how many sources take turns; Parked the sources at their limit.
	Ring   int      `json:"ring"`
	Parked []string `json:"parked"`
}

// SourceWaiting is a source's queued static jobs in a pool.
type SourceWaiting struct {
	Source  string `json:"source"`
	Waiting int64  `json:"waiting"`
}

// BatchStatus is a batch pool.
type BatchStatus struct {
	Pool  string       `json:"pool"`
	Units []UnitStatus `json:"units"`
	// Sources are the sources with an active batch or a backlog.
	Sources []SourceBatches `json:"sources"`
}

// UnitStatus is a unit of a batch pool.
type UnitStatus struct {
	Unit     string        `json:"unit"`
	Alive    bool          `json:"alive"`
	LastBeat time.Time     `json:"last_beat,omitzero"`
	Batches  []BatchRemain `json:"batches"`
}

// BatchRemain is a batch and its jobs left (not counting running ones).
type BatchRemain struct {
	ID        string `json:"id"`
	Remaining int64  `json:"remaining"`
}

// SourceBatches is a source's active batch (on Unit) and backlog.
type SourceBatches struct {
	Source  string   `json:"source"`
	Unit    string   `json:"unit,omitempty"`
	Active  string   `json:"active,omitempty"`
	Backlog []string `json:"backlog"`
	// Paused: the source is paused. Parked: its active batch is off
	// Unit's list (not served, and not among the unit's batches) until it
	// resumes. Remaining is the active batch's jobs left (not counting
	// running ones).
	Paused    bool  `json:"paused,omitempty"`
	Parked    bool  `json:"parked,omitempty"`
	Remaining int64 `json:"remaining,omitempty"`
}

// GetStatus reads the status of the pools of cfg (nil: none) and of every
// pool Redis knows. A unit is alive when it beat within deadAfter of now
// (default 30 s).
func GetStatus(ctx context.Context, c *rdb.Client, cfg *Config, now time.Time, deadAfter time.Duration) (Status, error) {
	if deadAfter <= 0 {
		deadAfter = 30 * time.Second
	}
	k := c.Keys()
	var st Status
	lens, _, err := c.BatchRead(ctx, []string{k.Unassigned(), k.CommittedList(), k.AllocationFailures()}, nil)
	if err != nil {
		return st, fmt.Errorf("massqueue: %w", err)
	}
	st.Unassigned, st.Committed, st.Failures = lens[0], lens[1], int(lens[2])
	settings, err := Settings(ctx, c)
	if err != nil {
		return st, err
	}
	paused := map[string]bool{}
	st.Paused = []string{}
	for _, s := range settings {
		if s.Paused {
			paused[s.Source] = true
			st.Paused = append(st.Paused, s.Source)
		}
	}
	staticPools, err := c.StaticPoolNames(ctx)
	if err != nil {
		return st, fmt.Errorf("massqueue: %w", err)
	}
	batchPools, err := c.BatchPoolNames(ctx)
	if err != nil {
		return st, fmt.Errorf("massqueue: %w", err)
	}
	if cfg != nil {
		for _, p := range cfg.StaticPools {
			staticPools = append(staticPools, p.Name)
		}
		for _, p := range cfg.BatchPools {
			batchPools = append(batchPools, p.Name)
		}
	}
	for _, p := range uniqueSorted(staticPools) {
		s, err := c.ReadStaticPool(ctx, p)
		if err != nil {
			return st, fmt.Errorf("massqueue: %w", err)
		}
		ss := StaticStatus{Pool: p, Ring: len(s.Ring), Parked: s.Parked, Sources: []SourceWaiting{}}
		if ss.Parked == nil {
			ss.Parked = []string{}
		}
		for _, src := range sortedKeys(s.Waiting) {
			ss.Sources = append(ss.Sources, SourceWaiting{Source: src, Waiting: s.Waiting[src]})
			ss.Waiting += s.Waiting[src]
		}
		st.Static = append(st.Static, ss)
	}
	for _, p := range uniqueSorted(batchPools) {
		b, err := c.ReadBatchPool(ctx, p)
		if err != nil {
			return st, fmt.Errorf("massqueue: %w", err)
		}
		bs := BatchStatus{Pool: p, Units: []UnitStatus{}, Sources: []SourceBatches{}}
		units := b.Units
		sort.Slice(units, func(i, j int) bool { return units[i].Unit < units[j].Unit })
		for _, u := range units {
			us := UnitStatus{Unit: u.Unit, LastBeat: u.Beat, Alive: !u.Beat.IsZero() && now.Sub(u.Beat) <= deadAfter, Batches: []BatchRemain{}}
			ids := b.Batches[u.Unit]
			for i := len(ids) - 1; i >= 0; i-- { // oldest first
				us.Batches = append(us.Batches, BatchRemain{ID: ids[i], Remaining: b.Remaining[ids[i]]})
			}
			bs.Units = append(bs.Units, us)
		}
		sources := map[string]bool{}
		for s := range b.Active {
			sources[s] = true
		}
		for s := range b.Backlog {
			sources[s] = true
		}
		for s := range b.Parked {
			sources[s] = true
		}
		for _, s := range sortedKeys(sources) {
			sb := SourceBatches{Source: s, Unit: b.Active[s], Backlog: b.Backlog[s], Paused: paused[s]}
			if sb.Backlog == nil {
				sb.Backlog = []string{}
			}
			for _, id := range b.Batches[sb.Unit] {
				if src, _, _, err := parseBatch(id); err == nil && src == s {
					sb.Active = id
				}
			}
			if id, ok := b.Parked[s]; ok {
				sb.Active, sb.Parked = id, true
			}
			if sb.Active != "" {
				sb.Remaining = b.Remaining[sb.Active]
			}
			bs.Sources = append(bs.Sources, sb)
		}
		st.Batch = append(st.Batch, bs)
	}
	return st, nil
}

func uniqueSorted(xs []string) []string {
	set := map[string]bool{}
	for _, x := range xs {
		set[x] = true
	}
	return sortedKeys(set)
}
