package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/internal/protocol"
)

// FailedJob is one entry of the failed list, as Ruby Resque, php-resque,
// node-resque or resque-go wrote it (resque-web shows the same list).
type FailedJob struct {
	// Index is the entry's position in the failed list (0 is the oldest),
	// as resque-web numbers them. Positions shift when entries before it
	// are removed.
	Index int64
	// Job is the job that failed; Job.Queue is the queue it came from.
	Job Job
	// FailedAt is when it failed; zero when the writer's time form is not
	// one this package reads unambiguously (see Raw).
	FailedAt  time.Time
	Exception string
	Error     string
	Backtrace []string
	// Worker is the id of the worker that ran it.
	Worker string
	// ProcessedBy is the host name resque-go records; "" from others.
	ProcessedBy string
	// Retried is set once the entry was retried (Ruby's requeue,
	// resque-web's "Retry", RetryFailed); RetriedAt is when, zero if
	// unreadable (Ruby 2 writes it without a zone).
	Retried   bool
	RetriedAt time.Time
	// Raw is the entry's bytes in the list.
	Raw []byte
	// Unreadable is set when the entry is not a JSON object; Error then
	// says why, and only Index and Raw mean anything.
	Unreadable bool
}

// FailedFilter selects failed entries; empty fields match everything.
type FailedFilter struct {
	Queue string
	Class string
	// Exception matches entries whose exception contains it.
	Exception string
}

// Failed returns up to limit entries of the failed list from position
// offset, oldest first; limit 0 means to the end. The entries are one
// consistent reading even while workers append and others remove.
func (c *Client) Failed(ctx context.Context, offset, limit int) ([]FailedJob, error) {
	return c.FailedWhere(ctx, FailedFilter{}, offset, limit)
}

// FailedWhere is Failed over the entries f selects: offset skips that many
// matching entries.
func (c *Client) FailedWhere(ctx context.Context, f FailedFilter, offset, limit int) ([]FailedJob, error) {
	if offset < 0 || limit < 0 {
		return nil, invalidf("Failed offset %d, limit %d: must not be negative", offset, limit)
	}
	entries, _, err := c.failed.List(ctx, failure.Filter{Queue: f.Queue, Class: f.Class, Exception: f.Exception}, offset, limit)
	if err != nil {
		return nil, wrap("failed", err)
	}
	out := make([]FailedJob, len(entries))
	for i, e := range entries {
		out[i] = failedJob(e)
	}
	return out, nil
}

// FailedCount is the length of the failed list.
func (c *Client) FailedCount(ctx context.Context) (int64, error) {
	n, err := c.rdb.Len(ctx, c.rdb.Keys().Failed())
	if err != nil {
		return 0, wrap("failed count", err)
	}
	return n, nil
}

// FailedEntry returns the entry at index (ErrNoSuchEntry when there is
// none).
func (c *Client) FailedEntry(ctx context.Context, index int64) (FailedJob, error) {
	e, err := c.failedEntry(ctx, index)
	if err != nil {
		return FailedJob{}, err
	}
	return failedJob(e), nil
}

// RetryFailed requeues the entry at index as Ruby's requeue does: the
// entry stays, marked with retried_at, and its job goes back to the end of
// its queue (the bytes its producer wrote, less resque-v3's failCount: an
// operator's retry starts a fresh attempt budget). It reads the entry, then
// retries it with RetryFailedJob, and returns it as read.
//
// To act on several entries, read them first (Failed) and pass each to
// RetryFailedJob or RemoveFailedJob: indexes shift as entries go.
func (c *Client) RetryFailed(ctx context.Context, index int64) (FailedJob, error) {
	e, err := c.failedEntry(ctx, index)
	if err != nil {
		return FailedJob{}, err
	}
	f := failedJob(e)
	return f, c.RetryFailedJob(ctx, f)
}

// RemoveFailed deletes the entry at index: it reads the entry, then
// removes it with RemoveFailedJob, and returns it as read.
func (c *Client) RemoveFailed(ctx context.Context, index int64) (FailedJob, error) {
	e, err := c.failedEntry(ctx, index)
	if err != nil {
		return FailedJob{}, err
	}
	f := failedJob(e)
	return f, c.RemoveFailedJob(ctx, f)
}

// RetryFailedJob retries f, an entry as Failed or FailedEntry read it (see
// RetryFailed). The entry is changed only if its bytes are still in the
// list, in one atomic step: if entries before it went meanwhile, it is
// found at its new index; if it was removed or changed, nothing happens
// and the error is ErrNoSuchEntry.
func (c *Client) RetryFailedJob(ctx context.Context, f FailedJob) error {
	if len(f.Raw) == 0 {
		return invalidf("RetryFailedJob needs an entry as Failed or FailedEntry read it")
	}
	if err := c.failed.Retry(ctx, failure.Parse(f.Index, f.Raw)); err != nil {
		return c.entryError("retry failed", f.Index, err)
	}
	return nil
}

