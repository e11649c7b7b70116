package massio

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

// GetStatus reads the status of the pools of cfg (nil: none) and of every
// pool Redis knows. A unit is alive when it beat within deadAfter of now
// (default 30 s).
func GetStatus(ctx context.Context, c *rdb.Client, cfg *massqueue.Config, now time.Time, deadAfter time.Duration) (massqueue.Status, error) {
	pools, err := FindPools(ctx, c)
	if err != nil {
		return massqueue.Status{}, err
	}
	return GetStatusOf(ctx, c, pools, cfg, now, deadAfter)
}

// Pools are the pools a status reads, by name.
type Pools struct {
	Static, Batch []string
}

// FindPools finds the pools Redis knows: the registered static pools and
// those with a ring or state key, and the batch pools with units (SCANs of
// the keyspace, whose cost grows with it: a caller that asks often keeps
// what it found for a while).
func FindPools(ctx context.Context, c *rdb.Client) (Pools, error) {
	static, err := c.StaticPoolNames(ctx)
	if err != nil {
		return Pools{}, fmt.Errorf("massqueue: %w", err)
	}
	batch, err := c.BatchPoolNames(ctx)
	if err != nil {
		return Pools{}, fmt.Errorf("massqueue: %w", err)
	}
	return Pools{Static: static, Batch: batch}, nil
}

// GetStatusOf is GetStatus of pools (and those of cfg) without looking for
// others.
func GetStatusOf(ctx context.Context, c *rdb.Client, pools Pools, cfg *massqueue.Config, now time.Time, deadAfter time.Duration) (massqueue.Status, error) {
	if deadAfter <= 0 {
		deadAfter = 30 * time.Second
	}
	k := c.Keys()
	var st massqueue.Status
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
	staticPools, batchPools := slices.Clone(pools.Static), slices.Clone(pools.Batch)
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
		ss := massqueue.StaticStatus{Pool: p, Ring: len(s.Ring), Parked: s.Parked, Sources: []massqueue.SourceWaiting{}}
		if ss.Parked == nil {
			ss.Parked = []string{}
		}
		for _, src := range sortedKeys(s.Waiting) {
			ss.Sources = append(ss.Sources, massqueue.SourceWaiting{Source: src, Waiting: s.Waiting[src]})
			ss.Waiting += s.Waiting[src]
		}
		st.Static = append(st.Static, ss)
	}
	for _, p := range uniqueSorted(batchPools) {
		b, err := c.ReadBatchPool(ctx, p)
		if err != nil {
			return st, fmt.Errorf("massqueue: %w", err)
		}
		bs := massqueue.BatchStatus{Pool: p, Units: []massqueue.UnitStatus{}, Sources: []massqueue.SourceBatches{}}
		units := b.Units
		sort.Slice(units, func(i, j int) bool { return units[i].Unit < units[j].Unit })
		for _, u := range units {
			us := massqueue.UnitStatus{Unit: u.Unit, LastBeat: u.Beat, Alive: !u.Beat.IsZero() && now.Sub(u.Beat) <= deadAfter, Batches: []massqueue.BatchRemain{}}
			ids := b.Batches[u.Unit]
			for i := len(ids) - 1; i >= 0; i-- { // oldest first
				us.Batches = append(us.Batches, massqueue.BatchRemain{ID: ids[i], Remaining: b.Remaining[ids[i]]})
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
			sb := massqueue.SourceBatches{Source: s, Unit: b.Active[s], Backlog: b.Backlog[s], Paused: paused[s]}
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
