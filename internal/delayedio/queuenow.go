package delayedio

import (
	"context"
	"fmt"
	"time"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/internal/rdb"
)

// QueueNow moves one copy of item (exact bytes) from the bucket due at ts
// to its queue at once, as a mover promotes it when due (the same payload
// and destination: promotionOf), in one atomic step with its index entry
// and the bucket's schedule entry. delayed.ErrNotFound when the item is no
// longer in the bucket; delayed.ErrNotJob when it cannot be promoted (a
// mover would record it in failed): nothing is done in either case.
func QueueNow(ctx context.Context, c *rdb.Client, ts int64, item []byte, now time.Time) (delayed.QueuedNow, error) {
	p, err := promotionOf(item, now)
	if err != nil {
		return delayed.QueuedNow{}, fmt.Errorf("%w: %v", delayed.ErrNotJob, err)
	}
	r, err := c.QueueDelayedNow(ctx, ts, p)
	if err != nil {
		return delayed.QueuedNow{}, err
	}
	if !r.Found {
		return delayed.QueuedNow{}, fmt.Errorf("%w: due at %d", delayed.ErrNotFound, ts)
	}
	return delayed.QueuedNow{Queue: p.Queue, Unassigned: p.Unassigned, Payload: p.Payload, Left: r.Left, Unscheduled: r.Unscheduled}, nil
}

// BucketMatching returns the items of the bucket due at t (its second)
// that f selects, in promotion order; f's time range is not used, and
// its Args are compared item by item (as with Scan).
func BucketMatching(ctx context.Context, c *rdb.Client, t time.Time, f delayed.Filter) ([]delayed.Item, error) {
	f.From, f.To, f.Scan = time.Time{}, time.Time{}, true
	if err := checkFilter(f); err != nil {
		return nil, err
	}
	m, err := newMatcher(f)
	if err != nil {
		return nil, err
	}
	var out []delayed.Item
	err = bucketItems(ctx, c, t.Unix(), func(it delayed.Item) error {
		if m.match(it) {
			out = append(out, it)
		}
		return nil
	})
	return out, err
}