// RemoveFailedJob deletes f, an entry as read, with the same checks as
// RetryFailedJob.
func (c *Client) RemoveFailedJob(ctx context.Context, f FailedJob) error {
	if len(f.Raw) == 0 {
		return invalidf("RemoveFailedJob needs an entry as Failed or FailedEntry read it")
	}
	if err := c.failed.Remove(ctx, failure.Parse(f.Index, f.Raw)); err != nil {
		return c.entryError("remove failed", f.Index, err)
	}
	return nil
}

func (c *Client) failedEntry(ctx context.Context, index int64) (failure.Entry, error) {
	if index < 0 {
		return failure.Entry{}, fmt.Errorf("%w: index %d (indexes count from 0)", ErrNoSuchEntry, index)
	}
	e, err := c.failed.Get(ctx, index)
	if errors.Is(err, failure.ErrGone) {
		if n, lerr := c.rdb.Len(ctx, c.rdb.Keys().Failed()); lerr == nil {
			return failure.Entry{}, fmt.Errorf("%w: index %d (the failed list has %s)", ErrNoSuchEntry, index, entries(n))
		}
	}
	if err != nil {
		return failure.Entry{}, c.entryError("failed entry", index, err)
	}
	return e, nil
}

// entryError maps failure's errors to ours.
func (c *Client) entryError(op string, index int64, err error) error {
	switch {
	case errors.Is(err, failure.ErrGone):
		return fmt.Errorf("%w: entry %d was removed or changed meanwhile", ErrNoSuchEntry, index)
	case errors.Is(err, failure.ErrNotRetryable):
		return fmt.Errorf("%w (index %d)", ErrNotRetryable, index)
	}
	return wrap(op, err)
}

// entries is "1 entry" or "n entries".
func entries(n int64) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

// failedJob turns failure's entry into ours.
func failedJob(e failure.Entry) FailedJob {
	f := FailedJob{Index: e.Index, FailedAt: parseTime(e.FailedAt), Exception: e.Exception, Error: e.Error,
		Backtrace: e.Backtrace, Worker: e.Worker, ProcessedBy: e.ProcessedBy,
		Retried: e.RetriedAt != "", RetriedAt: parseTime(e.RetriedAt), Raw: e.Raw, Unreadable: e.Unreadable}
	if e.Unreadable {
		return f
	}
	if len(e.Payload) == 0 {
		f.Job = Job{Queue: e.Queue, Invalid: "the failed entry holds no payload"}
		return f
	}
	f.Job = decodeJob(e.Queue, payloadBytes(e.Payload))
	return f
}

// payloadBytes is the job as it was queued: the payload object itself, or
// the original text of a payload recorded as a JSON string (resque-go
// records unreadable payloads that way).
func payloadBytes(p json.RawMessage) []byte {
	p = bytes.TrimSpace(p)
	if len(p) > 0 && p[0] == '"' {
		var s string
		if json.Unmarshal(p, &s) == nil {
			return protocol.UnembedPayload(s)
		}
	}
	return p
}

// FailedScan is one bounded step through the failed list, for a page that
// shows matches a step at a time instead of reading the whole list.
type FailedScan struct {
	// Entries are the entries the filter selected among those read.
	Entries []FailedJob
	// From is the first index read; Next the index the next step starts
	// at (Total when this step read to the end of the list); Total the
	// length of the list when the step began.
	From, Next, Total int64
}

// FailedScanStep reads at most read entries of the failed list from index
// from on (0 is the oldest) and returns those f selects, at most limit (0:
// no limit but read). Its work is bounded by read whatever the length of
// the list; pass Next as from to go on. Entries removed before from
// between two steps shift the list, so a later step may skip or repeat a
// few entries; within a step, the entries are one consistent reading.
func (c *Client) FailedScanStep(ctx context.Context, f FailedFilter, from int64, read, limit int) (FailedScan, error) {
	if from < 0 || read < 1 || limit < 0 {
		return FailedScan{}, invalidf("FailedScanStep from %d, read %d, limit %d: from and limit must not be negative, read must be positive", from, read, limit)
	}
	r, err := c.failed.Scan(ctx, failure.Filter{Queue: f.Queue, Class: f.Class, Exception: f.Exception}, from, read, limit)
	if err != nil {
		return FailedScan{}, wrap("failed", err)
	}
	out := FailedScan{From: r.From, Next: r.Next, Total: r.Total, Entries: make([]FailedJob, len(r.Entries))}
	for i, e := range r.Entries {
		out.Entries[i] = failedJob(e)
	}
	return out, nil
}
