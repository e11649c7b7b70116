// Package failure reads and operates on the failed list: list and show
// entries, retry them (Ruby's requeue: retried_at set, the original payload
// pushed back to its queue), remove and clear them. Every change to one
// entry re-checks its bytes in the same atomic step, so a list that moves
// underneath (workers appending, others removing) never makes it act on the
// wrong job.
package failure

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Entry is one failed entry, decoded tolerantly: Ruby, php-resque,
// node-resque and resque-go write different key orders and time formats.
type Entry struct {
	Index       int64           `json:"index"`
	FailedAt    string          `json:"failed_at"`
	Payload     json.RawMessage `json:"payload"`
	Class       string          `json:"class"`
	Exception   string          `json:"exception"`
	Error       string          `json:"error"`
	Backtrace   []string        `json:"backtrace"`
	Worker      string          `json:"worker"`
	Queue       string          `json:"queue"`
	ProcessedBy string          `json:"processed_by,omitempty"`
	RetriedBy   string          `json:"retried_by,omitempty"`
	RetriedAt   string          `json:"retried_at,omitempty"`
	// Raw is the entry's bytes in the list.
	Raw []byte `json:"-"`
	// Unreadable is set when the entry is not a JSON object.
	Unreadable bool `json:"unreadable,omitempty"`
}

