package rdb

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Counters gathers counter increments in memory and writes them with one
// pipelined round trip per Flush. resque-go keeps its per-host, per-queue
// statistics (queuestat:*) this way: they cost Redis no command per job, at
// the price of showing up a flush later (and of the last flush's worth
// being lost if the process is killed with -9). The zero value is ready.
type Counters struct {
	mu sync.Mutex
	m  map[string]int64
	qs map[queueStat]int64 // AddQueueStat's, keyed without building the key
}

// queueStat names a queuestat:<host>:<stat>:<queue> counter.
type queueStat struct{ host, stat, queue string }

// AddQueueStat adds n to the pending increment of the per-host queue
// statistic queuestat:<host>:<stat>:<queue>. Its key is built when it is
// written, not with every job.
func (c *Counters) AddQueueStat(host, stat, queue string, n int64) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	if c.qs == nil {
		c.qs = make(map[queueStat]int64)
	}
	c.qs[queueStat{host, stat, queue}] += n
	c.mu.Unlock()
}

// Add adds n to key's pending increment.
func (c *Counters) Add(key string, n int64) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[string]int64)
	}
	c.m[key] += n
	c.mu.Unlock()
}

// Pending returns how many keys have increments waiting.
func (c *Counters) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m) + len(c.qs)
}

// take empties the pending increments and returns them by key (k builds
// the queue statistics' keys).
func (c *Counters) take(k protocol.Keys) map[string]int64 {
	c.mu.Lock()
	m, qs := c.m, c.qs
	c.m, c.qs = nil, nil
	c.mu.Unlock()
	if len(qs) > 0 && m == nil {
		m = make(map[string]int64, len(qs))
	}
	for q, n := range qs {
		m[k.QueueStat(q.host, q.stat, q.queue)] += n
	}
	return m
}

// putBack returns increments that could not be written.
func (c *Counters) putBack(m map[string]int64) {
	for k, n := range m {
		c.Add(k, n)
	}
}

// FlushCounters writes the pending increments of cs (INCRBY each key) in one
// round trip. On error nothing is lost: the increments go back to cs for
// the next flush (an increment whose INCRBY ran before the connection broke
// may then be counted twice; counters are statistics, jobs are not).
func (c *Client) FlushCounters(ctx context.Context, cs *Counters) error {
	m := cs.take(c.keys)
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		cs.putBack(m)
		return fmt.Errorf("rdb: flush counters: %w", err)
	}
	defer conn.Close()
	for _, k := range keys {
		if err := conn.Send("INCRBY", k, m[k]); err != nil {
			cs.putBack(m)
			return fmt.Errorf("rdb: flush counters: %w", err)
		}
	}
	if err := conn.Flush(); err != nil {
		cs.putBack(m)
		return fmt.Errorf("rdb: flush counters: %w", err)
	}
	for range keys {
		if _, err := conn.Receive(); err != nil {
			cs.putBack(m)
			return fmt.Errorf("rdb: flush counters: %w", err)
		}
	}
	return nil
}
