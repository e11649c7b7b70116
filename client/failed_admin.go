package client

import (
	"context"

	"github.com/resque-go/resque-go/failure"
)

// ClearFailed empties the failed list in one step (an empty f, as Ruby's
// clear does) or deletes the entries f selects, each re-checked in the
// step that deletes it.
func (c *Client) ClearFailed(ctx context.Context, f FailedFilter) (FailedResult, error) {
	r, err := c.failed.Clear(ctx, failure.Filter(f))
	return FailedResult(r), adminErr("clear failed", err)
}
