package failureio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Store operates on one namespace's failed list.
type Store struct {
	c     *rdb.Client
	now   func() time.Time
	batch int64 // entries one LRANGE reads; 0: readBatch (tests set less)
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

// consistentReads is how many times List reads the list batch by batch
// before it falls back to one LRANGE of the whole list.
const consistentReads = 3

// List returns the entries matching f, skipping offset matches and
// returning at most limit (0: all), and the number of entries in the list.
// The entries are one consistent view of the list: if entries before the
// part already read are removed meanwhile (which shifts the rest), the
// reading starts over, so no entry is skipped.
func (s *Store) List(ctx context.Context, f failure.Filter, offset, limit int) ([]failure.Entry, int64, error) {
	batch := s.batch
	if batch <= 0 {
		batch = readBatch
	}
	for attempt := 1; ; attempt++ {
		if attempt > consistentReads {
			batch = 0 // the list keeps moving: read it in one command
		}
		out, total, moved, err := s.list(ctx, f, offset, limit, batch)
		if err != nil || !moved {
			return out, total, err
		}
	}
}

// list reads the entries present when it starts, batch by batch (0: all at
// once). Each batch after the first also reads the last entry of the one
// before; moved reports that it is no longer there.
func (s *Store) list(ctx context.Context, f failure.Filter, offset, limit int, batch int64) (out []failure.Entry, total int64, moved bool, err error) {
	key := s.c.Keys().Failed()
	total, err = s.c.Len(ctx, key)
	if err != nil {
		return nil, 0, false, err
	}
	if batch <= 0 {
		batch = max(total, 1)
	}
	skipped, first := 0, int64(0)
	if f.Empty() {
		// every entry matches: read the page itself, not what precedes it
		skipped, first = offset, int64(offset)
		if limit > 0 {
			batch = min(batch, int64(limit))
		}
	}
	may := prefilter(f)
	var last []byte
	for start := first; start < total; start += batch {
		from := start
		if last != nil {
			from--
		}
		items, err := s.c.List(ctx, key, int(from), int(start+batch-1))
		if err != nil {
			return nil, 0, false, err
		}
		if last != nil {
			if len(items) == 0 || !bytes.Equal(items[0], last) {
				return nil, 0, true, nil
			}
			items = items[1:]
		}
		for i, raw := range items {
			if !may(raw) {
				continue
			}
			e := failure.Parse(start+int64(i), raw)
			if !f.Match(e) {
				continue
			}
			if skipped < offset {
				skipped++
				continue
			}
			out = append(out, e)
			if limit > 0 && len(out) >= limit {
				return out, total, false, nil
			}
		}
		if len(items) == 0 {
			break // the list shrank at its end
		}
		last = items[len(items)-1]
	}
	return out, total, false, nil
}

// Get returns the entry at index (0 is the oldest).
func (s *Store) Get(ctx context.Context, index int64) (failure.Entry, error) {
	if index < 0 {
		return failure.Entry{}, fmt.Errorf("failure: index %d: indexes count from 0", index)
	}
	items, err := s.c.List(ctx, s.c.Keys().Failed(), int(index), int(index))
	if err != nil {
		return failure.Entry{}, err
	}
	if len(items) == 0 {
		return failure.Entry{}, fmt.Errorf("failure: no entry at index %d: %w", index, failure.ErrGone)
	}
	return failure.Parse(index, items[0]), nil
}

// Retry requeues one entry as read: retried_at is set on it (replaced in
// place when present, else appended, as Ruby does) and the original
// payload bytes are pushed to its queue. Ruby pushes a re-encoded
// {"class","args"}; resque-go pushes the bytes the producer wrote, so ids and
// extra fields survive, less failCount: the job gets a fresh attempt budget. If the list moved, the entry is found by its bytes;
// ErrGone when it is no longer there (removed, or changed by someone else).
func (s *Store) Retry(ctx context.Context, e failure.Entry) error {
	_, err := s.retry(ctx, e, e.Index)
	return err
}

// retry is Retry looking first at index at; it returns where the entry was.
func (s *Store) retry(ctx context.Context, e failure.Entry, at int64) (int64, error) {
	if !e.Retryable() {
		return 0, fmt.Errorf("%w (index %d)", failure.ErrNotRetryable, e.Index)
	}
	retried, err := protocol.WithFields(e.Raw, [2]string{"retried_at", string(protocol.MarshalString(protocol.FormatFailedAt(s.now())))})
	if err != nil {
		return 0, fmt.Errorf("failure: entry %d: %w", e.Index, err)
	}
	// An operator's retry starts a fresh attempt budget: no failCount in the
	// payload, no attempt counter left for its class and args.
	payload, digest := protocol.FreshAttempts(e.PayloadBytes()), ""
	if e.Queue == "" {
		// a mass-queue job that names no queue (resqu-client's delayed job):
		// back through unassigned with an id, as its producer enqueues
		if payload, err = protocol.WithJobID(payload, s.now()); err != nil {
			return 0, fmt.Errorf("failure: entry %d: %w", e.Index, err)
		}
	}
	if p, err := protocol.DecodePayload(payload); err == nil {
		digest = protocol.AttemptsDigest(p)
	}
	idx, err := s.c.RetryFailed(ctx, e.Raw, max(at, 0), retried, payload, e.Queue, digest)
	if err != nil {
		return 0, err
	}
	if idx < 0 {
		return 0, fmt.Errorf("failure: retry entry %d: %w", e.Index, failure.ErrGone)
	}
	return idx, nil
}

// Remove deletes one entry as read (found by its bytes if the list moved;
// ErrGone when it is no longer there).
func (s *Store) Remove(ctx context.Context, e failure.Entry) error {
	_, err := s.remove(ctx, e, e.Index)
	return err
}

// remove is Remove looking first at index at; it returns where the entry was.
func (s *Store) remove(ctx context.Context, e failure.Entry, at int64) (int64, error) {
	idx, err := s.c.RemoveEntry(ctx, s.c.Keys().Failed(), e.Raw, max(at, 0))
	if err != nil {
		return 0, err
	}
	if idx < 0 {
		return 0, fmt.Errorf("failure: remove entry %d: %w", e.Index, failure.ErrGone)
	}
	return idx, nil
}

// RetryMatching retries every entry matching f, each exactly once.
func (s *Store) RetryMatching(ctx context.Context, f failure.Filter) (failure.Result, error) {
	return s.each(ctx, f, s.retry, 0)
}

// RemoveMatching removes every entry matching f, each exactly once.
func (s *Store) RemoveMatching(ctx context.Context, f failure.Filter) (failure.Result, error) {
	return s.each(ctx, f, s.remove, -1)
}

// Clear empties the failed list (f empty: one DEL, as Ruby's clear) or
// removes the entries matching f.
func (s *Store) Clear(ctx context.Context, f failure.Filter) (failure.Result, error) {
	if !f.Empty() {
		return s.RemoveMatching(ctx, f)
	}
	n, err := s.c.Len(ctx, s.c.Keys().Failed())
	if err != nil {
		return failure.Result{}, err
	}
	if err := s.c.Delete(ctx, s.c.Keys().Failed()); err != nil {
		return failure.Result{}, err
	}
	return failure.Result{Done: int(n)}, nil
}

// each snapshots the selected entries first, then applies op to each; an
// entry that moved is found again by its bytes, one that vanished is
// counted as gone. The snapshot is in list order, so each op tells where
// the next entry should be now: its own effect on the list (grow: -1 for a
// removal) plus any shift found meanwhile. Without that, every entry after
// the first removal would be searched for from the head of the list.
func (s *Store) each(ctx context.Context, f failure.Filter, op func(context.Context, failure.Entry, int64) (int64, error), grow int64) (failure.Result, error) {
	entries, _, err := s.List(ctx, f, 0, 0)
	if err != nil {
		return failure.Result{}, err
	}
	var r failure.Result
	shift := int64(0)
	for _, e := range entries {
		idx, err := op(ctx, e, e.Index+shift)
		switch {
		case err == nil:
			r.Done++
			shift = idx - e.Index + grow
		case errors.Is(err, failure.ErrGone):
			r.Gone++
		case errors.Is(err, failure.ErrNotRetryable):
			r.Skipped++
		default:
			return r, err
		}
	}
	return r, nil
}
