package rdb

import (
	"strconv"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// effectEventsLayout is effect_events.lua's section of the finish: the
// end of an attempt appended to the events stream.
var effectEventsLayout = jobpathLayout{Module: "effect_events",
	Keys: []string{"<ns>:resque-go:events"}, Args: []string{"tag", "event", "maxlen", "max-age", "job-id", "attempt", "duration"}}

// EventsConfig turns the events stream on for a client's claims and
// finishes (docs/events.md). The zero value is off.
type EventsConfig struct {
	On bool
	// MaxLen is how many entries the stream keeps, about (whole nodes are
	// trimmed); default protocol.DefaultEventsMaxLen.
	MaxLen int
	// MaxAge, when set, also trims entries older than it.
	MaxAge time.Duration
}

// eventsParts is what the claim and the finish send while events are on,
// built once.
type eventsParts struct {
	stream, maxLen, maxAge, queuePrefix any
}

// newEventsParts builds the parts of cfg, nil when it is off.
func newEventsParts(k protocol.Keys, cfg EventsConfig) *eventsParts {
	if !cfg.On {
		return nil
	}
	n := cfg.MaxLen
	if n <= 0 {
		n = protocol.DefaultEventsMaxLen
	}
	return &eventsParts{stream: k.Events(), maxLen: strconv.Itoa(n),
		maxAge: strconv.FormatInt(max(cfg.MaxAge.Milliseconds(), 0), 10), queuePrefix: k.QueuePrefix()}
}

// eventOf is the event an outcome writes: one for the attempt's end.
func eventOf(o Outcome) string {
	switch o.Kind {
	case OutcomeFail:
		if o.Cancelled {
			return protocol.EventCancelled
		}
		return protocol.EventFailed
	case OutcomeRetry:
		return protocol.EventRetried
	case OutcomeReschedule:
		return protocol.EventRescheduled
	case OutcomeDiscard:
		return protocol.EventDiscarded
	}
	return protocol.EventSucceeded
}

// appendEffectEvents appends effectEventsLayout's section for o.
func appendEffectEvents(e *eventsParts, keys, args []any, o Outcome) ([]any, []any) {
	return append(keys, e.stream), append(args, "e", eventOf(o), e.maxLen, e.maxAge, o.JobID,
		strconv.Itoa(max(o.Attempt, 1)), strconv.FormatInt(o.Duration.Milliseconds(), 10))
}
