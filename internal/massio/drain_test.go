package massio_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// drainLedger is what drainConcurrently saw: runs by payload and by
// source, and the most jobs of one source running at once.
type drainLedger struct {
	mu   sync.Mutex
	seen map[string]int
	ran  map[string]int
	most map[string]int
	now  map[string]int
}

// drainConcurrently drains src with slots workers as the runtime does (a
// claim, then one finish-and-claim per job, so slots that finish at once
// share script calls) until it is empty; each job's work takes about a
// millisecond, so slots overlap.
func (e *env) drainConcurrently(src protocol.Source, slots int) *drainLedger {
	e.t.Helper()
	ctx := context.Background()
	l := &drainLedger{seen: map[string]int{}, ran: map[string]int{}, most: map[string]int{}, now: map[string]int{}}
	mark := func(s string, d int) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.now[s] += d
		l.most[s] = max(l.most[s], l.now[s])
	}
	var failed atomic.Value
	var wg sync.WaitGroup
	for i := 0; i < slots; i++ {
		w := e.worker(i, src)
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := rdb.ClaimArgs{WorkerID: w.id, Host: "h", Sources: []protocol.Source{src}, Now: time.Now()}
			res, err := e.c.Claim(ctx, a)
			for err == nil && res.Payload != nil {
				s := sourceOf(e.t, res.Payload)
				mark(s, 1)
				l.mu.Lock()
				l.seen[string(res.Payload)]++
				l.ran[s]++
				l.mu.Unlock()
				time.Sleep(time.Millisecond) // the job's work
				mark(s, -1)
				o := rdb.Outcome{Seq: res.Seq, Kind: rdb.OutcomeOK, Class: "J", Now: time.Now()}
				var ferr error
				ferr, res, err = e.c.FinishAndClaim(ctx, w.id, "h", res.Source, o, a)
				if ferr != nil {
					err = ferr
				}
			}
			if err != nil {
				failed.Store(err)
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		e.t.Fatal(err)
	}
	return l
}

// check fails the test unless every job ran once and each source of want
// ran its jobs.
func (l *drainLedger) check(t *testing.T, want map[string]int) {
	t.Helper()
	for p, n := range l.seen {
		if n != 1 {
			t.Errorf("ran %d times: %s", n, p)
		}
	}
	for s, n := range want {
		if l.ran[s] != n {
			t.Errorf("source %s: %d jobs ran, want %d", s, l.ran[s], n)
		}
	}
}

// 16 slots draining a static pool concurrently, as the runtime does (slots
// that finish at once share a script call, whose claims rotate the ring
// in memory): every job runs exactly once, a capped source never has more
// jobs running than its limit, a paused source none, and the weighted and
// plain sources all drain.
func TestStaticConcurrentDrainKeepsLimitsAndPause(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if err := massio.SetLimit(ctx, e.c, "capped", 2); err != nil {
		t.Fatal(err)
	}
	if err := massio.SetWeight(ctx, e.c, "heavy", 3); err != nil {
		t.Fatal(err)
	}
	if err := massio.Pause(ctx, e.c, "paused"); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"capped": 300, "heavy": 600, "plain": 300, "one": 1}
	for s, n := range want {
		e.fill(s, n)
	}
	e.fill("paused", 50)
	e.allocate(e.allocator(mustConfig(t, staticConfig), newClock()))
	l := e.drainConcurrently(protocol.StaticPoolSource("general"), 16)
	l.check(t, want)
	if l.ran["paused"] != 0 {
		t.Errorf("%d jobs of the paused source ran", l.ran["paused"])
	}
	if m := l.most["capped"]; m > 2 {
		t.Errorf("the capped source had %d jobs running at once, limit 2", m)
	}
	if n := e.int("LLEN", e.ns+":static:queue:general:paused"); n != 50 {
		t.Errorf("paused source's FIFO: %d jobs, want 50", n)
	}
}
