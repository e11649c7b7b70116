package failure

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
)

// Retention says how much of the failed and retries lists to keep. The
// zero value keeps everything (no trimming: the default). A Max trims the
// oldest entries (the head of the list, where every writer appends at the
// tail) beyond that many; a MaxAge trims the entries whose failed_at is
// older, from the head, up to the first younger one. An entry whose
// failed_at cannot be read is kept by MaxAge (and counted in the log); Max
// still counts it.
type Retention struct {
	FailedMax     int           `json:"failed_max,omitempty"`
	FailedMaxAge  time.Duration `json:"failed_max_age,omitempty"`
	RetriesMax    int           `json:"retries_max,omitempty"`
	RetriesMaxAge time.Duration `json:"retries_max_age,omitempty"`
	// Archive, when set, is a file each trimmed entry is appended to first,
	// as one JSON line ({"list","archived_at","entry"}), written and
	// fsynced before the entries leave Redis. A crash between the two, or
	// an entry retried in between (it is then not removed), leaves a line
	// for an entry still in the list; never an entry removed without its
	// line.
	Archive string `json:"archive,omitempty"`
}

// On reports whether r trims anything.
func (r Retention) On() bool {
	return r.FailedMax > 0 || r.FailedMaxAge > 0 || r.RetriesMax > 0 || r.RetriesMaxAge > 0
}

// Validate refuses negative limits and an archive without a limit; its
// errors name the field.
func (r Retention) Validate() error {
	for _, f := range []struct {
		name string
		bad  bool
	}{
		{"FailedMax", r.FailedMax < 0}, {"FailedMaxAge", r.FailedMaxAge < 0},
		{"RetriesMax", r.RetriesMax < 0}, {"RetriesMaxAge", r.RetriesMaxAge < 0},
	} {
		if f.bad {
			return fmt.Errorf("failure: Retention.%s: must not be negative", f.name)
		}
	}
	if r.Archive != "" && !r.On() {
		return errors.New("failure: Retention.Archive is set but no limit is: nothing would be trimmed")
	}
	return nil
}

// retentionJSON is Retention's JSON form: ages as strings ("720h0m0s", or
// as ParseAge reads them).
type retentionJSON struct {
	*retentionAlias
	FailedMaxAge  string `json:"failed_max_age,omitempty"`
	RetriesMaxAge string `json:"retries_max_age,omitempty"`
}

type retentionAlias Retention

func ageString(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

// MarshalJSON writes the ages as Go durations.
func (r Retention) MarshalJSON() ([]byte, error) {
	return json.Marshal(retentionJSON{retentionAlias: (*retentionAlias)(&r),
		FailedMaxAge: ageString(r.FailedMaxAge), RetriesMaxAge: ageString(r.RetriesMaxAge)})
}

// UnmarshalJSON reads what MarshalJSON writes, and ages as ParseAge reads
// them ("30d").
func (r *Retention) UnmarshalJSON(data []byte) error {
	var a retentionAlias
	j := retentionJSON{retentionAlias: &a}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	var err error
	if a.FailedMaxAge, err = ParseAge(j.FailedMaxAge); err != nil {
		return fmt.Errorf("failed_max_age: %w", err)
	}
	if a.RetriesMaxAge, err = ParseAge(j.RetriesMaxAge); err != nil {
		return fmt.Errorf("retries_max_age: %w", err)
	}
	*r = Retention(a)
	return nil
}

// ParseAge reads an age: days ("30d"), weeks ("2w") or a Go duration
// ("720h", "90m"); "" is 0.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	for unit, d := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			f, err := strconv.ParseFloat(n, 64)
			if err != nil || f <= 0 || f > 100*365 {
				return 0, fmt.Errorf("%q: want an age such as 30d, 2w or 12h", s)
			}
			return time.Duration(f * float64(d)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want an age such as 30d, 2w or 12h", s)
	}
	return d, nil
}

// TrimmerConfig configures a Trimmer. Zero values mean the documented
// defaults.
type TrimmerConfig struct {
	Client *rdb.Client
	// Owner identifies this process in the retention lease (a worker id).
	Owner     string
	Retention Retention
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
		return nil, errors.New("failure: TrimmerConfig.Client is required")
	}
	if cfg.Owner == "" {
		return nil, errors.New("failure: TrimmerConfig.Owner is required")
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
			return out, fmt.Errorf("failure: trim %s: %w", l.name, err)
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
