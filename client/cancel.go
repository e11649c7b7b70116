package client

import (
	"context"
	"errors"

	"github.com/resque-go/resque-go/internal/rdb"
)

// Errors of CancelJob and CancelJobByID.
var (
	// ErrNoRunningJob: the worker runs no job (or, by id, no worker runs a
	// job with that id); nothing was written.
	ErrNoRunningJob = errors.New("client: no job running")
	// ErrNotCancellable: the job was claimed by a Ruby or PHP worker,
	// which reads no cancel request (Ruby Resque's workers take USR1).
	ErrNotCancellable = errors.New("client: the worker is not a resque-go worker")
)

// CancelOptions tunes a cancel request.
type CancelOptions struct {
	// Retry lets the job's retry policy apply to the cancelled attempt;
	// by default a cancelled job is not retried.
	Retry bool
}

// CancelJob cancels the job the resque-go worker slot workerID (as Workers
// lists it) is running now, on whatever host: its handler's context is
// cancelled (an exec or fork job gets SIGTERM, then SIGKILL after its
// grace period) and the job ends in failed as ResqueGo::Cancelled. The
// request names that job's claim, so it never reaches the slot's next job;
// it is pushed to every resque-go process at once and stored for ten
// minutes for a process that is reconnecting. CancelJob returns when the
// request is made, not when the job has stopped. It fails with
// ErrNoRunningJob or ErrNotCancellable.
func (c *Client) CancelJob(ctx context.Context, workerID string, opt CancelOptions) error {
	if workerID == "" {
		return invalidf("CancelJob: empty worker id")
	}
	_, err := c.rdb.CancelJob(ctx, workerID, nil, opt.Retry)
	return cancelErr(err)
}

// CancelJobByID cancels, as CancelJob does, the running job whose payload
// carries id (its "id" field); it returns the worker id that
// runs it. Only the job seen running is cancelled: if it ends before the
// request is made, nothing is, and the error is ErrNoRunningJob.
func (c *Client) CancelJobByID(ctx context.Context, id string, opt CancelOptions) (string, error) {
	if id == "" {
		return "", invalidf("CancelJobByID: empty job id")
	}
	wid, err := c.rdb.CancelJobByID(ctx, id, opt.Retry)
	return wid, cancelErr(err)
}

func cancelErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rdb.ErrNoJob):
		return wrap("cancel job", ErrNoRunningJob)
	case errors.Is(err, rdb.ErrForeignWorker):
		return wrap("cancel job", ErrNotCancellable)
	}
	return wrap("cancel job", err)
}
