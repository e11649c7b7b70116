package delayedio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Tuning: pages of schedule members and items read per call, and distinct
// items removed per script call.
const (
	bucketPage = 500
	itemPage   = 5000
	removeStep = 1000
)

func newMatcher(f delayed.Filter) (matcher, error) {
	m := matcher{f: f}
	if f.Args != nil {
		a, err := protocol.ScriptJSON(f.Args)
		if err != nil {
			return m, fmt.Errorf("%w: args: %v", delayed.ErrBadFilter, err)
		}
		m.args = a
	}
	return m, nil
}

// decodeItem is the view of raw, due at ts, at position pos.
func decodeItem(ts int64, pos int, raw []byte) delayed.Item {
	it := delayed.Item{At: time.Unix(ts, 0), Pos: pos, Raw: raw}
	var v struct {
		Class json.RawMessage `json:"class"`
		Queue json.RawMessage `json:"queue"`
		Args  json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		it.Err = fmt.Errorf("not a JSON object: %v", err)
		return it
	}
	if json.Unmarshal(v.Class, &it.Class) != nil || it.Class == "" {
		it.Err = errors.New(`no "class" string`)
	}
	if (json.Unmarshal(v.Queue, &it.Queue) != nil || it.Queue == "") && it.Err == nil {
		it.Err = errors.New(`no "queue" string`)
	}
	it.Args = v.Args
	return it
}

// eachBucket calls fn for the scheduled buckets in [from, to], oldest first,
// reading the schedule a page at a time (fn may remove buckets). A member
// that is not a time names no bucket: it goes to bad (nil: skipped).
func eachBucket(ctx context.Context, c *rdb.Client, from, to int64, fn func(ts int64) error, bad func(rdb.ScheduleMember) error) error {
	fromScore := ""
	seen := map[string]bool{} // members with score fromScore already done
	for {
		page, err := c.DelayedBuckets(ctx, from, to, fromScore, bucketPage)
		if err != nil {
			return err
		}
		fresh := 0
		for _, m := range page {
			if seen[m.Member] {
				continue
			}
			fresh++
			switch {
			case !m.Bad:
				err = fn(m.TS)
			case bad != nil:
				err = bad(m)
			}
			if err != nil {
				return err
			}
		}
		if len(page) < bucketPage || fresh == 0 {
			return nil
		}
		// the next page starts at the last score, included: members that
		// are not times may share a score with others
		last := page[len(page)-1].Score
		if next := strconv.FormatFloat(last, 'g', -1, 64); next != fromScore {
			fromScore, seen = next, map[string]bool{}
		}
		for _, m := range page {
			if m.Score == last {
				seen[m.Member] = true
			}
		}
	}
}

// wrongType reports whether err says that a bucket holds another type.
func wrongType(err error) bool {
	var kt *rdb.KeyTypeError
	return errors.As(err, &kt)
}

