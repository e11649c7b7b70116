package statsio_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/statsio"
)

// Publishers sample the history on their refresh: the first sample
// remembers the counters, the next counts their growth, and of two
// publishers refreshing within one interval only one writes.
func TestPublisherSamplesHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var results []rdb.HistorySample
	clock := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	cfg := statsio.PublisherConfig{Hostname: "histhost", PID: 101, Interval: time.Second, Now: now,
		OnHistory: func(res rdb.HistorySample, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("sample: %v", err)
			}
			results = append(results, res)
		}}
	p, _ := e.publisher(t, cfg)
	cfg.PID = 102
	p2, _ := e.publisher(t, cfg)
	seen := func() []rdb.HistorySample {
		mu.Lock()
		defer mu.Unlock()
		return append([]rdb.HistorySample{}, results...)
	}

	p.Start(context.Background())
	eventually(t, "first sample", 10*time.Second, func() bool { return len(seen()) >= 1 })
	if r := seen()[0]; r.Result != "first" {
		t.Fatalf("first sample: %+v", r)
	}
	// the clock stands still: the second publisher finds the sample fresh
	p2.Start(context.Background())
	eventually(t, "second publisher's sample", 10*time.Second, func() bool { return len(seen()) >= 2 })
	for _, r := range seen()[1:] {
		if r.Result != "skipped" {
			t.Fatalf("a sample within the interval: %+v", r)
		}
	}
	// jobs end (any runtime's), time goes on: the growth is counted once
	e.do("INCRBY", e.key("stat:processed"), 7)
	e.do("INCRBY", e.key("stat:failed"), 2)
	mu.Lock()
	clock = clock.Add(90 * time.Second)
	n := len(results)
	mu.Unlock()
	eventually(t, "a sample with the growth", 10*time.Second, func() bool {
		for _, r := range seen()[n:] {
			if r.Result == "sampled" {
				return true
			}
		}
		return false
	})
	var counted int64
	for _, r := range seen() {
		counted += r.Processed
	}
	if counted != 7 {
		t.Fatalf("growth counted %d times 7 in all, want 7 once: %+v", counted, seen())
	}
}
