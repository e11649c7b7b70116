package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Events is the namespace's stream of job state changes (docs/events.md),
// written only while events are on.
func (k Keys) Events() string { return k.key("resque-go", "events") }

// Tag is the index of the jobs enqueued with tag t: a sorted set of job
// ids scored by enqueue time in milliseconds, bounded, a job's id removed
// when the job ends.
func (k Keys) Tag(t string) string { return k.key("resque-go", "tag", t) }

// TagPrefix is what Tag(t) puts before t.
func (k Keys) TagPrefix() string { return k.key("resque-go", "tag", "") }

// TagPattern matches every tag's index (SCAN MATCH).
func (k Keys) TagPattern() string { return k.key("resque-go", "tag", "*") }

// Event names, the "event" field of an entry of the events stream.
const (
	EventEnqueued    = "enqueued"
	EventStarted     = "started"
	EventSucceeded   = "succeeded"
	EventFailed      = "failed"
	EventRetried     = "retried"
	EventRescheduled = "rescheduled"
	EventDiscarded   = "discarded"
	// EventRequeued: a job put back at the head of its queue without a
	// finish (a hard stop's requeue, a dead worker's recovery).
	EventRequeued  = "requeued"
	EventCancelled = "cancelled"
	EventReleased  = "released"
)

// Defaults of the events stream and the tag indexes.
const (
	// DefaultEventsMaxLen is how many entries the events stream keeps
	// (about: trimmed by whole nodes, XADD MAXLEN ~).
	DefaultEventsMaxLen = 100000
	// DefaultTagMaxLen is how many job ids one tag's index keeps: the
	// oldest go first when more are enqueued.
	DefaultTagMaxLen = 10000
	// MaxTags is how many tags one job may carry.
	MaxTags = 16
)

// CheckTag refuses a tag that is empty, longer than 200 bytes, or holds a
// space or a control character (it is part of a key name and of a
// command line).
func CheckTag(t string) error {
	if t == "" || len(t) > 200 {
		return fmt.Errorf("protocol: tag %q: want 1 to 200 bytes", t)
	}
	if strings.ContainsFunc(t, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("protocol: tag %q: no spaces or control characters", t)
	}
	return nil
}

// Tags are the job's tags: the payload's "tags" field, an array of
// strings resque-go writes (Resque, php-resque and node-resque workers
// ignore it). A payload without one, or with one of another shape, has
// none.
func (p *Payload) Tags() []string {
	raw, ok := p.Fields["tags"]
	if !ok {
		return nil
	}
	var tags []string
	if json.Unmarshal(raw, &tags) != nil {
		return nil
	}
	out := tags[:0]
	for _, t := range tags {
		if CheckTag(t) == nil && len(out) < MaxTags {
			out = append(out, t)
		}
	}
	return out
}

// checkTags checks the tags of a payload to build.
func checkTags(tags []string, plain bool) error {
	if len(tags) == 0 {
		return nil
	}
	if plain {
		return fmt.Errorf("protocol: a plain payload carries no tags")
	}
	if len(tags) > MaxTags {
		return fmt.Errorf("protocol: %d tags: at most %d", len(tags), MaxTags)
	}
	for _, t := range tags {
		if err := CheckTag(t); err != nil {
			return err
		}
	}
	return nil
}

// EventState is the state a job's last event leaves it in: queued,
// running, delayed, or the end it names (succeeded, failed, discarded,
// cancelled). `resque-go job show` and the dashboard's job view say it.
func EventState(event string) string {
	switch event {
	case EventEnqueued, EventReleased, EventRequeued:
		return "queued"
	case EventStarted:
		return "running"
	case EventRetried, EventRescheduled:
		return "delayed"
	}
	return event // succeeded, failed, discarded, cancelled
}
