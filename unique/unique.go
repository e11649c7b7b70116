// Package unique is the unique-job state machine of docs/protocol.md#unique-jobs,
// shared with the resque-v3 PHP fork: at most one job per uid is queued or
// running; a deferrable job that meets its uid running is parked and
// released when that job succeeds.
//
// The transitions of a running job (start, success, retry, failure,
// recovery) happen inside the worker's claim and finish steps
// (internal/rdb scripts), so a job that is not unique pays nothing for
// them. This package holds the producer's side (Enqueue), the operator's
// (List, Get, Clear) and the Sweeper that frees uids whose holder is gone.
package unique

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// ErrDuplicate is returned when a job's uid is taken: a job with that uid
// is queued, or running and the new job is not deferrable, or running with
// a deferred job already parked (the first one wins). Nothing was written.
var ErrDuplicate = errors.New("unique: a job with this unique id is already queued or running")

// Result is what an enqueue did with a unique job.
type Result string

// Results of Enqueue.
const (
	// Queued: the uid was free; the job is in its queue (or delayed).
	Queued Result = "queued"
	// Deferred: the uid's job is running; this job is parked and released
	// when that job succeeds, after its deferrableBy seconds.
	Deferred Result = "deferred"
)

// Job is a unique job to enqueue.
type Job struct {
	Queue   string
	Payload []byte // carries the "unique" field (protocol.ParseUnique)
	// DueAt, when not zero, files the job in the delayed queue (rounded up
	// to the second); the uid is queued from now on.
	DueAt time.Time
}

// Enqueue writes a unique job in one step. It returns ErrDuplicate (wrapped,
// saying why) when the uid is taken.
func Enqueue(ctx context.Context, c *rdb.Client, j Job) (Result, error) {
	u, ok, err := protocol.ParseUnique(j.Payload)
	if err != nil {
		return "", fmt.Errorf("unique: %w", err)
	}
	if !ok {
		return "", errors.New("unique: the payload has no unique uid")
	}
	rj := rdb.UniqueJob{UID: u.UID, Queue: j.Queue, Push: j.Payload}
	if !j.DueAt.IsZero() {
		if err := protocol.CheckDue("due time", j.DueAt); err != nil {
			return "", fmt.Errorf("unique: %w", err)
		}
		item, err := protocol.DelayedItem(j.Payload, j.Queue)
		if err != nil {
			return "", fmt.Errorf("unique: %w", err)
		}
		ts := j.DueAt.Unix()
		if j.DueAt.Nanosecond() > 0 {
			ts++
		}
		rj.Push, rj.DueAt = item, ts
	}
	if u.Deferrable {
		// parked in delayed-item form: it names its queue, and the release
		// can file these very bytes in the delayed queue
		if rj.Deferred, err = protocol.DelayedItem(j.Payload, j.Queue); err != nil {
			return "", fmt.Errorf("unique: %w", err)
		}
	}
	res, err := c.EnqueueUnique(ctx, rj)
	if err != nil {
		return "", err
	}
	switch res {
	case rdb.UniqueQueued:
		return Queued, nil
	case rdb.UniqueDeferred:
		return Deferred, nil
	case rdb.UniqueDeferredTaken:
		return "", fmt.Errorf("%w (uid %q: its job is running and a deferred job already waits for it)", ErrDuplicate, u.UID)
	case rdb.UniqueDuplicate:
		return "", fmt.Errorf("%w (uid %q)", ErrDuplicate, u.UID)
	}
	return "", fmt.Errorf("unique: unexpected result %q", res)
}

// Info is one uid's state.
type Info struct {
	UID string `json:"uid"`
	// State is queued or running (or what another runtime wrote there);
	// "" when the uid is free.
	State string `json:"state"`
	// Deferred is the parked payload, nil when none.
	Deferred []byte `json:"-"`
}

// List returns every uid with a state, sorted by uid.
func List(ctx context.Context, c *rdb.Client) ([]Info, error) {
	uids, err := c.UniqueUIDs(ctx)
	if err != nil {
		return nil, err
	}
	sort.Strings(uids)
	infos, err := c.UniqueInfos(ctx, uids)
	if err != nil {
		return nil, err
	}
	out := make([]Info, len(infos))
	for i, in := range infos {
		if in.Err != nil {
			return nil, in.Err
		}
		out[i] = Info{UID: in.UID, State: in.State, Deferred: in.Deferred}
	}
	return out, nil
}

// Get returns one uid's state (State "" and no Deferred when it is free).
func Get(ctx context.Context, c *rdb.Client, uid string) (Info, error) {
	infos, err := c.UniqueInfos(ctx, []string{uid})
	if err != nil {
		return Info{}, err
	}
	if infos[0].Err != nil {
		return Info{}, infos[0].Err
	}
	return Info{UID: uid, State: infos[0].State, Deferred: infos[0].Deferred}, nil
}

// ClearResult says what Clear did.
type ClearResult = rdb.ClearResult

// Clear results.
const (
	ClearAbsent   = rdb.ClearAbsent   // nothing was there
	ClearCleared  = rdb.ClearCleared  // the state was deleted
	ClearReleased = rdb.ClearReleased // deleted, and the deferred job released
)

// Clear frees a uid: its state is deleted and a parked deferred job is
// released (queued, or delayed by its deferrableBy) rather than dropped.
// A job of that uid still queued or running is not touched: it runs, and
// a new job with the uid can be enqueued meanwhile.
func Clear(ctx context.Context, c *rdb.Client, uid, by string, now time.Time) (ClearResult, error) {
	return c.UniqueClear(ctx, uid, "", by, now)
}
