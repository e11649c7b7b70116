package failureio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
)

// TrimmerConfig configures a Trimmer. Zero values mean the documented
// defaults.
type TrimmerConfig struct {
	Client *rdb.Client
	// Owner identifies this process in the retention lease (a worker id).
	Owner     string
	Retention failure.Retention
	// Interval between passes; default 1 minute. Only the holder of the
	// retention lease (protocol.Keys.RetentionLease) trims; the lease is
	// renewed at every step, so a long pass keeps it.
	Interval time.Duration
	// Step is the most entries one script call removes; default 100.
	Step int
	// Pause between steps, so that a large first trim never holds Redis
	// for long; default 20 ms.
	Pause  time.Duration
	Logger *zerolog.Logger
	Now    func() time.Time
	// OnTrim, when set, is called with the entries each step removed
	// (tests); OnPass after every pass, held or not.
	OnTrim func(list string, removed [][]byte)
	OnPass func(held bool, results []TrimResult)
}

// TrimResult is what one pass did to one list.
type TrimResult struct {
	List    string `json:"list"`    // "failed" or "retries"
	Removed int    `json:"removed"` // entries trimmed
	// Undated are entries kept by the age limit because their failed_at
	// could not be read.
	Undated int `json:"undated"`
	// Changed are entries judged for trimming that changed (were retried)
	// or moved before the removal: left in the list.
	Changed int `json:"changed"`
}

// Trimmer trims the failed and retries lists as Retention says, from one
// elected process per namespace, in small steps. It removes only the exact
// entries it judged (by index and bytes, in one script call), so that a
// concurrent retry or remove never makes it remove another entry, and an
// entry a retry is moving at that moment is either retried or trimmed,
// never both. The lists stay lists of the same entries: resque-web and
// Ruby's Resque::Failure read them as before.
type Trimmer struct {
	cfg    TrimmerConfig
	log    zerolog.Logger
	runner service.Runner
}

// NewTrimmer returns a trimmer; Start runs it.
func NewTrimmer(cfg TrimmerConfig) (*Trimmer, error) {
	if cfg.Client == nil {
		return nil, errors.New("failureio: TrimmerConfig.Client is required")
	}
	if cfg.Owner == "" {
		return nil, errors.New("failureio: TrimmerConfig.Owner is required")
	}
	if err := cfg.Retention.Validate(); err != nil {
		return nil, err
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Minute
	}
	if cfg.Step <= 0 {
		cfg.Step = 100
	}
	if cfg.Pause <= 0 {
		cfg.Pause = 20 * time.Millisecond
	}
	cfg.Now = service.Clock(cfg.Now)
	cfg.Logger = service.Logger(cfg.Logger)
	return &Trimmer{cfg: cfg, log: *cfg.Logger}, nil
}

// Start runs the trimmer until Stop or ctx ends.
func (t *Trimmer) Start(ctx context.Context) { t.runner.Start(ctx, t.loop) }

// Stop stops the trimmer and waits for it.
func (t *Trimmer) Stop() { t.runner.Stop() }

func (t *Trimmer) lease(ctx context.Context) (bool, error) {
	return t.cfg.Client.Lease(ctx, t.cfg.Client.Keys().RetentionLease(), t.cfg.Owner, 2*t.cfg.Interval, false)
}

func (t *Trimmer) loop(ctx context.Context) {
	for {
		held, err := t.lease(ctx)
		if err != nil && ctx.Err() == nil {
			t.log.Warn().Err(err).Msg("retention lease failed")
		}
		var results []TrimResult
		if held {
			results, err = t.Pass(ctx)
			if err != nil && ctx.Err() == nil {
				t.log.Warn().Err(err).Msg("retention pass failed")
			}
		}
		if t.cfg.OnPass != nil {
			t.cfg.OnPass(held, results)
		}
		if !service.Sleep(ctx, t.cfg.Interval) {
			if held {
				callCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, _ = t.cfg.Client.Lease(callCtx, t.cfg.Client.Keys().RetentionLease(), t.cfg.Owner, 0, true)
				cancel()
			}
			return
		}
	}
}

