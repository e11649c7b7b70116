package client

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// WorkerInfo is one registered worker: Ruby, PHP, Node or resque-go (each
// resque-go slot is a worker of its own).
type WorkerInfo struct {
	// ID is the worker id, host:pid:queues (resque-go slots:
	// host:pid-slot:queues). Host, PID, Slot and Queues come from it and
	// are empty for an id in another form.
	ID     string
	Host   string
	PID    int
	Slot   int
	Queues []string
	// Started is when the worker registered; Heartbeat its latest
	// heartbeat (zero when it has none: php-resque and node-resque do not
	// write one). Either is zero when stored in a form not read (see
	// FailedJob.FailedAt).
	Started   time.Time
	Heartbeat time.Time
	// Job is the job the worker runs, nil while it is idle; RunAt is when
	// it started it.
	Job   *Job
	RunAt time.Time
	// Runtime is the runtime that registered the worker, as told by its
	// id and the form of its start time: "resque-go", "ruby", "php",
	// "node", or "" when neither tells.
	Runtime string
}

// Workers lists the registered workers, sorted by host, pid, slot and id,
// with what each is running. A job that ends meanwhile may still show.
func (c *Client) Workers(ctx context.Context) ([]WorkerInfo, error) {
	snap, err := c.rdb.Workers(ctx)
	if err != nil {
		return nil, wrap("workers", err)
	}
	out, err := c.workersOf(ctx, snap)
	if err != nil {
		return nil, wrap("workers", err)
	}
	return out, nil
}

// workersOf is Workers of the registry snap read: one pipeline of each
// worker's record and start.
func (c *Client) workersOf(ctx context.Context, snap rdb.WorkerSnapshot) ([]WorkerInfo, error) {
	k := c.rdb.Keys()
	out := make([]WorkerInfo, len(snap.IDs))
	gets := make([]string, 0, 2*len(snap.IDs))
	parsed := make([]protocol.WorkerID, len(snap.IDs))
	for i, id := range snap.IDs {
		w := WorkerInfo{ID: id, Heartbeat: parseTime(snap.Heartbeats[id])}
		if p, err := protocol.ParseWorkerID(id); err == nil {
			w.Host, w.PID, w.Slot, w.Queues = p.Host, p.PID, p.Slot, strings.Split(p.Queues, ",")
			parsed[i] = p
		}
		out[i] = w
		gets = append(gets, k.Worker(id), k.WorkerStarted(id))
	}
	_, vals, err := c.rdb.BatchRead(ctx, nil, gets)
	if err != nil {
		return nil, err
	}
	for i := range out {
		rec, started := vals[2*i], vals[2*i+1]
		out[i].Started = parseTime(string(started))
		out[i].Runtime = protocol.GuessRuntime(parsed[i], string(started))
		if _, ours := snap.Intervals[out[i].ID]; ours {
			// only resque-go records a heartbeat interval: a one-slot
			// process's id has no slot and its start time is Ruby's form
			out[i].Runtime = protocol.RuntimeResqueGo
		}
		if rec != nil {
			out[i].Job, out[i].RunAt = runningJob(rec)
		}
	}
	slices.SortFunc(out, func(a, b WorkerInfo) int {
		return cmp.Or(cmp.Compare(a.Host, b.Host), cmp.Compare(a.PID, b.PID), cmp.Compare(a.Slot, b.Slot), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// runningJob decodes worker:<id>. A record that does not decode still
// means the worker is busy: its Job then says why in Invalid.
func runningJob(rec []byte) (*Job, time.Time) {
	r, err := protocol.ParseWorkerRecord(rec)
	if err != nil && r.Payload == nil {
		return &Job{Payload: rec, Invalid: "worker record: " + err.Error()}, time.Time{}
	}
	j := decodeJob(r.Queue, r.Payload)
	return &j, parseTime(r.RunAt)
}
