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

// Reading many buckets: the first scanFirst items of a group of buckets in
// one pipeline, groups growing from scanGroupMin to scanGroupMax buckets
// (a page that needs a few items reads a few buckets; a long walk makes
// few round trips), the rest of a big bucket a page at a time.
const (
	scanFirst    = 50
	scanGroupMin = 8
	scanGroupMax = 256
)

// scanBuckets calls fn for each item of the buckets in [from, to], oldest
// bucket first, in promotion order inside a bucket. A bucket of another
// type holds no items (a mover sets it aside).
func scanBuckets(ctx context.Context, c *rdb.Client, from, to int64, fn func(delayed.Item) error) error {
	group := scanGroupMin
	page := make([]int64, 0, scanGroupMax)
	flush := func() error {
		rs := make([]rdb.ListRange, len(page))
		for i, ts := range page {
			rs[i] = rdb.ListRange{Key: c.Keys().Delayed(ts), Start: 0, Stop: scanFirst - 1}
		}
		firsts, err := c.ListRanges(ctx, rs)
		if err != nil {
			return err
		}
		for i, ts := range page {
			got, want := firsts[i], scanFirst
			for pos := 0; ; {
				for k, raw := range got {
					if err := fn(decodeItem(ts, pos+k, raw)); err != nil {
						return err
					}
				}
				if len(got) < want {
					break
				}
				pos, want = pos+len(got), itemPage
				got, err = c.DelayedItems(ctx, ts, pos, pos+want-1)
				if wrongType(err) {
					break
				}
				if err != nil {
					return err
				}
			}
		}
		page, group = page[:0], min(group*2, scanGroupMax)
		return nil
	}
	err := eachBucket(ctx, c, from, to, func(ts int64) error {
		if page = append(page, ts); len(page) >= group {
			return flush()
		}
		return nil
	}, nil)
	if err == nil && len(page) > 0 {
		err = flush()
	}
	return err
}
