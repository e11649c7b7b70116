package rdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

var enqueueTrackedScript = loadScript("enqueue_tracked.lua", -1)

// TrackedJob is a job to push with tags or with its enqueued event.
type TrackedJob struct {
	Queue, Class, ID string
	Payload          []byte
	Tags             []string
	// TagMaxLen is how many ids one tag's index keeps (default
	// protocol.DefaultTagMaxLen).
	TagMaxLen int
	// Event writes the enqueued event, with this stream's retention.
	Event  bool
	Events EventsConfig
	Now    time.Time
}

// EnqueueTracked pushes j to its queue, adds its id to its tags' indexes
// and, with Event, appends its enqueued event, in one step.
func (c *Client) EnqueueTracked(ctx context.Context, j TrackedJob) error {
	tagMax := j.TagMaxLen
	if tagMax <= 0 {
		tagMax = protocol.DefaultTagMaxLen
	}
	now := j.Now
	if now.IsZero() {
		now = time.Now()
	}
	keys := []any{c.keys.Queue(j.Queue), c.keys.Queues()}
	for _, t := range j.Tags {
		keys = append(keys, c.keys.Tag(t))
	}
	maxLen, maxAge := "", "0"
	if j.Event {
		ev := j.Events
		ev.On = true
		p := newEventsParts(c.keys, ev)
		keys = append(keys, p.stream)
		maxLen, maxAge = p.maxLen.(string), p.maxAge.(string)
	}
	args := make([]any, 0, 1+len(keys)+9)
	args = append(append(args, len(keys)), keys...)
	args = append(args, j.Queue, j.Payload, j.ID, j.Class, now.UnixMilli(), len(j.Tags), tagMax, maxLen, maxAge)
	if _, err := c.eval(ctx, enqueueTrackedScript, args...); err != nil {
		return fmt.Errorf("rdb: enqueue to %q: %w", j.Queue, err)
	}
	return nil
}

// Event is one entry of the events stream: its stream id (milliseconds-
// sequence) and its fields.
type Event struct {
	StreamID string
	Fields   map[string]string
}

// Events reads up to count entries of the events stream after the id
// after ("" or "-": from the oldest; "$" is not accepted here), oldest
// first.
func (c *Client) Events(ctx context.Context, after string, count int) ([]Event, error) {
	start := "-"
	if after != "" && after != "-" {
		start = "(" + after
	}
	v, err := c.do(ctx, "XRANGE", c.keys.Events(), start, "+", "COUNT", count)
	if err != nil {
		return nil, fmt.Errorf("rdb: events: %w", c.keyTypeError(ctx, err, c.keys.Events(), "stream"))
	}
	return parseEntries(v)
}

// LatestEvents reads the newest count entries of the events stream,
// oldest first.
func (c *Client) LatestEvents(ctx context.Context, count int) ([]Event, error) {
	v, err := c.do(ctx, "XREVRANGE", c.keys.Events(), "+", "-", "COUNT", count)
	if err != nil {
		return nil, fmt.Errorf("rdb: events: %w", c.keyTypeError(ctx, err, c.keys.Events(), "stream"))
	}
	evs, err := parseEntries(v)
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	return evs, err
}

// NewestEvents reads the newest window entries of the events stream and
// returns the newest n of them that keep accepts (nil keep: all), oldest
// first: a reader's filter over a bounded read, as `events tail` and the
// dashboard do (the stream has no index by class, queue or job). newest is
// the id of the stream's newest entry ("" when it has none), where a
// reader of what comes next starts.
func (c *Client) NewestEvents(ctx context.Context, keep func(Event) bool, n, window int) (evs []Event, newest string, err error) {
	all, err := c.LatestEvents(ctx, max(window, n, 1))
	if err != nil || len(all) == 0 {
		return nil, "", err
	}
	newest = all[len(all)-1].StreamID
	for i := len(all) - 1; i >= 0 && len(evs) < n; i-- {
		if keep == nil || keep(all[i]) {
			evs = append(evs, all[i])
		}
	}
	slices.Reverse(evs)
	return evs, newest, nil
}

// EventsKeyType is the type of the events stream's key ("none" when it
// does not exist, "stream", or another type a reader cannot read), and the
// key.
func (c *Client) EventsKeyType(ctx context.Context) (typ, key string, err error) {
	key = c.keys.Events()
	typ, err = redis.String(c.do(ctx, "TYPE", key))
	if err != nil {
		return "", key, fmt.Errorf("rdb: events: %w", err)
	}
	return typ, key, nil
}

// WaitEvents blocks for up to wait for entries after the id after ("$":
// only entries appended from now on) and returns them (none when the wait
// ended first).
func (c *Client) WaitEvents(ctx context.Context, after string, count int, wait time.Duration) ([]Event, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("rdb: events: %w", err)
	}
	defer conn.Close()
	// the connection's read timeout bounds the blocked read: block for less
	if limit := c.timeout - time.Second; wait > limit && limit > 0 {
		wait = limit
	}
	ctx, cancel := context.WithTimeout(ctx, wait+c.timeout)
	defer cancel()
	v, err := redis.DoContext(conn, ctx, "XREAD", "COUNT", count, "BLOCK", max(wait.Milliseconds(), 1),
		"STREAMS", c.keys.Events(), after)
	if err != nil {
		return nil, fmt.Errorf("rdb: events: %w", c.keyTypeError(ctx, err, c.keys.Events(), "stream"))
	}
	if v == nil {
		return nil, nil
	}
	streams, err := redis.Values(v, nil)
	if err != nil || len(streams) == 0 {
		return nil, err
	}
	s, err := redis.Values(streams[0], nil)
	if err != nil || len(s) != 2 {
		return nil, fmt.Errorf("rdb: events: unexpected XREAD reply")
	}
	return parseEntries(s[1])
}

