package rdb

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// historyScript is loaded on first use.
var historyScript = sync.OnceValue(func() *script { return loadScript("history_sample.lua", -1) })

// HistorySample is what one SampleHistory call did.
type HistorySample struct {
	// Result is "skipped", "first" or "sampled" (history_sample.lua).
	Result            string
	Processed, Failed int64
}

// SampleHistory adds the growth of stat:processed and stat:failed since
// the last sample (by any process) to the current bucket of every history
// ring, unless the last sample is younger than minGap. One script call.
func (c *Client) SampleHistory(ctx context.Context, now time.Time, minGap time.Duration) (HistorySample, error) {
	k := c.keys
	res := protocol.HistoryResolutions()
	keys := []any{k.StatProcessed(), k.StatFailed(), k.HistoryLast()}
	args := []any{now.Unix(), int64(minGap / time.Second)}
	for _, r := range res {
		keys = append(keys, k.History(r.Name))
		args = append(args, int64(r.Step/time.Second), r.Slots)
	}
	s := historyScript()
	vals, err := redis.Values(c.eval(ctx, s, append(append([]any{len(keys)}, keys...), args...)...))
	if err != nil {
		return HistorySample{}, fmt.Errorf("rdb: sample history: %w", err)
	}
	var out HistorySample
	if _, err := redis.Scan(vals, &out.Result); err != nil {
		return HistorySample{}, fmt.Errorf("rdb: sample history: %w", err)
	}
	if out.Result == "sampled" && len(vals) == 3 {
		out.Processed, _ = redis.Int64(vals[1], nil)
		out.Failed, _ = redis.Int64(vals[2], nil)
	}
	return out, nil
}

// HistorySlots reads one resolution's ring: slot field -> value
// (protocol.HistorySlot). One HGETALL.
func (c *Client) HistorySlots(ctx context.Context, resolution string) (map[string]string, error) {
	m, err := redis.StringMap(c.do(ctx, "HGETALL", c.keys.History(resolution)))
	if err != nil {
		return nil, fmt.Errorf("rdb: history %s: %w", resolution, err)
	}
	return m, nil
}
