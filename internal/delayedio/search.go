package delayedio

import (
	"context"
	"math"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Buckets calls fn with the due times of the delayed queue, oldest first,
// at most page at a time, reading the schedule a page at a time (one
// bounded ZRANGEBYSCORE per page). Members that are not times are skipped.
func Buckets(ctx context.Context, c *rdb.Client, page int, fn func(tss []int64) error) error {
	buf := make([]int64, 0, page)
	err := eachBucket(ctx, c, math.MinInt64, math.MaxInt64, func(ts int64) error {
		buf = append(buf, ts)
		if len(buf) < page {
			return nil
		}
		err := fn(buf)
		buf = buf[:0]
		return err
	}, nil)
	if err == nil && len(buf) > 0 {
		err = fn(buf)
	}
	return err
}

// Decode is the view of raw, due at ts, at position pos of its bucket.
func Decode(ts int64, pos int, raw []byte) delayed.Item { return decodeItem(ts, pos, raw) }
