package client

import (
	"context"

	"github.com/resque-go/resque-go/internal/statsio"
	"github.com/resque-go/resque-go/stats"
)

// Snapshot reads what `resque-go stats` shows: the global counters, every
// queue with its counters, the workers of every Resque runtime, resque-go's
// runtime records and schedulers, and the keys that could not be read.
// host, when not empty, keeps the workers and processes of that host only.
// stats.Render and stats.WriteJSON print it.
func (c *Client) Snapshot(ctx context.Context, host string) (*stats.Snapshot, error) {
	s, err := statsio.Collect(ctx, c.rdb, host)
	return s, adminErr("snapshot", err)
}
