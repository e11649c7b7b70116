package client

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/internal/delayedio"
)

// DelayedJobs returns the delayed items f selects, oldest first (the order
// a mover promotes them), skipping offset and returning at most limit (0:
// all). Items that are not a JSON object with a class and a queue are
// returned with Err set. A Filter that cannot be used is ErrInvalid (also
// delayed.ErrBadFilter).
func (c *Client) DelayedJobs(ctx context.Context, f delayed.Filter, offset, limit int) ([]delayed.Item, error) {
	if offset < 0 || limit < 0 {
		return nil, invalidf("DelayedJobs: offset %d and limit %d must not be negative", offset, limit)
	}
	items, err := delayedio.List(ctx, c.rdb, f, offset, limit)
	return items, delayedErr("delayed jobs", err)
}

// DelayedAt returns the items of the bucket due at t (whole seconds), in
// the order they will be promoted.
func (c *Client) DelayedAt(ctx context.Context, t time.Time) ([]delayed.Item, error) {
	items, err := delayedio.Bucket(ctx, c.rdb, t)
	return items, delayedErr("delayed at", err)
}

// DelayedCount counts the delayed items f selects and the buckets (due
// times) that hold them.
func (c *Client) DelayedCount(ctx context.Context, f delayed.Filter) (delayed.Counts, error) {
	n, err := delayedio.Count(ctx, c.rdb, f)
	return n, delayedErr("delayed count", err)
}

// RemoveDelayed deletes the delayed items f selects; f must select by
// something (the zero Filter is ErrInvalid: use ClearDelayed). It works
// bucket by bucket in atomic steps, so movers and producers can go on;
// progress, when not nil, is called after each bucket. On an error what
// was removed so far is returned with it.
func (c *Client) RemoveDelayed(ctx context.Context, f delayed.Filter, progress func(delayed.Progress)) (delayed.Removal, error) {
	if f.From.IsZero() && f.To.IsZero() && f.Queue == "" && f.Class == "" && f.Args == nil {
		return delayed.Removal{}, invalidf("RemoveDelayed needs a filter (ClearDelayed deletes every item)")
	}
	r, err := delayedio.Remove(ctx, c.rdb, f, progress)
	return r, delayedErr("remove delayed", err)
}

// ClearDelayed deletes every delayed item, its index entries and the
// schedule, bucket by bucket.
func (c *Client) ClearDelayed(ctx context.Context, progress func(delayed.Progress)) (delayed.Removal, error) {
	r, err := delayedio.Clear(ctx, c.rdb, progress)
	return r, delayedErr("clear delayed", err)
}

func delayedErr(op string, err error) error {
	if errors.Is(err, delayed.ErrBadFilter) {
		return adminErr(op, err, ErrInvalid)
	}
	return adminErr(op, err)
}

// RemoveDelayedItem deletes the item with exactly the bytes raw from the
// bucket due at at (whole seconds), with its index entry, taking the
// bucket off the schedule when it is left empty, in one atomic step. It
// finds an item by its content, so it also removes one that is not a job
// (Item.Err set); identical copies in the bucket go together. Removed is
// 0 when the item is no longer there.
func (c *Client) RemoveDelayedItem(ctx context.Context, at time.Time, raw []byte) (delayed.Removal, error) {
	if len(raw) == 0 {
		return delayed.Removal{}, invalidf("RemoveDelayedItem: empty item")
	}
	r, err := c.rdb.RemoveDelayed(ctx, at.Unix(), [][]byte{raw})
	out := delayed.Removal{Removed: r.Removed, Unindexed: r.Unindexed}
	if r.Unscheduled {
		out.Unscheduled = 1
	}
	return out, adminErr("remove delayed item", err)
}

// DelayedDueTimes is the number of due times (buckets) in the delayed
// queue, read in one command whatever their number; DelayedCount also
// counts the items, reading every bucket's length.
func (c *Client) DelayedDueTimes(ctx context.Context) (int64, error) {
	n, err := c.rdb.DelayedDueTimes(ctx)
	return n, delayedErr("delayed due times", err)
}

// DelayedCursor is where a DelayedScanStep starts: the bucket due at At
// (whole seconds), from its item Pos on.
type DelayedCursor struct {
	At  time.Time
	Pos int
}

// DelayedStep is one bounded step through the delayed queue.
type DelayedStep struct {
	// Items are the items the filter selected among those read.
	Items []delayed.Item
	// DueTimes and Read are the due times and items the step read; First
	// and Last the first and the last due time read (zero when none).
	DueTimes, Read int
	First, Last    time.Time
	// Next is where the next step starts; nil when this one read to the
	// end of the filter's time range.
	Next *DelayedCursor
}

// DelayedScanStep reads the delayed queue from from on (the zero cursor:
// from the oldest due time), at most maxDue due times and maxItems items,
// and returns the items f selects among them, at most limit (0: no limit
// but the others). Its work is bounded whatever the length of the delayed
// queue; pass Next to go on. f.Args is compared item by item (as with
// f.Scan), not looked up in the index.
func (c *Client) DelayedScanStep(ctx context.Context, f delayed.Filter, from DelayedCursor, maxDue, maxItems, limit int) (DelayedStep, error) {
	if maxDue < 1 || maxItems < 1 || limit < 0 || from.Pos < 0 {
		return DelayedStep{}, invalidf("DelayedScanStep: maxDue %d and maxItems %d must be positive, limit %d and pos %d not negative", maxDue, maxItems, limit, from.Pos)
	}
	cur := delayedio.Cursor{Pos: from.Pos}
	if !from.At.IsZero() {
		cur.TS = from.At.Unix()
	} else {
		cur.TS = math.MinInt64
	}
	r, err := delayedio.Step(ctx, c.rdb, f, cur, maxDue, maxItems, limit)
	if err != nil {
		return DelayedStep{}, delayedErr("delayed scan", err)
	}
	out := DelayedStep{Items: r.Items, DueTimes: r.DueTimes, Read: r.Read}
	if r.DueTimes > 0 {
		out.First, out.Last = time.Unix(r.First, 0).UTC(), time.Unix(r.Last, 0).UTC()
	}
	if r.Next != nil {
		out.Next = &DelayedCursor{At: time.Unix(r.Next.TS, 0).UTC(), Pos: r.Next.Pos}
	}
	return out, nil
}
