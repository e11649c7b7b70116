package protocol

import (
	"strconv"
	"strings"
	"time"
)

// HistoryResolution is one series of the processed/failed history: counts
// summed per Step, kept in a ring of Slots buckets (so Slots*Step of it).
type HistoryResolution struct {
	// Name is the key suffix and the name the dashboard and API use:
	// "minute", "hour", "day".
	Name  string
	Step  time.Duration
	Slots int
}

// Span is how far back the resolution reaches.
func (r HistoryResolution) Span() time.Duration { return time.Duration(r.Slots) * r.Step }

// HistoryResolutions are the series kept: per minute for 72 hours, per hour
// for 90 days, per day for 2 years (730 days).
func HistoryResolutions() []HistoryResolution {
	return []HistoryResolution{
		{Name: "minute", Step: time.Minute, Slots: 72 * 60},
		{Name: "hour", Step: time.Hour, Slots: 90 * 24},
		{Name: "day", Step: 24 * time.Hour, Slots: 730},
	}
}

// History is the hash of one resolution's ring:
// <ns>:resque-go:history:<name>, field = the bucket's slot (bucket number
// modulo the ring's size), value = HistorySlot. A slot is overwritten when
// its bucket comes round again, so the hash never holds more fields than
// the ring has slots.
func (k Keys) History(resolution string) string { return k.key("resque-go", "history", resolution) }

// HistoryLast is the hash of the counters as last sampled: at (Unix
// seconds), processed and failed (stat:processed and stat:failed then).
func (k Keys) HistoryLast() string { return k.key("resque-go", "history_last") }

// HistorySlot is a ring slot's value: "<bucket>:<processed>:<failed>", the
// bucket being the Unix time divided by the step.
func HistorySlot(bucket, processed, failed int64) string {
	return strconv.FormatInt(bucket, 10) + ":" + strconv.FormatInt(processed, 10) + ":" + strconv.FormatInt(failed, 10)
}

// ParseHistorySlot reads a HistorySlot value.
func ParseHistorySlot(v string) (bucket, processed, failed int64, ok bool) {
	parts := strings.Split(v, ":")
	if len(parts) != 3 {
		return 0, 0, 0, false
	}
	var n [3]int64
	for i, p := range parts {
		x, err := strconv.ParseInt(p, 10, 64)
		if err != nil || x < 0 {
			return 0, 0, 0, false
		}
		n[i] = x
	}
	return n[0], n[1], n[2], true
}
