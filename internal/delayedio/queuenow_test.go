package delayedio_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/delayedio"
)

// Queueing resque-scheduler's items now pushes each, once, with the bytes
// Ruby Resque pushed for the job (the item without "queue", as a mover
// promotes it), leaves the rest of the bucket and the schedule entry
// while the bucket holds more, and takes the emptied bucket off the
// schedule with its index entries; an item no longer there is
// ErrNotFound with nothing enqueued.
func TestQueueNowResqueSchedulerItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.load(fixtures.MustLoad("resque-scheduler-5.0.0", "delayed-enqueue"))
	k := e.c.Keys()
	const ts = 1795299965
	items := e.strs("LRANGE", k.Delayed(ts), 0, -1)
	if len(items) != 2 {
		t.Fatalf("fixture bucket holds %d items, want 2", len(items))
	}
	ruby := fixtures.MustLoad("ruby-resque-3.0.0", "enqueue").List("resque:queue:mail")[0]
	now := time.Unix(1700000000, 0)

	r, err := delayedio.QueueNow(ctx, e.c, ts, []byte(items[0]), now)
	if err != nil || r.Queue != "mail" || r.Left != 1 || r.Unscheduled || r.Unassigned {
		t.Fatalf("queue now: %+v, %v", r, err)
	}
	if q := e.strs("LRANGE", k.Queue("mail"), 0, -1); len(q) != 1 || q[0] != ruby {
		t.Fatalf("queue:mail = %q, want Ruby Resque's payload %q", q, ruby)
	}
	if !contains(e.strs("SMEMBERS", k.Queues()), "mail") {
		t.Error("mail not in the queues set")
	}
	if got := e.strs("LRANGE", k.Delayed(ts), 0, -1); len(got) != 1 || got[0] != items[1] {
		t.Errorf("bucket = %q, want the other item %q", got, items[1])
	}
	if n := e.do("EXISTS", k.Timestamps([]byte(items[0]))).(int64); n != 0 {
		t.Error("the queued item's index entry is left")
	}
	if n := e.do("SISMEMBER", k.Timestamps([]byte(items[1])), fmt.Sprintf("delayed:%d", ts)).(int64); n != 1 {
		t.Error("the other item's index entry is gone")
	}
	if e.do("ZSCORE", k.DelayedSchedule(), ts) == nil {
		t.Error("the bucket left the schedule while it holds an item")
	}

	// again: not found, nothing enqueued
	if _, err := delayedio.QueueNow(ctx, e.c, ts, []byte(items[0]), now); !errors.Is(err, delayed.ErrNotFound) {
		t.Fatalf("second queue now: %v, want ErrNotFound", err)
	}
	if n := e.do("LLEN", k.Queue("mail")).(int64); n != 1 {
		t.Fatalf("queue:mail holds %d after a second queue now, want 1", n)
	}

	// the last item: the bucket and its schedule entry go
	r, err = delayedio.QueueNow(ctx, e.c, ts, []byte(items[1]), now)
	if err != nil || r.Left != 0 || !r.Unscheduled {
		t.Fatalf("queue now the last: %+v, %v", r, err)
	}
	if n := e.do("EXISTS", k.Delayed(ts)).(int64); n != 0 {
		t.Error("the emptied bucket is left")
	}
	if e.do("ZSCORE", k.DelayedSchedule(), ts) != nil {
		t.Error("the emptied bucket is still on the schedule")
	}
	if n := e.do("LLEN", k.Queue("mail")).(int64); n != 2 {
		t.Errorf("queue:mail holds %d, want 2", n)
	}
}

// Of identical copies, one is queued; the index entry stays with the
// copy left. A mass-queue item goes to unassigned, as a mover routes it.
// An item that is not a job is refused and left as it is.
func TestQueueNowCopiesMassAndBadItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	e.enqueuePlain("q", "J", `[1]`, 100)
	e.enqueuePlain("q", "J", `[1]`, 100)
	item := e.strs("LRANGE", k.Delayed(100), 0, 0)[0]
	if _, err := delayedio.QueueNow(ctx, e.c, 100, []byte(item), time.Unix(50, 0)); err != nil {
		t.Fatal(err)
	}
	if n := e.do("LLEN", k.Delayed(100)).(int64); n != 1 {
		t.Fatalf("bucket holds %d copies, want 1", n)
	}
	if n := e.do("SCARD", k.Timestamps([]byte(item))).(int64); n != 1 {
		t.Error("the index entry went while a copy is left")
	}
	if q := e.strs("LRANGE", k.Queue("q"), 0, -1); len(q) != 1 || q[0] != `{"class":"J","args":[1]}` {
		t.Errorf("queue:q = %q", q)
	}

	mass := `{"class":"M","args":[],"sourceId":"src"}`
	bad := `garbage {`
	e.do("RPUSH", k.Delayed(200), mass, bad)
	e.do("ZADD", k.DelayedSchedule(), 200, 200)
	r, err := delayedio.QueueNow(ctx, e.c, 200, []byte(mass), time.Unix(50, 0))
	if err != nil || !r.Unassigned {
		t.Fatalf("mass item: %+v, %v", r, err)
	}
	if u := e.strs("LRANGE", k.Unassigned(), 0, -1); len(u) != 1 || string(r.Payload) != u[0] {
		t.Errorf("unassigned = %q, want %q", u, r.Payload)
	}
	if _, err := delayedio.QueueNow(ctx, e.c, 200, []byte(bad), time.Unix(50, 0)); !errors.Is(err, delayed.ErrNotJob) {
		t.Fatalf("bad item: %v, want ErrNotJob", err)
	}
	if got := e.strs("LRANGE", k.Delayed(200), 0, -1); len(got) != 1 || got[0] != bad {
		t.Errorf("bucket = %q, want the bad item left", got)
	}
}

// Queue now racing movers that promote the same due buckets: every item
// reaches its queue exactly once, and nothing is left delayed.
func TestQueueNowRacingMovers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 600
	e.fill("q", "J", 0, n, 50, 1000) // 12 buckets of 50
	k := e.c.Keys()
	type it struct {
		ts   int64
		item []byte
	}
	var all []it
	for b := int64(0); b < 12; b++ {
		for _, s := range e.strs("LRANGE", k.Delayed(1000+b), 0, -1) {
			all = append(all, it{1000 + b, []byte(s)})
		}
	}
	if len(all) != n {
		t.Fatalf("filled %d items, want %d", len(all), n)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	queued, moved := 0, 0
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, _ := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Now: func() time.Time { return time.Unix(5000, 0) }})
			for {
				got, err := m.Pass(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				moved += got
				done := moved+queued == n
				mu.Unlock()
				if done {
					return
				}
			}
		}()
	}
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// from the tail: movers take the heads, so both win some
			for i := n - 1 - w; i >= 0; i -= 2 {
				_, err := delayedio.QueueNow(ctx, e.c, all[i].ts, all[i].item, time.Unix(5000, 0))
				switch {
				case err == nil:
					mu.Lock()
					queued++
					mu.Unlock()
				case !errors.Is(err, delayed.ErrNotFound):
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if moved+queued != n {
		t.Fatalf("moved %d + queued now %d, want %d", moved, queued, n)
	}
	counts := e.argCounts("q")
	for i := 0; i < n; i++ {
		if counts[i] != 1 {
			t.Fatalf("job %d is in the queue %d times, want once (moved %d, queued now %d)", i, counts[i], moved, queued)
		}
	}
	if s := e.state(); len(s) != 0 {
		t.Errorf("left: %v", s)
	}
	t.Logf("moved %d, queued now %d", moved, queued)
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
