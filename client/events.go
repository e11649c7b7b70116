package client

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Event is one entry of the events stream (docs/events.md): a job's state
// change, written in the same step as the change by workers run with
// --events (and by EnqueueRaw with WithEvent).
type Event struct {
	// StreamID is the entry's id in the stream, "<ms>-<seq>".
	StreamID string
	// Time is when the stream took it (the id's milliseconds).
	Time time.Time
	// Event is enqueued, started, succeeded, failed, retried, rescheduled,
	// discarded (or cancelled, released where those are written).
	Event string
	// JobID is the job's "id" ("" for a job without one, as Ruby's).
	JobID, Class, Queue string
	// Worker is the worker id that claimed or finished it ("" for enqueued).
	Worker string
	// Attempt is the attempt (1 = first; 0 for enqueued); Duration how
	// long the attempt ran (its end's events).
	Attempt  int
	Duration time.Duration
}

// EventFilter selects events; an empty field selects all.
type EventFilter struct {
	Class, Queue, JobID string
	// From is where the subscription starts: "" (or "$") only events
	// appended from now on, "0" every event the stream still keeps, or an
	// Event.StreamID to go on after it.
	From string
}

func (f EventFilter) keep(e Event) bool {
	return (f.Class == "" || e.Class == f.Class) && (f.Queue == "" || e.Queue == f.Queue) &&
		(f.JobID == "" || e.JobID == f.JobID)
}

func toEvent(e rdb.Event) Event {
	f := e.Fields
	ms, _, _ := strings.Cut(e.StreamID, "-")
	n, _ := strconv.ParseInt(ms, 10, 64)
	attempt, _ := strconv.Atoi(f["attempt"])
	d, _ := strconv.ParseInt(f["duration_ms"], 10, 64)
	return Event{StreamID: e.StreamID, Time: time.UnixMilli(n), Event: f["event"], JobID: f["id"], Class: f["class"],
		Queue: f["queue"], Worker: f["worker"], Attempt: attempt, Duration: time.Duration(d) * time.Millisecond}
}