// Pass trims each list once (the caller holds the lease) and returns what
// it did; an error stops the pass (the next goes on).
func (t *Trimmer) Pass(ctx context.Context) ([]TrimResult, error) {
	r, k := t.cfg.Retention, t.cfg.Client.Keys()
	var out []TrimResult
	for _, l := range []struct {
		name, key string
		max       int
		age       time.Duration
	}{
		{"failed", k.Failed(), r.FailedMax, r.FailedMaxAge},
		{"retries", k.Retries(), r.RetriesMax, r.RetriesMaxAge},
	} {
		if l.max <= 0 && l.age <= 0 {
			continue
		}
		res, err := t.trimList(ctx, l.name, l.key, l.max, l.age)
		out = append(out, res)
		if res.Removed > 0 || res.Changed > 0 {
			t.log.Info().Str("list", l.name).Int("removed", res.Removed).Int("changed", res.Changed).Msg("trimmed")
		}
		if res.Undated > 0 {
			t.log.Warn().Str("list", l.name).Int("undated", res.Undated).
				Msg("kept entries whose failed_at cannot be read (the age limit does not apply to them)")
		}
		if err != nil {
			return out, fmt.Errorf("failureio: trim %s: %w", l.name, err)
		}
	}
	return out, nil
}

// trimList trims one list in steps of at most Step entries, from the head.
// off is where the next window starts: the entries before it are kept
// (undated, or changed since they were judged).
func (t *Trimmer) trimList(ctx context.Context, name, key string, max int, age time.Duration) (TrimResult, error) {
	res := TrimResult{List: name}
	c := t.cfg.Client
	var cutoff time.Time
	if age > 0 {
		cutoff = t.cfg.Now().Add(-age)
	}
	var archive *os.File
	if t.cfg.Retention.Archive != "" {
		f, err := os.OpenFile(t.cfg.Retention.Archive, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return res, fmt.Errorf("archive: %w", err)
		}
		defer f.Close()
		archive = f
	}
	off := 0
	for first := true; ; first = false {
		if !first {
			if !service.Sleep(ctx, t.cfg.Pause) {
				return res, ctx.Err()
			}
			// keep the lease through a long pass; stop if another took it
			if held, err := t.lease(ctx); err != nil || !held {
				return res, err
			}
		}
		over := 0
		if max > 0 {
			n, err := c.Len(ctx, key)
			if err != nil {
				return res, err
			}
			over = int(n) - max
		}
		if over <= 0 && age <= 0 {
			return res, nil
		}
		window, err := c.List(ctx, key, off, off+t.cfg.Step-1)
		if err != nil {
			return res, err
		}
		var judged []rdb.HeadEntry
		processed, stop := 0, false
		for i, raw := range window {
			if over > 0 {
				over--
			} else if age > 0 {
				at := protocol.ParseStoredTime(protocol.ParseFailedEntry(0, raw).FailedAt)
				if at.IsZero() {
					res.Undated++
					processed++
					continue
				}
				if !at.Before(cutoff) {
					stop = true
					break
				}
			} else {
				stop = true
				break
			}
			judged = append(judged, rdb.HeadEntry{Index: int64(off + i), Raw: raw})
			processed++
		}
		if len(judged) > 0 {
			if archive != nil {
				if err := writeArchive(archive, name, t.cfg.Now(), judged); err != nil {
					return res, fmt.Errorf("archive: %w", err)
				}
			}
			removed, err := c.TrimHead(ctx, key, judged)
			if err != nil {
				return res, err
			}
			res.Removed += len(removed)
			res.Changed += len(judged) - len(removed)
			if t.cfg.OnTrim != nil && len(removed) > 0 {
				t.cfg.OnTrim(name, removedEntries(judged, removed))
			}
			off += processed - len(removed)
		} else {
			off += processed
		}
		if stop || len(window) < t.cfg.Step {
			return res, nil
		}
	}
}

// removedEntries are the bytes of the judged entries whose indices the
// script returned.
func removedEntries(judged []rdb.HeadEntry, idx []int64) [][]byte {
	out := make([][]byte, 0, len(idx))
	for _, e := range judged {
		for _, i := range idx {
			if e.Index == i {
				out = append(out, e.Raw)
				break
			}
		}
	}
	return out
}

// archiveLine is one line of the archive file.
type archiveLine struct {
	List       string          `json:"list"`
	ArchivedAt string          `json:"archived_at"`
	Entry      json.RawMessage `json:"entry,omitempty"`
	// EntryText holds an entry that is not JSON, as a string.
	EntryText *string `json:"entry_text,omitempty"`
}

// writeArchive appends one JSON line per entry and fsyncs the file.
func writeArchive(f *os.File, list string, now time.Time, entries []rdb.HeadEntry) error {
	var buf bytes.Buffer
	at := now.UTC().Format(time.RFC3339)
	for _, e := range entries {
		line := archiveLine{List: list, ArchivedAt: at}
		var compact bytes.Buffer
		if json.Valid(e.Raw) && json.Compact(&compact, e.Raw) == nil {
			line.Entry = compact.Bytes()
		} else {
			s := string(e.Raw)
			line.EntryText = &s
		}
		b, err := json.Marshal(line)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return err
	}
	return f.Sync()
}
