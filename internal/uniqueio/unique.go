package uniqueio

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/unique"
)

// Enqueue writes a unique job in one step. It returns ErrDuplicate (wrapped,
// saying why) when the uid is taken.
func Enqueue(ctx context.Context, c *rdb.Client, j unique.Job) (unique.Result, error) {
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
		return unique.Queued, nil
	case rdb.UniqueDeferred:
		return unique.Deferred, nil
	case rdb.UniqueDeferredTaken:
		return "", fmt.Errorf("%w (uid %q: its job is running and a deferred job already waits for it)", unique.ErrDuplicate, u.UID)
	case rdb.UniqueDuplicate:
		return "", fmt.Errorf("%w (uid %q)", unique.ErrDuplicate, u.UID)
	}
	return "", fmt.Errorf("unique: unexpected result %q", res)
}

// List returns every uid with a state, sorted by uid. A uid whose keys
// cannot be read (another type) is listed with Problem set.
func List(ctx context.Context, c *rdb.Client) ([]unique.Info, error) {
	uids, err := c.UniqueUIDs(ctx)
	if err != nil {
		return nil, err
	}
	return infosOf(ctx, c, uids)
}

// infosOf reads the states of uids, sorted by uid.
func infosOf(ctx context.Context, c *rdb.Client, uids []string) ([]unique.Info, error) {
	sort.Strings(uids)
	uids = slices.Compact(uids)
	infos, err := c.UniqueInfos(ctx, uids)
	if err != nil {
		return nil, err
	}
	out := make([]unique.Info, len(infos))
	for i, in := range infos {
		if in.Err != nil {
			out[i] = unique.Info{UID: in.UID, Problem: in.Err.Error()}
			continue
		}
		out[i] = unique.Info{UID: in.UID, State: in.State, Deferred: in.Deferred}
	}
	return out, nil
}

// Step is List a bounded part at a time, for a page that goes on where
// the last one stopped: the uids whose state keys at most calls SCAN calls
// (COUNT count) from cursor on find ("" or "0": the start), sorted by uid,
// and the cursor to go on from ("0": the keyspace was walked to its end).
// The state keys have no index to page through: PHP's resque-v3 writes
// them with SETNX alone.
func Step(ctx context.Context, c *rdb.Client, cursor string, calls, count int) ([]unique.Info, string, error) {
	uids, next, err := c.UniqueUIDsStep(ctx, cursor, calls, count)
	if err != nil {
		return nil, "", err
	}
	out, err := infosOf(ctx, c, uids)
	return out, next, err
}

// Get returns one uid's state (State "" and no Deferred when it is free).
func Get(ctx context.Context, c *rdb.Client, uid string) (unique.Info, error) {
	infos, err := c.UniqueInfos(ctx, []string{uid})
	if err != nil {
		return unique.Info{}, err
	}
	if infos[0].Err != nil {
		return unique.Info{}, infos[0].Err
	}
	return unique.Info{UID: uid, State: infos[0].State, Deferred: infos[0].Deferred}, nil
}

// Clear frees a uid: its state is deleted and a parked deferred job is
// released (queued, or delayed by its deferrableBy) rather than dropped.
// A job of that uid still queued or running is not touched: it runs, and
// a new job with the uid can be enqueued meanwhile.
func Clear(ctx context.Context, c *rdb.Client, uid, by string, now time.Time) (unique.ClearResult, error) {
	res, err := c.UniqueClear(ctx, uid, "", by, now)
	return unique.ClearResult(res), err
}
