package rdb

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
)

// trimHeadScript removes judged entries near the head of a list.
var trimHeadScript = loadScript("list_trim_head.lua", 1)

// HeadEntry is one entry of a list as read: its index and its bytes.
type HeadEntry struct {
	Index int64
	Raw   []byte
}

// TrimHead removes from list (a key) each of entries that is still at its
// index with the same bytes, in one step, and returns the indices of those
// it removed. An entry that changed or moved since it was read stays.
func (c *Client) TrimHead(ctx context.Context, list string, entries []HeadEntry) ([]int64, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	args := make([]any, 0, 2+2*len(entries))
	args = append(args, list, removedSentinel)
	for _, e := range entries {
		args = append(args, e.Index, e.Raw)
	}
	idx, err := redis.Int64s(c.eval(ctx, trimHeadScript, args...))
	if err != nil {
		return nil, fmt.Errorf("rdb: trim %q: %w", list, err)
	}
	return idx, nil
}