// bucketItems reads bucket ts a page at a time, calling fn for each item.
func bucketItems(ctx context.Context, c *rdb.Client, ts int64, fn func(delayed.Item) error) error {
	for start := 0; ; start += itemPage {
		page, err := c.DelayedItems(ctx, ts, start, start+itemPage-1)
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

// errStop ends a walk early.
var errStop = errors.New("stop")

// Walk calls fn for each item f selects, oldest bucket first, in promotion
// order inside a bucket. It reads; movers and producers may run meanwhile
// (an item promoted while Walk reads its bucket can shift the rest). fn's
// error ends the walk and is returned.
func Walk(ctx context.Context, c *rdb.Client, f delayed.Filter, fn func(delayed.Item) error) error {
	if err := checkFilter(f); err != nil {
		return err
	}
	if indexed(f) {
		return walkIndex(ctx, c, f, fn)
	}
	m, err := newMatcher(f)
	if err != nil {
		return err
	}
	from, to := bounds(f)
	return scanBuckets(ctx, c, from, to, func(it delayed.Item) error {
		if m.match(it) {
			return fn(it)
		}
		return nil
	})
}

// indexLookup returns the buckets in range that the index names for the byte
// forms of f's item, each with the forms it names there, oldest first.
func indexLookup(ctx context.Context, c *rdb.Client, f delayed.Filter) ([]int64, map[int64][][]byte, error) {
	forms, err := protocol.DelayedItemForms(f.Class, f.Args, f.Queue)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: args: %v", delayed.ErrBadFilter, err)
	}
	index, err := c.DelayedIndex(ctx, forms)
	if err != nil {
		return nil, nil, err
	}
	from, to := bounds(f)
	byTS := map[int64][][]byte{}
	var order []int64
	for i, tss := range index {
		for _, ts := range tss {
			if ts < from || ts > to {
				continue
			}
			if _, ok := byTS[ts]; !ok {
				order = append(order, ts)
			}
			byTS[ts] = append(byTS[ts], forms[i])
		}
	}
	slices.Sort(order)
	return order, byTS, nil
}

func walkIndex(ctx context.Context, c *rdb.Client, f delayed.Filter, fn func(delayed.Item) error) error {
	order, byTS, err := indexLookup(ctx, c, f)
	if err != nil {
		return err
	}
	for _, ts := range order {
		forms := byTS[ts]
		pos, err := c.DelayedPositions(ctx, ts, forms)
		if wrongType(err) {
			continue // holds no items: a mover sets it aside
		}
		if err != nil {
			return err
		}
		var items []delayed.Item
		for i, ps := range pos {
			for _, p := range ps {
				items = append(items, decodeItem(ts, int(p), forms[i]))
			}
		}
		slices.SortFunc(items, func(a, b delayed.Item) int { return a.Pos - b.Pos })
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
	}
	return nil
}

// List returns the items f selects, as Walk orders them, skipping offset
// and stopping after limit (0: all).
func List(ctx context.Context, c *rdb.Client, f delayed.Filter, offset, limit int) ([]delayed.Item, error) {
	var out []delayed.Item
	n := 0
	err := Walk(ctx, c, f, func(it delayed.Item) error {
		n++
		if n <= offset {
			return nil
		}
		out = append(out, it)
		if limit > 0 && len(out) >= limit {
			return errStop
		}
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return out, err
}

// Count counts the items f selects and the buckets that hold them. With
// only a time range it reads the bucket lengths, not the items.
func Count(ctx context.Context, c *rdb.Client, f delayed.Filter) (delayed.Counts, error) {
	if err := checkFilter(f); err != nil {
		return delayed.Counts{}, err
	}
	var n delayed.Counts
	if matchesAll(f) {
		from, to := bounds(f)
		var page []int64
		flush := func() error {
			lens, err := c.DelayedBucketLens(ctx, page)
			if _, ok := rdb.BadKeys(err); ok {
				err = nil // buckets of another type hold no items
			}
			for _, l := range lens {
				if l > 0 {
					n.Items += l
					n.Buckets++
				}
			}
			page = page[:0]
			return err
		}
		err := eachBucket(ctx, c, from, to, func(ts int64) error {
			if page = append(page, ts); len(page) == bucketPage {
				return flush()
			}
			return nil
		}, nil)
		if err == nil {
			err = flush()
		}
		return n, err
	}
	last := int64(math.MinInt64)
	err := Walk(ctx, c, f, func(it delayed.Item) error {
		n.Items++
		if ts := it.At.Unix(); ts != last {
			n.Buckets++
			last = ts
		}
		return nil
	})
	return n, err
}

// Bucket returns the items due at t (its second), in promotion order.
func Bucket(ctx context.Context, c *rdb.Client, t time.Time) ([]delayed.Item, error) {
	var out []delayed.Item
	err := bucketItems(ctx, c, t.Unix(), func(it delayed.Item) error {
		out = append(out, it)
		return nil
	})
	return out, err
}

// Remove deletes the items f selects (every copy of each matching item in
// its bucket), with their timestamps:<item> index entries; a bucket left
// empty is taken off the schedule. Each step is atomic, one script for a
// bucket and up to a thousand distinct items (scripts/delayed_remove.lua),
// or, when every item of a bucket goes, up to a thousand items from its
// head (scripts/delayed_trim.lua), so movers, resque-scheduler and
// producers can go on meanwhile; an item promoted before its step is not
// removed. The zero Filter removes every
// item (Clear). progress, when not nil, is called after each bucket. On
// an error what was removed stays removed and is counted in the result.
func Remove(ctx context.Context, c *rdb.Client, f delayed.Filter, progress func(delayed.Progress)) (delayed.Removal, error) {
	if err := checkFilter(f); err != nil {
		return delayed.Removal{}, err
	}
	var p delayed.Progress
	bucketDone := func() error {
		p.Done++
		if progress != nil {
			progress(p)
		}
		return ctx.Err()
	}
	step := func(ts int64, items [][]byte) error {
		// at least one call: with no items it unschedules an empty bucket
		for first := true; first || len(items) > 0; first = false {
			chunk := items[:min(removeStep, len(items))]
			items = items[len(chunk):]
			r, err := c.RemoveDelayed(ctx, ts, chunk)
			if err != nil {
				return err
			}
			p.Removed += r.Removed
			p.Unindexed += r.Unindexed
			if r.Unscheduled {
				p.Unscheduled++
			}
		}
		return bucketDone()
	}
	if indexed(f) {
		order, byTS, err := indexLookup(ctx, c, f)
		if err != nil {
			return delayed.Removal{}, err
		}
		p.Buckets = int64(len(order))
		for _, ts := range order {
			if err := step(ts, byTS[ts]); err != nil && !wrongType(err) {
				return p.Removal, err
			}
		}
		return p.Removal, nil
	}
	m, err := newMatcher(f)
	if err != nil {
		return delayed.Removal{}, err
	}
	from, to := bounds(f)
	if p.Buckets, err = c.DelayedScheduleCount(ctx, from, to); err != nil {
		return delayed.Removal{}, err
	}
	// a schedule member that is not a time, or a bucket of another type,
	// holds no item: removing every item takes it off the schedule (the key
	// is left as it is), a filter skips it
	var bad func(rdb.ScheduleMember) error
	if matchesAll(f) {
		bad = func(sm rdb.ScheduleMember) error {
			if err := unschedule(ctx, c, sm, "", &p); err != nil {
				return err
			}
			return bucketDone()
		}
	}
	err = eachBucket(ctx, c, from, to, func(ts int64) error {
		for {
			// the whole bucket is read before anything in it is removed, so
			// the pages do not shift under the reading
			var snap, items [][]byte
			seen, all := map[string]bool{}, true
			err := bucketItems(ctx, c, ts, func(it delayed.Item) error {
				snap = append(snap, it.Raw)
				if !m.match(it) {
					all = false
				} else if !seen[string(it.Raw)] {
					seen[string(it.Raw)] = true
					items = append(items, it.Raw)
				}
				return nil
			})
			var kt *rdb.KeyTypeError
			if errors.As(err, &kt) {
				if bad == nil {
					return bucketDone()
				}
				if err := unschedule(ctx, c, rdb.ScheduleMember{Member: strconv.FormatInt(ts, 10), TS: ts}, kt.Type, &p); err != nil {
					return err
				}
				return bucketDone()
			}
			if err != nil {
				return err
			}
			switch {
			case len(items) == 0 && !matchesAll(f):
				return bucketDone()
			case len(snap) == 0 || !all:
				return step(ts, items)
			}
			// every item goes: from the head, each call costing its chunk
			// only (a mover popping meanwhile makes it read the bucket again)
			done, err := trimBucket(ctx, c, ts, snap, &p)
			if err != nil {
				return err
			}
			if done {
				return bucketDone()
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}, bad)
	return p.Removal, err
}

// unschedule takes sm, a schedule member that is not a time or (listType)
// whose bucket holds that type, off the schedule, counted in p.
func unschedule(ctx context.Context, c *rdb.Client, sm rdb.ScheduleMember, listType string, p *delayed.Progress) error {
	done, err := c.SetAsideDelayed(ctx, sm, listType, nil)
	if err != nil {
		return err
	}
	if done {
		p.Unscheduled++
	}
	return nil
}

// trimBucket removes the items of snap, the whole of bucket ts as read,
// from the head in chunks; it reports false when the head changed under it
// (what it removed until then is counted in p).
func trimBucket(ctx context.Context, c *rdb.Client, ts int64, snap [][]byte, p *delayed.Progress) (bool, error) {
	last := map[string]int{} // the chunk with the last copy of each item
	for i, raw := range snap {
		last[string(raw)] = i / removeStep
	}
	for start := 0; start < len(snap); start += removeStep {
		chunk := snap[start:min(start+removeStep, len(snap))]
		var unindex [][]byte
		seen := map[string]bool{}
		for _, raw := range chunk {
			if s := string(raw); !seen[s] && last[s] == start/removeStep {
				seen[s] = true
				unindex = append(unindex, raw)
			}
		}
		r, ok, err := c.TrimDelayed(ctx, ts, chunk, len(snap)-start-len(chunk), unindex)
		if err != nil || !ok {
			return false, err
		}
		p.Removed += r.Removed
		p.Unindexed += r.Unindexed
		if r.Unscheduled {
			p.Unscheduled++
		}
	}
	return true, nil
}

// Clear removes every delayed item, its index entries and every bucket
// from the schedule: Remove with the zero Filter. Items enqueued while it
// runs into a bucket it has already cleared stay, and so does their
// bucket's schedule entry (resque-scheduler's reset_delayed_queue deletes
// the schedule at the end, losing such items).
func Clear(ctx context.Context, c *rdb.Client, progress func(delayed.Progress)) (delayed.Removal, error) {
	return Remove(ctx, c, delayed.Filter{}, progress)
}

func checkFilter(f delayed.Filter) error {
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		return fmt.Errorf("%w: the time range ends (%s) before it begins (%s)", delayed.ErrBadFilter,
			f.To.UTC().Format(time.RFC3339), f.From.UTC().Format(time.RFC3339))
	}
	if f.Args == nil {
		return nil
	}
	if f.Class == "" {
		return fmt.Errorf("%w: args need a class", delayed.ErrBadFilter)
	}
	if !json.Valid(f.Args) {
		return fmt.Errorf("%w: args %q are not valid JSON", delayed.ErrBadFilter, clip(f.Args))
	}
	if !f.Scan && f.Queue == "" {
		return fmt.Errorf("%w: looking args up in the timestamps index needs the queue (the index is keyed by the item, queue included); or scan the buckets", delayed.ErrBadFilter)
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

// bounds are the first and last bucket timestamps in range.
func bounds(f delayed.Filter) (from, to int64) {
	from, to = math.MinInt64, math.MaxInt64
	if !f.From.IsZero() {
		from = f.From.Unix()
		if f.From.Nanosecond() > 0 {
			from++
		}
	}
	if !f.To.IsZero() {
		to = f.To.Unix()
	}
	return from, to
}

func indexed(f delayed.Filter) bool { return f.Args != nil && !f.Scan }

func matchesAll(f delayed.Filter) bool { return f.Queue == "" && f.Class == "" && f.Args == nil }

// matcher compares scanned items with a filter.
type matcher struct {
	f    delayed.Filter
	args []byte // f.Args as ScriptJSON writes it
}

func (m matcher) match(it delayed.Item) bool {
	if matchesAll(m.f) {
		return true
	}
	if it.Err != nil || (m.f.Class != "" && it.Class != m.f.Class) || (m.f.Queue != "" && it.Queue != m.f.Queue) {
		return false
	}
	if m.args == nil {
		return true
	}
	a, err := protocol.ScriptJSON(it.Args)
	return err == nil && bytes.Equal(a, m.args)
}
