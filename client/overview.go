package client

import (
	"context"
	"slices"

	"github.com/resque-go/resque-go/internal/rdb"
)

// Overview is what a dashboard's overview shows: the numbers of Stats,
// every queue with its oldest job (QueuesDetail) and every worker with its
// job (Workers).
type Overview struct {
	Stats   Stats
	Queues  []QueueDetail
	Workers []WorkerInfo
}

// Overview reads Stats, QueuesDetail and Workers together, each key once,
// in three round trips whatever the number of queues and workers: the
// counters and sets, then each queue's length and head (LLEN and LINDEX,
// pipelined), then each worker's record and start. Asked one by one they
// read the sets three times and each queue's length twice. It is not one
// atomic view (see Stats). A queue key of another type is named in
// Stats.Problems and in its QueueDetail, and read as empty. When only the
// workers' records cannot be read, the error comes with Stats and Queues
// (Stats.Working then 0).
func (c *Client) Overview(ctx context.Context) (Overview, error) {
	ov, err := c.rdb.StatsOverview(ctx)
	problems, err := keyProblems(err)
	if err != nil {
		return Overview{}, wrap("overview", err)
	}
	names := slices.Clone(ov.Queues)
	slices.Sort(names)
	lens, heads, err := c.rdb.QueueHeads(ctx, names)
	more, err := keyProblems(err)
	if err != nil {
		return Overview{}, wrap("overview", err)
	}
	k := c.rdb.Keys()
	byKey := make(map[string]string, len(more))
	for _, p := range more {
		byKey[p.Key] = p.Problem
	}
	out := Overview{Queues: make([]QueueDetail, len(names))}
	for i, q := range names {
		d := QueueDetail{Name: q, Size: lens[i], Problem: byKey[k.Queue(q)]}
		if heads[i] != nil {
			d.Oldest = decodeJob(q, heads[i]).EnqueuedAt
		}
		out.Queues[i] = d
		out.Stats.Pending += lens[i]
	}
	st := &out.Stats
	st.Processed, st.Failed, st.Retries, st.FailedEntries = ov.Processed, ov.Failed, ov.Retries, ov.FailedLen
	st.Queues, st.Workers, st.Time = len(ov.Queues), len(ov.Workers), ov.Now
	st.Problems = append(problems, more...)
	st.SetAside = setAside(ov.SetAside)
	out.Workers, err = c.workersOf(ctx, rdb.WorkerSnapshot{Now: ov.Now, IDs: ov.Workers, Heartbeats: ov.Heartbeats, Intervals: ov.Intervals})
	if err != nil {
		return out, wrap("overview: workers", err)
	}
	for _, w := range out.Workers {
		if w.Job != nil {
			st.Working++
		}
	}
	return out, nil
}