// Parse decodes an entry; an entry that is not JSON is returned with
// Unreadable set rather than an error, so listing never fails on garbage.
func Parse(index int64, raw []byte) Entry {
	e := Entry{Index: index, Raw: raw}
	var f struct {
		FailedAt    string          `json:"failed_at"`
		Payload     json.RawMessage `json:"payload"`
		Exception   string          `json:"exception"`
		Error       string          `json:"error"`
		Backtrace   json.RawMessage `json:"backtrace"`
		Worker      string          `json:"worker"`
		Queue       string          `json:"queue"`
		ProcessedBy string          `json:"processed_by"`
		RetriedBy   string          `json:"retried_by"`
		RetriedAt   string          `json:"retried_at"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		e.Unreadable, e.Error = true, "unreadable entry: "+err.Error()
		return e
	}
	e.FailedAt, e.Payload, e.Exception, e.Error = f.FailedAt, f.Payload, f.Exception, f.Error
	e.Worker, e.Queue, e.ProcessedBy, e.RetriedBy, e.RetriedAt = f.Worker, f.Queue, f.ProcessedBy, f.RetriedBy, f.RetriedAt
	// backtrace: an array of lines, or (some writers) one string
	if err := json.Unmarshal(f.Backtrace, &e.Backtrace); err != nil {
		var s string
		if json.Unmarshal(f.Backtrace, &s) == nil && s != "" {
			e.Backtrace = strings.Split(s, "\n")
		}
	}
	if p, err := protocol.DecodePayload(e.payloadBytes()); err == nil {
		e.Class = p.Class
	}
	return e
}

// payloadBytes is the job as it was queued: the payload object itself, or
// the original text of a payload that was recorded as a JSON string.
func (e Entry) payloadBytes() []byte {
	p := bytes.TrimSpace(e.Payload)
	if len(p) > 0 && p[0] == '"' {
		var s string
		if json.Unmarshal(p, &s) == nil {
			return []byte(s)
		}
	}
	return p
}

// Filter selects entries; empty fields match everything.
type Filter struct {
	Queue     string
	Class     string
	Exception string // substring of the exception name
}

// Empty reports whether the filter selects every entry.
func (f Filter) Empty() bool { return f == Filter{} }

// Match reports whether e is selected.
func (f Filter) Match(e Entry) bool {
	return (f.Queue == "" || e.Queue == f.Queue) &&
		(f.Class == "" || e.Class == f.Class) &&
		(f.Exception == "" || strings.Contains(e.Exception, f.Exception))
}

// ErrGone is returned when the selected entry is no longer in the list.
var ErrGone = errors.New("failure: entry is no longer in the failed list")

// ErrNotRetryable is returned for an entry without a queue or payload.
var ErrNotRetryable = errors.New("failure: entry has no queue or payload to retry")

// Store operates on one namespace's failed list.
type Store struct {
	c   *rdb.Client
	now func() time.Time
}

// New returns a Store; now defaults to time.Now.
func New(c *rdb.Client, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{c: c, now: now}
}

// readBatch is how many entries one LRANGE reads.
const readBatch = 1000

// List returns the entries matching f, skipping offset matches and
// returning at most limit (0: all), and the number of entries in the list.
func (s *Store) List(ctx context.Context, f Filter, offset, limit int) ([]Entry, int64, error) {
	total, err := s.c.Len(ctx, s.c.Keys().Failed())
	if err != nil {
		return nil, 0, err
	}
	var out []Entry
	skipped := 0
	for start := int64(0); start < total; start += readBatch {
		items, err := s.c.List(ctx, s.c.Keys().Failed(), int(start), int(start+readBatch-1))
		if err != nil {
			return nil, 0, err
		}
		for i, raw := range items {
			e := Parse(start+int64(i), raw)
			if !f.Match(e) {
				continue
			}
			if skipped < offset {
				skipped++
				continue
			}
			out = append(out, e)
			if limit > 0 && len(out) >= limit {
				return out, total, nil
			}
		}
	}
	return out, total, nil
}

// Get returns the entry at index.
func (s *Store) Get(ctx context.Context, index int64) (Entry, error) {
	items, err := s.c.List(ctx, s.c.Keys().Failed(), int(index), int(index))
	if err != nil {
		return Entry{}, err
	}
	if len(items) == 0 {
		return Entry{}, fmt.Errorf("failure: no entry at index %d: %w", index, ErrGone)
	}
	return Parse(index, items[0]), nil
}

// Retry requeues one entry as read: retried_at is set on it (replaced in
// place when present, else appended, as Ruby does) and the original
// payload bytes are pushed to its queue. Ruby pushes a re-encoded
// {"class","args"}; resque-go pushes the bytes the producer wrote, so ids and
// extra fields survive.
func (s *Store) Retry(ctx context.Context, e Entry) error {
	if e.Unreadable || e.Queue == "" || len(e.Payload) == 0 {
		return fmt.Errorf("%w (index %d)", ErrNotRetryable, e.Index)
	}
	retried, err := protocol.WithFields(e.Raw, [2]string{"retried_at", string(protocol.MarshalString(protocol.FormatFailedAt(s.now())))})
	if err != nil {
		return fmt.Errorf("failure: entry %d: %w", e.Index, err)
	}
	idx, err := s.c.RetryFailed(ctx, e.Raw, e.Index, retried, e.payloadBytes(), e.Queue)
	if err != nil {
		return err
	}
	if idx < 0 {
		return fmt.Errorf("failure: retry entry %d: %w", e.Index, ErrGone)
	}
	return nil
}

// Remove deletes one entry as read.
func (s *Store) Remove(ctx context.Context, e Entry) error {
	idx, err := s.c.RemoveEntry(ctx, s.c.Keys().Failed(), e.Raw, e.Index)
	if err != nil {
		return err
	}
	if idx < 0 {
		return fmt.Errorf("failure: remove entry %d: %w", e.Index, ErrGone)
	}
	return nil
}

// Result counts what a bulk operation did.
type Result struct {
	Done    int `json:"done"`    // entries retried or removed
	Gone    int `json:"gone"`    // selected entries that vanished meanwhile
	Skipped int `json:"skipped"` // entries that could not be retried
}

// RetryMatching retries every entry matching f, each exactly once.
func (s *Store) RetryMatching(ctx context.Context, f Filter) (Result, error) {
	return s.each(ctx, f, s.Retry)
}

// RemoveMatching removes every entry matching f, each exactly once.
func (s *Store) RemoveMatching(ctx context.Context, f Filter) (Result, error) {
	return s.each(ctx, f, s.Remove)
}

// Clear empties the failed list (f empty: one DEL, as Ruby's clear) or
// removes the entries matching f.
func (s *Store) Clear(ctx context.Context, f Filter) (Result, error) {
	if !f.Empty() {
		return s.RemoveMatching(ctx, f)
	}
	n, err := s.c.Len(ctx, s.c.Keys().Failed())
	if err != nil {
		return Result{}, err
	}
	if err := s.c.Delete(ctx, s.c.Keys().Failed()); err != nil {
		return Result{}, err
	}
	return Result{Done: int(n)}, nil
}

// each snapshots the selected entries first, then applies op to each; an
// entry that moved is found again by its bytes, one that vanished is
// counted as gone.
func (s *Store) each(ctx context.Context, f Filter, op func(context.Context, Entry) error) (Result, error) {
	entries, _, err := s.List(ctx, f, 0, 0)
	if err != nil {
		return Result{}, err
	}
	var r Result
	for _, e := range entries {
		err := op(ctx, e)
		switch {
		case err == nil:
			r.Done++
		case errors.Is(err, ErrGone):
			r.Gone++
		case errors.Is(err, ErrNotRetryable):
			r.Skipped++
		default:
			return r, err
		}
	}
	return r, nil
}
