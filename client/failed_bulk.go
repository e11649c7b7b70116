package client

import (
	"context"

	"github.com/resque-go/resque-go/failure"
)

// FailedResult counts what RetryFailedWhere or RemoveFailedWhere did.
type FailedResult struct {
	// Done counts the entries retried or removed.
	Done int
	// Gone counts selected entries that were removed or changed by someone
	// else before they could be acted on.
	Gone int
	// Skipped counts entries that could not be retried (no queue or
	// payload; see ErrNotRetryable).
	Skipped int
}

// CountFailedWhere counts the entries of the failed list that f selects
// (reading the whole list; FailedCount is one call for an empty filter).
func (c *Client) CountFailedWhere(ctx context.Context, f FailedFilter) (int64, error) {
	if f == (FailedFilter{}) {
		return c.FailedCount(ctx)
	}
	entries, _, err := c.failed.List(ctx, failure.Filter(f), 0, 0)
	if err != nil {
		return 0, wrap("count failed", err)
	}
	return int64(len(entries)), nil
}

// RetryFailedWhere retries every entry that f selects, each exactly once,
// as `resque-go failed retry --all` does: it reads the selected entries,
// then retries each as RetryFailedJob does (found by its bytes if the list
// moved; an entry gone meanwhile is counted, never mistaken for another).
// Entries added after the reading are not touched.
func (c *Client) RetryFailedWhere(ctx context.Context, f FailedFilter) (FailedResult, error) {
	r, err := c.failed.RetryMatching(ctx, failure.Filter(f))
	return FailedResult(r), wrap("retry failed", err)
}

// RemoveFailedWhere removes every entry that f selects, with the
// guarantees of RetryFailedWhere.
func (c *Client) RemoveFailedWhere(ctx context.Context, f FailedFilter) (FailedResult, error) {
	r, err := c.failed.RemoveMatching(ctx, failure.Filter(f))
	return FailedResult(r), wrap("remove failed", err)
}