// Events subscribes to the events stream: the channel gets every event
// that passes filter, in the stream's order, until ctx ends; it is then
// closed. A read that fails (Redis down) is tried again a second later.
// A reader slower than the stream loses the entries trimmed before it
// reads them.
func (c *Client) Events(ctx context.Context, filter EventFilter) (<-chan Event, error) {
	last := filter.From
	if last == "" || last == "$" {
		id, err := c.rdb.LastEventID(ctx)
		if err != nil {
			return nil, wrap("events", err)
		}
		last = id
	}
	ch := make(chan Event, 64)
	go func() {
		defer close(ch)
		for ctx.Err() == nil {
			evs, err := c.rdb.WaitEvents(ctx, last, 1000, 5*time.Second)
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				continue
			}
			for _, re := range evs {
				last = re.StreamID
				e := toEvent(re)
				if !filter.keep(e) {
					continue
				}
				select {
				case ch <- e:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return ch, nil
}

// State is the state e leaves its job in, as `resque-go job show` says
// it: queued (enqueued, released, requeued), running (started), delayed
// (retried, rescheduled), or the end e names (succeeded, failed,
// discarded, cancelled).
func (e Event) State() string { return protocol.EventState(e.Event) }

// DefaultEventsWindow is how many of the stream's newest entries
// RecentEvents reads to filter: `events tail` reads as many.
const DefaultEventsWindow = 10000

// RecentEventsResult is what RecentEvents read.
type RecentEventsResult struct {
	// Events are the newest that pass the filter, oldest first.
	Events []Event
	// Newest is the id of the stream's newest entry ("" when it has
	// none): where a reader of the events to come goes on from.
	Newest string
	// Key is the stream's key; Type its type: "stream", "none" when it
	// does not exist (events are off, or none written yet), or another
	// type, which no reader can read (Events is then empty).
	Key, Type string
}

// RecentEvents returns the newest n events that pass filter (its From is
// ignored) among the stream's newest window entries (window <= 0:
// DefaultEventsWindow; at least n; n <= 0: none, only Newest): the stream
// has no index by class, queue or job, so the filter is applied to a
// bounded read. Two round trips.
func (c *Client) RecentEvents(ctx context.Context, filter EventFilter, n, window int) (RecentEventsResult, error) {
	typ, key, err := c.rdb.EventsKeyType(ctx)
	if err != nil {
		return RecentEventsResult{}, wrap("recent events", err)
	}
	res := RecentEventsResult{Key: key, Type: typ, Events: []Event{}}
	if typ != "stream" {
		return res, nil
	}
	if window <= 0 {
		window = DefaultEventsWindow
	}
	evs, newest, err := c.rdb.NewestEvents(ctx, func(e rdb.Event) bool { return filter.keep(toEvent(e)) }, n, window)
	if err != nil {
		return res, wrap("recent events", err)
	}
	res.Newest = newest
	for _, e := range evs {
		res.Events = append(res.Events, toEvent(e))
	}
	return res, nil
}

// AfterEvents returns up to count events after the stream id after ("":
// from the oldest), oldest first: a reader that lost its place (a page
// reconnecting) reads what it missed.
func (c *Client) AfterEvents(ctx context.Context, after string, count int) ([]Event, error) {
	evs, err := c.rdb.Events(ctx, after, count)
	if err != nil {
		return nil, wrap("events", err)
	}
	out := make([]Event, 0, len(evs))
	for _, e := range evs {
		out = append(out, toEvent(e))
	}
	return out, nil
}

// Keep reports whether e passes f (its From aside).
func (f EventFilter) Keep(e Event) bool { return f.keep(e) }

// JobEvents returns the events of the job with id id that the stream still
// keeps, oldest first. It reads the whole stream, a page at a time.
func (c *Client) JobEvents(ctx context.Context, id string) ([]Event, error) {
	evs, err := c.rdb.JobEvents(ctx, id)
	if err != nil {
		return nil, wrap("job events", err)
	}
	out := make([]Event, 0, len(evs))
	for _, e := range evs {
		out = append(out, toEvent(e))
	}
	return out, nil
}

// TaggedJob is a job in a tag's index: its id and when it was enqueued.
type TaggedJob struct {
	ID         string
	EnqueuedAt time.Time
}

// JobsByTag lists the jobs enqueued with tag that have not ended (a job
// leaves its tags' indexes when it succeeds, fails for good or is
// discarded), newest first: at most limit from offset (limit <= 0: all),
// and how many the index holds.
func (c *Client) JobsByTag(ctx context.Context, tag string, offset, limit int) ([]TaggedJob, int, error) {
	jobs, total, err := c.rdb.TagJobs(ctx, tag, offset, limit)
	if err != nil {
		return nil, 0, wrap("jobs by tag", err)
	}
	out := make([]TaggedJob, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, TaggedJob{ID: j.ID, EnqueuedAt: j.At})
	}
	return out, total, nil
}

// TagCount is a tag and how many jobs its index holds.
type TagCount struct {
	Tag  string `json:"tag"`
	Jobs int64  `json:"jobs"`
}

// TagsPage lists tags a page at a time. Tags have no index of their own,
// so it scans the keyspace in bounded steps: from cursor ("" to begin) it
// makes at most 10 SCAN calls of about 1,000 keys each, stopping once it
// has found want tags (want <= 0: 50), and returns the tags found, sorted,
// and the cursor to go on from ("" when every key has been looked at). A
// page may be empty while next is not; as with SCAN, a tag that exists
// for the whole walk is listed at least once, and may be listed twice if
// Redis resizes its table meanwhile.
func (c *Client) TagsPage(ctx context.Context, cursor string, want int) (tags []TagCount, next string, err error) {
	if want <= 0 {
		want = 50
	}
	found, next, err := c.rdb.TagsPage(ctx, cursor, want, 10)
	if err != nil {
		return nil, "", wrap("tags", err)
	}
	tags = make([]TagCount, 0, len(found))
	for _, t := range found {
		tags = append(tags, TagCount{Tag: t.Tag, Jobs: t.Jobs})
	}
	return tags, next, nil
}
