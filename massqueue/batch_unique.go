package massqueue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// ErrDeferrableInBatch: a unique job with deferrableBy cannot go into a
// batch (nor be a static job): a deferred job is released to a queue when
// its uid's job succeeds, and a mass job has none. Nothing was pushed.
var ErrDeferrableInBatch = errors.New("massqueue: a deferrable unique job (deferrableBy) is not supported in a batch: a released job would run outside its batch")

// DuplicateError is a batch push refused at a unique job whose uid is
// queued or running (in this batch, another one, a queue or the static
// path), or repeated earlier in the same push. errors.Is(err,
// ErrDuplicate) holds.
type DuplicateError struct {
	Batch string
	UID   string
	// Index is the refused job's position in the Push (0-based): the Index
	// jobs before it were pushed; it and those after it were not.
	Index int
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("massqueue: batch %s: job %d of the push refused: unique id %q is already queued or running (the %d jobs before it were pushed, it and those after it were not)",
		e.Batch, e.Index+1, e.UID, e.Index)
}

func (e *DuplicateError) Unwrap() error { return ErrDuplicate }

// BatchUniqueStateTTL is how long the queued state of a unique job pushed
// to an uncommitted batch lives after a push: the batch's time to live
// plus a margin (as long again, at most 10 minutes). Each push renews the
// states that would expire before the batch (so each state about once per
// margin while the batch is built), the commit makes them permanent (a
// committed batch may wait long), and an abandoned batch's uids are free at
// most this long after its last push.
func BatchUniqueStateTTL(ttl time.Duration) time.Duration {
	ttl = batchTTL(ttl)
	return ttl + min(ttl, 10*time.Minute)
}

func hasUID(jobs []rdb.BatchJob) bool {
	for _, j := range jobs {
		if j.UID != "" {
			return true
		}
	}
	return false
}

// pushChecked pushes jobs (at most pushChunk) with mass_batch_push.lua and
// returns how many were pushed.
func (b *Batch) pushChecked(ctx context.Context, jobs []rdb.BatchJob) (int, error) {
	mode := rdb.BatchPushList
	switch b.state {
	case batchNew:
		mode = rdb.BatchPushNew
	case batchUnknown:
		mode = rdb.BatchPushOpen
	}
	for {
		r, err := b.c.BatchPushChecked(ctx, mode, b.id, jobs, b.ttl, BatchUniqueStateTTL(b.ttl), b.now())
		switch {
		case errors.Is(err, rdb.ErrBatchExists) && mode == rdb.BatchPushNew:
			b.id = protocol.NewBatchID(b.source, b.name) // as resqu-client: draw again
			continue
		case errors.Is(err, rdb.ErrBatchMissing) && mode == rdb.BatchPushOpen:
			return 0, fmt.Errorf("%w: %s (pushes by id need an id from mass batch create, or a batch already pushed to)", ErrBatchExpired, b.id)
		case errors.Is(err, rdb.ErrBatchMissing):
			return 0, fmt.Errorf("%w: %s", ErrBatchExpired, b.id)
		case err != nil:
			return 0, fmt.Errorf("massqueue: %w", err)
		}
		if r.Pushed > 0 {
			b.state = batchOpen
		}
		b.uniq = b.uniq || r.HasUIDs
		if r.Refused != "" {
			return r.Pushed, &DuplicateError{Batch: b.id, UID: r.Refused}
		}
		return r.Pushed, nil
	}
}
