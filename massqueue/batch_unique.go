package massqueue

import (
	"errors"
	"fmt"
	"time"
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
	ttl = BatchTTL(ttl)
	return ttl + min(ttl, 10*time.Minute)
}
