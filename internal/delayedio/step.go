package delayedio

import (
	"context"
	"errors"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Cursor is where a Step starts: due time TS, from item Pos of its bucket.
type Cursor struct {
	TS  int64
	Pos int
}

// StepResult is one bounded step through the delayed queue.
type StepResult struct {
	Items []delayed.Item
	// DueTimes is the number of due times the step read, Read the number
	// of items; First and Last the first and last due time read.
	DueTimes, Read int
	First, Last    int64
	// Next is where the next step starts; nil when this one read to the
	// end of the filter's time range.
	Next *Cursor
}

// Step is one bounded step of List for a page that goes on where the last
// one stopped: from from on, it reads at most maxDue due times and
// maxItems items (a bigger bucket is read to maxItems, and the next step
// goes on inside it) and returns the items f selects, at most limit (0:
// no limit but the others). Its work is bounded whatever the length of the
// delayed queue; the index of f.Args is not used (f.Scan is implied).
func Step(ctx context.Context, c *rdb.Client, f delayed.Filter, from Cursor, maxDue, maxItems, limit int) (StepResult, error) {
	var res StepResult
	if err := checkFilter(f); err != nil {
		return res, err
	}
	m, err := newMatcher(f)
	if err != nil {
		return res, err
	}
	lo, hi := bounds(f)
	if from.TS > lo {
		lo = from.TS
	} else if from.TS < lo {
		from = Cursor{TS: lo}
	}
	maxDue, maxItems = max(maxDue, 1), max(maxItems, 1)
	last := int64(0)
	visit := func(it delayed.Item) error {
		ts := it.At.Unix()
		if res.DueTimes == 0 || ts != last {
			res.DueTimes++
			if res.First == 0 {
				res.First = ts
			}
		}
		last, res.Last = ts, ts
		res.Read++
		if m.match(it) {
			res.Items = append(res.Items, it)
		}
		if (limit > 0 && len(res.Items) >= limit) || res.Read >= maxItems {
			res.Next = &Cursor{TS: ts, Pos: it.Pos + 1}
			return errStop
		}
		return nil
	}
	if from.Pos > 0 {
		// the rest of the bucket the last step stopped in, from its item
		// Pos on: its head is not read again
		err := bucketFrom(ctx, c, from.TS, from.Pos, visit)
		if errors.Is(err, errStop) {
			return res, nil
		}
		if err != nil {
			return res, err
		}
		if lo = from.TS + 1; lo > hi {
			return res, nil
		}
		maxDue = max(maxDue-1, 1)
	}
	// the due times this step may read: the first maxDue from the cursor
	page, err := c.DelayedBuckets(ctx, lo, hi, "", maxDue+1)
	if err != nil {
		return res, err
	}
	var tss []int64
	for _, p := range page {
		if !p.Bad {
			tss = append(tss, p.TS)
		}
	}
	if len(tss) == 0 {
		return res, nil
	}
	end := tss[len(tss)-1]
	switch {
	case len(tss) > maxDue:
		end = tss[maxDue-1]
		res.Next = &Cursor{TS: tss[maxDue]}
	case len(page) > maxDue:
		// members that name no time filled the page: go on after it
		res.Next = &Cursor{TS: end + 1}
	}
	err = scanBuckets(ctx, c, lo, end, visit)
	if errors.Is(err, errStop) {
		err = nil
	}
	return res, err
}

// bucketFrom calls fn for the items of bucket ts from position pos on, a
// page at a time; a bucket of another type holds no items.
func bucketFrom(ctx context.Context, c *rdb.Client, ts int64, pos int, fn func(delayed.Item) error) error {
	for start := pos; ; start += itemPage {
		page, err := c.DelayedItems(ctx, ts, start, start+itemPage-1)
		if wrongType(err) {
			return nil
		}
		if err != nil {
			return err
		}
		for i, raw := range page {
			if err := fn(decodeItem(ts, start+i, raw)); err != nil {
				return err
			}
		}
		if len(page) < itemPage {
			return nil
		}
	}
}
