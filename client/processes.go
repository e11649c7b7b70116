package client

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/stats"
)

// Processes reads the runtime records (RSS, CPU, busy and total slots,
// host load) of the resque-go processes that workers belong to: one GET
// per process, pipelined, and no scan of the keyspace. A process is found
// by its workers' ids (host:pid-slot:queues, or host:pid:queues for a
// process with one slot), so a process with no registered worker is not
// listed, nor is a Ruby, PHP or Node worker's process (which writes
// none); a record that expired or does not decode is left out. With nil
// workers it reads the workers first. The records are sorted by host and
// pid.
func (c *Client) Processes(ctx context.Context, workers []WorkerInfo) ([]stats.Record, error) {
	if workers == nil {
		ws, err := c.Workers(ctx)
		if err != nil {
			return nil, err
		}
		workers = ws
	}
	type hostPID struct {
		host string
		pid  int
	}
	seen := map[hostPID]bool{}
	var keys []string
	k := c.rdb.Keys()
	for _, w := range workers {
		hp := hostPID{w.Host, w.PID}
		if w.PID <= 0 || seen[hp] || w.Runtime != protocol.RuntimeResqueGo {
			continue
		}
		seen[hp] = true
		keys = append(keys, k.Process(w.Host, w.PID))
	}
	if len(keys) == 0 {
		return []stats.Record{}, nil
	}
	_, vals, err := c.rdb.BatchRead(ctx, nil, keys)
	if _, bad := rdb.BadKeys(err); err != nil && !bad {
		return nil, wrap("processes", err)
	}
	out := []stats.Record{}
	for _, v := range vals {
		if v == nil {
			continue
		}
		r, err := protocol.ParseProcessRecord(v)
		if err != nil {
			continue
		}
		out = append(out, stats.Record(r))
	}
	slices.SortFunc(out, func(a, b stats.Record) int { return cmp.Or(cmp.Compare(a.Host, b.Host), cmp.Compare(a.PID, b.PID)) })
	return out, nil
}

// Schedulers are the scheduler processes Redis knows of.
type Schedulers struct {
	// Master is the value of resque-scheduler's master lock
	// ("host:pid"): the scheduler, Ruby's or resque-go's, that fires the
	// recurring schedules; "" when none holds it.
	Master string
	// Records are the runtime records of `resque-go scheduler` processes,
	// sorted by host and pid.
	Records []stats.SchedulerInfo
}

// Schedulers reads resque-scheduler's master lock (default lock prefix)
// and the runtime records of resque-go schedulers. The records are found
// with a SCAN of their key pattern, whose cost grows with the keyspace:
// a caller polling it should do so rarely (the dashboard: once a minute).
func (c *Client) Schedulers(ctx context.Context) (Schedulers, error) {
	k := c.rdb.Keys()
	keys, err := c.rdb.ScanKeys(ctx, k.SchedulerPattern())
	if err != nil {
		return Schedulers{}, wrap("schedulers", err)
	}
	slices.Sort(keys)
	_, vals, err := c.rdb.BatchRead(ctx, nil, append([]string{k.SchedulerMasterLock("")}, keys...))
	if _, bad := rdb.BadKeys(err); err != nil && !bad {
		return Schedulers{}, wrap("schedulers", err)
	}
	s := Schedulers{Master: string(vals[0]), Records: []stats.SchedulerInfo{}}
	for _, v := range vals[1:] {
		var in stats.SchedulerInfo
		if v == nil || json.Unmarshal(v, &in) != nil {
			continue
		}
		s.Records = append(s.Records, in)
	}
	slices.SortFunc(s.Records, func(a, b stats.SchedulerInfo) int {
		return cmp.Or(strings.Compare(a.Host, b.Host), cmp.Compare(a.PID, b.PID))
	})
	return s, nil
}
