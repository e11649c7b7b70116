package client_test

import (
	"os"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

// The history counts the growth of stat:processed and stat:failed (which
// Ruby workers increment too) in the bucket of the sample that sees it.
func TestHistoryBucketsCounterGrowth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	t0 := time.Date(2026, 1, 5, 10, 0, 30, 0, time.UTC)
	sample := func(at time.Time) {
		t.Helper()
		if err := e.c.SampleHistory(ctx(), at, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	e.do("SET", e.key("stat:processed"), 100) // before the first sample: not counted
	sample(t0)
	e.do("INCRBY", e.key("stat:processed"), 5)
	e.do("INCRBY", e.key("stat:failed"), 2)
	sample(t0.Add(10 * time.Second)) // 10:00:40
	e.do("INCRBY", e.key("stat:processed"), 3)
	sample(t0.Add(12 * time.Second))        // within the gap: skipped, counted by the next
	sample(t0.Add(40 * time.Second))        // 10:01:10
	e.do("SET", e.key("stat:processed"), 4) // reset (Resque::Stat.clear), then 4 jobs
	sample(t0.Add(2 * time.Hour))           // 12:00:30

	now := t0.Add(2*time.Hour + time.Minute)
	h, err := e.c.History(ctx(), "minute", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Points) != 72*60 || h.Step != time.Minute {
		t.Fatalf("minute history: %d points of %v", len(h.Points), h.Step)
	}
	last := h.Points[len(h.Points)-1]
	if !last.Start.Equal(time.Date(2026, 1, 5, 12, 1, 0, 0, time.UTC)) {
		t.Fatalf("last bucket starts %v", last.Start)
	}
	got := map[string][2]int64{}
	for _, p := range h.Points {
		if p.Processed != 0 || p.Failed != 0 {
			got[p.Start.Format("15:04")] = [2]int64{p.Processed, p.Failed}
		}
	}
	want := map[string][2]int64{"10:00": {5, 2}, "10:01": {3, 0}, "12:00": {4, 0}}
	if len(got) != len(want) || got["10:00"] != want["10:00"] || got["10:01"] != want["10:01"] || got["12:00"] != want["12:00"] {
		t.Fatalf("minute buckets %v, want %v", got, want)
	}
	if h.Processed != 12 || h.Failed != 2 {
		t.Fatalf("totals %d/%d, want 12/2", h.Processed, h.Failed)
	}
	hours, err := e.c.History(ctx(), "hour", now)
	if err != nil {
		t.Fatal(err)
	}
	n := len(hours.Points)
	if p := hours.Points[n-3]; p.Processed != 8 || p.Failed != 2 || p.Start.Hour() != 10 {
		t.Fatalf("hour 10: %+v", p)
	}
	if p := hours.Points[n-1]; p.Processed != 4 || p.Start.Hour() != 12 {
		t.Fatalf("hour 12: %+v", p)
	}
	days, err := e.c.History(ctx(), "day", now)
	if err != nil {
		t.Fatal(err)
	}
	if p := days.Points[len(days.Points)-1]; p.Processed != 12 || p.Failed != 2 || len(days.Points) != 730 {
		t.Fatalf("day: %+v of %d", p, len(days.Points))
	}
	if _, err := e.c.History(ctx(), "week", now); err == nil {
		t.Fatal("History(week) did not fail")
	}
}

// However long it is written, the history holds at most one field per
// ring slot in four keys, and a lap-old slot reads as empty.
func TestHistoryStorageIsBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	const big = 1_000_000_007 // long numbers: the largest values the rings hold
	run := func(step time.Duration, n int) {
		for range n {
			e.do("INCRBY", e.key("stat:processed"), big)
			e.do("INCRBY", e.key("stat:failed"), big)
			if err := e.c.SampleHistory(ctx(), at, 0); err != nil {
				t.Fatal(err)
			}
			at = at.Add(step)
		}
	}
	run(time.Minute, 72*60+500)
	run(time.Hour, 90*24+200)
	run(24*time.Hour, 730+100)

	var bytes int64
	for _, r := range client.HistoryResolutions() {
		key := e.key("resque-go:history:" + r.Name)
		if n := e.do("HLEN", key).(int64); n != int64(r.Slots) {
			t.Errorf("%s: %d fields, want %d", r.Name, n, r.Slots)
		}
		bytes += e.do("MEMORY", "USAGE", key, "SAMPLES", 0).(int64)
	}
	bytes += e.do("MEMORY", "USAGE", e.key("resque-go:history_last"), "SAMPLES", 0).(int64)
	keys := e.strs("KEYS", e.key("resque-go:*"))
	if len(keys) != 4 {
		t.Errorf("history keys %v, want 4", keys)
	}
	t.Logf("history in Redis: %d bytes in %d keys", bytes, len(keys))
	if bytes > client.HistoryMaxBytes {
		t.Errorf("history takes %d bytes, more than the 768 KiB documented", bytes)
	}
	// the last lap of the day ring is whole, each day one sample's growth
	days, err := e.c.History(ctx(), "day", at.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range days.Points {
		if p.Processed != big || p.Failed != big {
			t.Fatalf("day %v: %d/%d, want %d each", p.Start, p.Processed, p.Failed, big)
		}
	}
	// the minute ring's laps are months old: of its span, only the day
	// samples of the last 72 hours (at-24h, at-48h) show
	mins, err := e.c.History(ctx(), "minute", at)
	if err != nil {
		t.Fatal(err)
	}
	if mins.Processed != 2*big {
		t.Fatalf("minute history shows %d processed, want %d", mins.Processed, 2*big)
	}
}

// BenchmarkSampleHistory is the cost of one sample on the publish tick
// (a round trip): "skipped" is what every process but one pays per
// interval, "sampled" writes the three rings.
func BenchmarkSampleHistory(b *testing.B) {
	ns := redistest.Namespace(b)
	c, err := client.New(client.Options{URL: os.Getenv(redisEnv), Namespace: ns})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	raw, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: ns})
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	b.Run("sampled", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			if _, err := raw.Do(ctx(), "INCR", ns+":stat:processed"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			at = at.Add(time.Minute)
			if err := c.SampleHistory(ctx(), at, 5*time.Second); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("skipped", func(b *testing.B) {
		for b.Loop() {
			if err := c.SampleHistory(ctx(), at, 5*time.Second); err != nil {
				b.Fatal(err)
			}
		}
	})
}
