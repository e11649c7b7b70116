package client

import (
	"context"
	"strconv"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// HistoryResolution is one series of the processed/failed history kept in
// Redis: counts per Step, for Span (Slots buckets).
type HistoryResolution struct {
	// Name is "minute", "hour" or "day".
	Name  string
	Step  time.Duration
	Slots int
	Span  time.Duration
}

// HistoryResolutions are the series kept: per minute for 72 hours, per
// hour for 90 days, per day for 2 years (730 days). Each is one hash of
// at most Slots fields, overwritten in a ring, so the history's size in
// Redis is bounded whatever the load.
func HistoryResolutions() []HistoryResolution {
	var out []HistoryResolution
	for _, r := range protocol.HistoryResolutions() {
		out = append(out, HistoryResolution{Name: r.Name, Step: r.Step, Slots: r.Slots, Span: r.Span()})
	}
	return out
}

// HistoryPoint is one bucket: the jobs counted in stat:processed and
// stat:failed from Start to Start+Step. Processed counts failures too
// (Ruby's stat:processed does).
type HistoryPoint struct {
	Start     time.Time
	Processed int64
	Failed    int64
}

// History is one resolution's series at a time.
type History struct {
	HistoryResolution
	// Points are every bucket of the span, oldest first, ending with the
	// bucket holding the time asked for; a bucket nothing was counted in
	// is zero.
	Points []HistoryPoint
	// Processed and Failed are the sums over Points.
	Processed, Failed int64
}

// History reads the series of resolution ("minute", "hour", "day") up to
// now, in one Redis call. It fails with ErrInvalid for another name.
//
// The history is written by every resque-go worker process and
// scheduler as it refreshes its runtime record (SampleHistory), from the
// growth of stat:processed and stat:failed, which every Resque runtime
// increments: jobs of Ruby, PHP and Node workers are counted too, while at
// least one resque-go process (or SampleHistory caller) runs. Growth while
// none runs is counted in the bucket of the next sample.
func (c *Client) History(ctx context.Context, resolution string, now time.Time) (History, error) {
	var res HistoryResolution
	for _, r := range HistoryResolutions() {
		if r.Name == resolution {
			res = r
		}
	}
	if res.Name == "" {
		return History{}, invalidf("history resolution %q: want minute, hour or day", resolution)
	}
	slots, err := c.rdb.HistorySlots(ctx, res.Name)
	if err != nil {
		return History{}, wrap("history", err)
	}
	return buildHistory(res, slots, now), nil
}

// buildHistory lays the ring's slots out as the span's buckets; a slot
// holding a bucket outside the span (one lap old) counts as empty.
func buildHistory(res HistoryResolution, slots map[string]string, now time.Time) History {
	step := int64(res.Step / time.Second)
	cur := now.Unix() / step
	h := History{HistoryResolution: res, Points: make([]HistoryPoint, res.Slots)}
	first := cur - int64(res.Slots) + 1
	for i := range h.Points {
		h.Points[i].Start = time.Unix((first+int64(i))*step, 0).UTC()
	}
	for field, v := range slots {
		slot, err := strconv.ParseInt(field, 10, 64)
		b, p, f, ok := protocol.ParseHistorySlot(v)
		if err != nil || !ok || b < first || b > cur || b%int64(res.Slots) != slot {
			continue
		}
		pt := &h.Points[b-first]
		pt.Processed, pt.Failed = p, f
		h.Processed += p
		h.Failed += f
	}
	return h
}

// SampleHistory adds the growth of stat:processed and stat:failed since
// the last sample to the history, unless a sample was taken less than
// minGap ago (by any process): one Redis call, safe to make from any
// number of processes. resque-go processes call it as they refresh their
// runtime records; a program that runs no resque-go process next to Ruby
// or PHP workers can call it every few seconds to keep a history.
func (c *Client) SampleHistory(ctx context.Context, now time.Time, minGap time.Duration) error {
	_, err := c.rdb.SampleHistory(ctx, now, minGap)
	return wrap("sample history", err)
}

// HistoryMaxBytes bounds the memory the history takes in Redis: its four
// keys with every ring slot filled with the largest counts, measured with
// MEMORY USAGE (about 560 KiB on Redis 7.0; TestHistoryStorageIsBounded).
const HistoryMaxBytes = 768 << 10