// LastEventID is the id of the stream's newest entry, "0-0" when there is
// none: where a reader that wants only new entries starts.
func (c *Client) LastEventID(ctx context.Context) (string, error) {
	evs, err := c.LatestEvents(ctx, 1)
	if err != nil || len(evs) == 0 {
		return "0-0", err
	}
	return evs[0].StreamID, nil
}

// JobEvents reads the events of job id, oldest first: it reads the whole
// stream (at most its maxlen entries), a page at a time.
func (c *Client) JobEvents(ctx context.Context, id string) ([]Event, error) {
	var out []Event
	after := ""
	for {
		page, err := c.Events(ctx, after, 1000)
		if err != nil {
			return nil, err
		}
		for _, e := range page {
			if e.Fields["id"] == id {
				out = append(out, e)
			}
		}
		if len(page) < 1000 {
			return out, nil
		}
		after = page[len(page)-1].StreamID
	}
}

// TaggedJob is one entry of a tag's index.
type TaggedJob struct {
	ID string
	At time.Time // when it was enqueued
}

// TagJobs reads the ids in tag t's index, newest first, from offset, at
// most count (count <= 0: all), and how many the index holds.
func (c *Client) TagJobs(ctx context.Context, t string, offset, count int) ([]TaggedJob, int, error) {
	key := c.keys.Tag(t)
	stop := -1
	if count > 0 {
		stop = offset + count - 1
	}
	v, err := redis.Values(c.do(ctx, "ZREVRANGE", key, offset, stop, "WITHSCORES"))
	if err != nil {
		return nil, 0, fmt.Errorf("rdb: tag %q: %w", t, c.keyTypeError(ctx, err, key, "zset"))
	}
	total, err := redis.Int(c.do(ctx, "ZCARD", key))
	if err != nil {
		return nil, 0, fmt.Errorf("rdb: tag %q: %w", t, err)
	}
	out := make([]TaggedJob, 0, len(v)/2)
	for i := 0; i+1 < len(v); i += 2 {
		id, _ := redis.String(v[i], nil)
		ms, _ := redis.Int64(v[i+1], nil)
		out = append(out, TaggedJob{ID: id, At: time.UnixMilli(ms)})
	}
	return out, total, nil
}

// parseEntries turns an XRANGE-shaped reply into events.
func parseEntries(v any) ([]Event, error) {
	entries, err := redis.Values(v, nil)
	if err != nil {
		if errors.Is(err, redis.ErrNil) {
			return nil, nil
		}
		return nil, fmt.Errorf("rdb: events: %w", err)
	}
	out := make([]Event, 0, len(entries))
	for _, e := range entries {
		parts, err := redis.Values(e, nil)
		if err != nil || len(parts) != 2 {
			continue // not an entry: never stops the others
		}
		id, _ := redis.String(parts[0], nil)
		kv, _ := redis.Strings(parts[1], nil)
		f := make(map[string]string, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			f[kv[i]] = kv[i+1]
		}
		out = append(out, Event{StreamID: id, Fields: f})
	}
	return out, nil
}

// TagCount is a tag and how many ids its index holds.
type TagCount struct {
	Tag  string
	Jobs int64
}

// tagScanCount is SCAN's COUNT for TagsPage: each call looks at about this
// many keys of the keyspace.
const tagScanCount = 1000

// TagsPage lists the tags whose index a bounded part of the keyspace holds:
// SCAN from cursor ("" or "0": the start), at most calls SCAN calls or
// until want tags are found, then one pipelined ZCARD per tag. There is no
// index of tags, so a page never scans the whole keyspace: next is the
// cursor to go on from, "" when the scan is complete. A key of another
// type under the prefix is left out.
func (c *Client) TagsPage(ctx context.Context, cursor string, want, calls int) (tags []TagCount, next string, err error) {
	if cursor == "" {
		cursor = "0"
	}
	prefix := c.keys.TagPrefix()
	var keys []string
	for i := 0; i < max(calls, 1) && len(keys) < want; i++ {
		v, err := redis.Values(c.do(ctx, "SCAN", cursor, "MATCH", c.keys.TagPattern(), "COUNT", tagScanCount))
		if err != nil {
			return nil, "", fmt.Errorf("rdb: tags: %w", err)
		}
		cursor, _ = redis.String(v[0], nil)
		found, _ := redis.Strings(v[1], nil)
		keys = append(keys, found...)
		if cursor == "0" {
			break
		}
	}
	if cursor != "0" {
		next = cursor
	}
	counts := make([]int64, len(keys))
	steps := make([]pipeStep, len(keys))
	for i, k := range keys {
		steps[i] = pipeStep{[]any{"ZCARD", k}, intInto(&counts[i])}
	}
	bad, err := c.pipelineKeep(ctx, steps)
	if err != nil {
		return nil, "", fmt.Errorf("rdb: tags: %w", err)
	}
	skip := map[int]bool{}
	for _, b := range bad {
		skip[b.step] = true
	}
	for i, k := range keys {
		if !skip[i] {
			tags = append(tags, TagCount{Tag: strings.TrimPrefix(k, prefix), Jobs: counts[i]})
		}
	}
	slices.SortFunc(tags, func(a, b TagCount) int { return strings.Compare(a.Tag, b.Tag) })
	return tags, next, nil
}
