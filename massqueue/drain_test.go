package massqueue_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

// 16 slots draining a static pool concurrently, as the runtime does (one
// finish-and-claim per job; slots that finish at once share a script
// call, whose claims rotate the ring in memory): every job runs exactly
// once, a capped source never has more jobs running than its limit, a
// paused source none, and the weighted and plain sources all drain.
func TestStaticConcurrentDrainKeepsLimitsAndPause(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if err := massqueue.SetLimit(ctx, e.c, "capped", 2); err != nil {
		t.Fatal(err)
	}
	if err := massqueue.SetWeight(ctx, e.c, "heavy", 3); err != nil {
		t.Fatal(err)
	}
	if err := massqueue.Pause(ctx, e.c, "paused"); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"capped": 300, "heavy": 600, "plain": 300, "one": 1, "paused": 50}
	for s, n := range want {
		e.fill(s, n)
	}
	e.allocate(e.allocator(mustConfig(t, staticConfig), newClock()))
	src := protocol.StaticPoolSource("general")
	var mu sync.Mutex
	seen := map[string]int{}
	ran := map[string]int{}
	var capped, maxCapped, pausedRan atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		w := e.worker(i, src)
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := rdb.ClaimArgs{WorkerID: w.id, Host: "h", Sources: []protocol.Source{src}, Now: time.Now()}
			res, err := e.c.Claim(ctx, a)
			for err == nil && res.Payload != nil {
				s := sourceOf(t, res.Payload)
				if s == "capped" {
					n := capped.Add(1)
					for m := maxCapped.Load(); n > m && !maxCapped.CompareAndSwap(m, n); m = maxCapped.Load() {
					}
				}
				if s == "paused" {
					pausedRan.Add(1)
				}
				mu.Lock()
				seen[string(res.Payload)]++
				ran[s]++
				mu.Unlock()
				time.Sleep(time.Millisecond) // the job's work: slots overlap
				if s == "capped" {
					capped.Add(-1)
				}
				o := rdb.Outcome{Seq: res.Seq, Kind: rdb.OutcomeOK, Class: "J", Now: time.Now()}
				var ferr error
				ferr, res, err = e.c.FinishAndClaim(ctx, w.id, "h", res.Source, o, a)
				if ferr != nil {
					err = ferr
				}
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for p, n := range seen {
		if n != 1 {
			t.Errorf("ran %d times: %s", n, p)
		}
	}
	for s, n := range want {
		if s == "paused" {
			continue
		}
		if ran[s] != n {
			t.Errorf("source %s: %d jobs ran, want %d", s, ran[s], n)
		}
	}
	if pausedRan.Load() != 0 {
		t.Errorf("%d jobs of the paused source ran", pausedRan.Load())
	}
	if m := maxCapped.Load(); m > 2 {
		t.Errorf("the capped source had %d jobs running at once, limit 2", m)
	}
	if n := e.int("LLEN", e.ns+":static:queue:general:paused"); n != 50 {
		t.Errorf("paused source's FIFO: %d jobs, want 50", n)
	}
}
