package rdb

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// BatchPoolNames returns the batch pools that have units registered
// (pool:<pool>:unit_queues exists).
func (c *Client) BatchPoolNames(ctx context.Context) ([]string, error) {
	pat := c.keys.PoolUnitQueues("*")
	keys, err := c.ScanKeys(ctx, pat)
	if err != nil {
		return nil, err
	}
	prefix, suffix, _ := strings.Cut(pat, "*")
	var out []string
	for _, k := range keys {
		p := strings.TrimSuffix(strings.TrimPrefix(k, prefix), suffix)
		if p != "" && !strings.Contains(p, ":") {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// BatchPoolState is what Redis holds about a batch pool.
type BatchPoolState struct {
	Units []UnitLoad
	// Batches is each unit's batch ids, in the unit list's order.
	Batches map[string][]string
	// Remaining is each listed batch's jobs left (LLEN committed:<id>).
	Remaining map[string]int64
	// Active is pool:<pool>: source -> unit.
	Active map[string]string
	// Backlog is each source's waiting batch ids, oldest first.
	Backlog map[string][]string
	// Parked is batch:paused:<pool>: source -> the batch id parked off its
	// unit (Active) while the source is paused; Remaining has their jobs
	// left too.
	Parked map[string]string
}

// ReadBatchPool reads a batch pool's state (not in one step: for display).
func (c *Client) ReadBatchPool(ctx context.Context, pool string) (BatchPoolState, error) {
	k := c.keys
	st := BatchPoolState{Batches: map[string][]string{}, Remaining: map[string]int64{}, Backlog: map[string][]string{}}
	var err error
	if st.Units, err = c.PoolUnits(ctx, pool); err != nil {
		return st, err
	}
	if st.Active, err = redis.StringMap(c.do(ctx, "HGETALL", k.PoolSources(pool))); err != nil {
		return st, fmt.Errorf("rdb: pool %s: %w", pool, err)
	}
	if st.Parked, err = redis.StringMap(c.do(ctx, "HGETALL", k.BatchPaused(pool))); err != nil {
		return st, fmt.Errorf("rdb: pool %s: %w", pool, err)
	}
	var lists []string
	for _, u := range st.Units {
		ids, err := redis.Strings(c.do(ctx, "LRANGE", k.UnitQueues(pool, u.Unit), 0, -1))
		if err != nil {
			return st, fmt.Errorf("rdb: pool %s: %w", pool, err)
		}
		st.Batches[u.Unit] = ids
		for _, id := range ids {
			lists = append(lists, k.Committed(id))
		}
	}
	parked := make([]string, 0, len(st.Parked))
	for _, id := range st.Parked {
		parked = append(parked, id)
		lists = append(lists, k.Committed(id))
	}
	lens, _, err := c.BatchRead(ctx, lists, nil)
	if err != nil {
		return st, err
	}
	i := 0
	for _, u := range st.Units {
		for _, id := range st.Batches[u.Unit] {
			st.Remaining[id] = lens[i]
			i++
		}
	}
	for _, id := range parked {
		st.Remaining[id] = lens[i]
		i++
	}
	prefix := k.BacklogPrefix(pool)
	keys, err := c.ScanKeys(ctx, prefix+"*")
	if err != nil {
		return st, err
	}
	for _, key := range keys {
		ids, err := redis.Strings(c.do(ctx, "LRANGE", key, 0, -1))
		if err != nil {
			return st, fmt.Errorf("rdb: pool %s: %w", pool, err)
		}
		for l, r := 0, len(ids)-1; l < r; l, r = l+1, r-1 { // LPUSHed: oldest last
			ids[l], ids[r] = ids[r], ids[l]
		}
		st.Backlog[strings.TrimPrefix(key, prefix)] = ids
	}
	return st, nil
}

// StaticPoolState is what Redis holds about a static pool.
type StaticPoolState struct {
	// Waiting is each source's queued jobs: its FIFO's length, and one
	// more for a ring entry that holds its next job (inline).
	Waiting map[string]int64
	// Ring is the sources on the ring, in serving order; Parked those at
	// their limit.
	Ring   []string
	Parked []string
}

// ReadStaticPool reads a static pool's state (for display).
func (c *Client) ReadStaticPool(ctx context.Context, pool string) (StaticPoolState, error) {
	k := c.keys
	st := StaticPoolState{Waiting: map[string]int64{}}
	var err error
	entries, err := redis.Strings(c.do(ctx, "LRANGE", k.StaticRing(pool), 0, -1))
	if err != nil {
		return st, fmt.Errorf("rdb: static pool %s: %w", pool, err)
	}
	for _, e := range entries {
		s, _, inline := protocol.ParseStaticEntry(e)
		st.Ring = append(st.Ring, s)
		if inline {
			st.Waiting[s]++
		}
	}
	if st.Parked, err = redis.Strings(c.do(ctx, "LRANGE", k.StaticParked(pool), 0, -1)); err != nil {
		return st, fmt.Errorf("rdb: static pool %s: %w", pool, err)
	}
	prefix := k.StaticSourceQueue(pool, "")
	keys, err := c.ScanKeys(ctx, prefix+"*")
	if err != nil {
		return st, err
	}
	lens, _, err := c.BatchRead(ctx, keys, nil)
	if err != nil {
		return st, err
	}
	for i, key := range keys {
		if s := strings.TrimPrefix(key, prefix); !strings.Contains(s, ":") && lens[i] > 0 {
			st.Waiting[s] += lens[i]
		}
	}
	return st, nil
}
