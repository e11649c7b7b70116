package delayedio_test

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/delayedio"
)

// The mover promotes the oldest bucket first and each bucket in the order
// its items were added, whatever order the buckets were filled in; items
// not due stay until they are.
func TestPromotionBucketOrderAndFIFO(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const buckets, per = 30, 5
	rng := rand.New(rand.NewSource(1))
	// add the items bucket by bucket in a shuffled order of buckets and
	// interleaved: item j of every bucket before item j+1 of any
	order := rng.Perm(buckets)
	for j := 0; j < per; j++ {
		for _, b := range order {
			e.enqueuePlain("q", "J", fmt.Sprintf("[%d]", b*per+j), int64(1000+10*b))
		}
	}
	now := time.Unix(1000+10*(buckets/2)-1, 0) // the first half is due
	m, err := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	check := func(want int) {
		t.Helper()
		got := e.strs("LRANGE", e.c.Keys().Queue("q"), 0, -1)
		if len(got) != want {
			t.Fatalf("%d promoted, want %d", len(got), want)
		}
		for i, p := range got {
			if w := fmt.Sprintf(`{"class":"J","args":[%d]}`, i); p != w {
				t.Fatalf("queue[%d] = %s, want %s", i, p, w)
			}
		}
	}
	if n, err := m.Pass(ctx); err != nil || n != buckets/2*per {
		t.Fatalf("first pass moved %d (%v)", n, err)
	}
	check(buckets / 2 * per)
	now = now.Add(time.Hour)
	if n, err := m.Pass(ctx); err != nil || n != buckets/2*per {
		t.Fatalf("second pass moved %d (%v)", n, err)
	}
	check(buckets * per)
	if s := e.state(); len(s) != 0 {
		t.Errorf("left: %v", s)
	}
}

// Eight movers with no election pass over 10,000 due items at once: each
// item is promoted exactly once (counted in the queue), their reported
// moves add up, and the queue holds them in bucket and FIFO order (the
// head check of promote_batch.lua serialises a bucket; the schedule gives the
// oldest non-empty bucket to every mover).
func TestEightMoversPromoteEachItemOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 10000
	e.fill("q", "J", 0, n, 37, 1000) // 271 buckets of 37, the last shorter
	start := make(chan struct{})
	var wg sync.WaitGroup
	moved := make([]int, 8)
	for i := range moved {
		m, err := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Now: func() time.Time { return time.Unix(5000, 0) }})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var err error
			if moved[i], err = m.Pass(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	sum := 0
	for _, x := range moved {
		sum += x
	}
	counts := e.argCounts("q")
	for i := 0; i < n; i++ {
		if counts[i] != 1 {
			t.Fatalf("item %d promoted %d times", i, counts[i])
		}
	}
	if len(counts) != n || sum != n {
		t.Fatalf("%d distinct in the queue, movers reported %d; want %d", len(counts), sum, n)
	}
	for i, p := range e.strs("LRANGE", e.c.Keys().Queue("q"), 0, -1) {
		if w := fmt.Sprintf(`{"class":"J","args":[%d]}`, i); p != w {
			t.Fatalf("queue[%d] = %s, want %s (order)", i, p, w)
		}
	}
	if s := e.state(); len(s) != 0 {
		t.Errorf("left: %d keys", len(s))
	}
	t.Logf("moves per mover: %v", moved)
}

// BenchmarkPromotePass times one Pass over 100,000 due items, spread over
// 1,000 buckets or all in one. Run it alone:
//
//	go test -run X -bench PromotePass -benchtime 3x ./internal/delayedio
func BenchmarkPromotePass(b *testing.B) {
	const n = 100000
	for _, per := range []int{100, n} {
		b.Run(fmt.Sprintf("items=%d/per_bucket=%d", n, per), func(b *testing.B) {
			e := newEnv(b)
			m, err := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Now: func() time.Time { return time.Unix(1e9, 0) }})
			if err != nil {
				b.Fatal(err)
			}
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e.do("DEL", e.c.Keys().Queue("q"))
				e.fill("q", "J", 0, n, per, 1000)
				b.StartTimer()
				t0 := time.Now()
				moved, err := m.Pass(ctx)
				total += time.Since(t0)
				if err != nil || moved != n {
					b.Fatalf("moved %d (%v)", moved, err)
				}
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "items/s")
		})
	}
}
