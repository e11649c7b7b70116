package client

import (
	"context"

	"github.com/resque-go/resque-go/failure"
)

// FailedResult counts what a bulk operation on the failed list did.
type FailedResult = failure.Result

// RetryFailedWhere retries every entry f selects (an empty f: every entry),
// each exactly once, as RetryFailed does; entries that vanished meanwhile
// are counted as Gone, those with no queue or payload as Skipped.
func (c *Client) RetryFailedWhere(ctx context.Context, f FailedFilter) (FailedResult, error) {
	r, err := c.failed.RetryMatching(ctx, f.filter())
	return r, adminErr("retry failed", err)
}

// RemoveFailedWhere deletes every entry f selects (an empty f: every
// entry), each re-checked in the step that deletes it.
func (c *Client) RemoveFailedWhere(ctx context.Context, f FailedFilter) (FailedResult, error) {
	r, err := c.failed.RemoveMatching(ctx, f.filter())
	return r, adminErr("remove failed", err)
}

// ClearFailed empties the failed list in one step (an empty f, as Ruby's
// clear does) or deletes the entries f selects.
func (c *Client) ClearFailed(ctx context.Context, f FailedFilter) (FailedResult, error) {
	r, err := c.failed.Clear(ctx, f.filter())
	return r, adminErr("clear failed", err)
}

func (f FailedFilter) filter() failure.Filter {
	return failure.Filter{Queue: f.Queue, Class: f.Class, Exception: f.Exception}
}
