package client

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/massqueue"
)

// MassJob is a job of the mass queues (docs/massqueue.md#routing): routed by its
// source (sourceId, the tenant) and job name to a pool, not by a queue.
type MassJob struct {
	Class  string
	Source string
	Name   string
	// Args is JSON (an array or an object); empty means none.
	Args json.RawMessage
	// UniqueID, when set, carries "unique":{"uid":...}: MassEnqueue refuses
	// the job (ErrDuplicate) while a job with it is queued or running.
	UniqueID string
	// Deferrable (with UniqueID): when the uid's job is running, the job
	// is parked instead and routed DeferrableBy (whole seconds) after that
	// job succeeds ("deferrableBy" in the payload; the first parked job
	// only, later ones are refused).
	Deferrable   bool
	DeferrableBy time.Duration
}

func (j MassJob) job() massqueue.Job {
	return massqueue.Job{Class: j.Class, Source: j.Source, Name: j.Name, Args: j.Args, UniqueID: j.UniqueID,
		Deferrable: j.Deferrable, DeferrableBy: int64(j.DeferrableBy / time.Second)}
}

// MassEnqueued is what MassEnqueueJob did.
type MassEnqueued struct {
	ID string
	// Deferred: the job was parked behind its uid's running job.
	Deferred bool
}

// MassEnqueueJob is MassEnqueue, saying whether a deferrable unique job
// was parked.
func (c *Client) MassEnqueueJob(ctx context.Context, j MassJob) (MassEnqueued, error) {
	e, err := massio.EnqueueStaticJob(ctx, c.rdb, j.job())
	if errors.Is(err, massqueue.ErrDuplicate) {
		return MassEnqueued{}, err
	}
	if err != nil {
		return MassEnqueued{}, wrap("mass enqueue", err)
	}
	return MassEnqueued{ID: e.ID, Deferred: e.Deferred}, nil
}

// MassEnqueue pushes a static mass-queue job to unassigned (as resqu-client
// does); an allocator routes it to its pool. It returns the job's id.
func (c *Client) MassEnqueue(ctx context.Context, j MassJob) (string, error) {
	e, err := c.MassEnqueueJob(ctx, j)
	return e.ID, err
}

// Batch is a mass action being built (see NewBatch); not safe for
// concurrent use.
type Batch struct{ b *massio.Batch }

// NewBatch starts a batch of source's job name: jobs pushed to it run only
// after Commit, worked by a unit of the batch pool the source and name are
// routed to, one active batch per source per pool. Nothing is written
// before the first Push; an uncommitted batch expires an hour after its last
// push.
func (c *Client) NewBatch(source, name string) (*Batch, error) {
	b, err := massio.NewBatch(c.rdb, source, name, 0)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	return &Batch{b: b}, nil
}

// ID is the batch id, <source>:<name>:<8 hex> (final after the first Push).
func (b *Batch) ID() string { return b.b.ID() }

// Push adds jobs in order (a job's empty Source and Name are the batch's).
// A job with a UniqueID is pushed only while no job with that uid is
// queued or running (a queue job, a static job, a job of any batch, or an
// earlier job of this push); its uid is then queued until the job ends.
// The push stops at a refused job with ErrDuplicate (errors.As gives a
// *massqueue.DuplicateError naming the uid and its position): the jobs
// before it are in the batch, it and those after it are not. The uid of a
// batch that is never committed is free again a little after the batch
// expires (massqueue.BatchUniqueStateTTL).
func (b *Batch) Push(ctx context.Context, jobs ...MassJob) error {
	mj := make([]massqueue.Job, len(jobs))
	for i, j := range jobs {
		mj[i] = j.job()
	}
	return wrap("batch push", b.b.Push(ctx, mj...))
}

// Commit hands the batch to the allocators.
func (b *Batch) Commit(ctx context.Context) error { return wrap("batch commit", b.b.Commit(ctx)) }
