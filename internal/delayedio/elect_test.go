package delayedio_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/delayedio"
)

// Elected movers: one polls the schedule, the others do not; when it stops,
// another takes over within half a lease, and due items are promoted once.
func TestElectedMover(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var passes [2]atomic.Int64
	var movers [2]*delayedio.Mover
	for i := range movers {
		m, err := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Elect: true, WorkerID: []string{"h:1:q", "h:2:q"}[i],
			Interval: 20 * time.Millisecond, Lease: 400 * time.Millisecond,
			OnPass: func(int) { passes[i].Add(1) }})
		if err != nil {
			t.Fatal(err)
		}
		movers[i] = m
	}
	movers[0].Start(context.Background())
	deadline := time.Now().Add(10 * time.Second)
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for passes[0].Load() < 3 && time.Now().Before(deadline) {
		<-poll.C
	}
	movers[1].Start(context.Background())
	defer movers[1].Stop()
	before := passes[0].Load()
	for passes[0].Load() < before+10 && time.Now().Before(deadline) {
		<-poll.C
	}
	if n := passes[1].Load(); n != 0 {
		t.Fatalf("the second mover polled %d times while the first held the lease", n)
	}
	movers[0].Stop() // releases the lease
	for passes[1].Load() == 0 && time.Now().Before(deadline) {
		<-poll.C
	}
	if passes[1].Load() == 0 {
		t.Fatal("the second mover never took over")
	}
	// an item due now is promoted by the new holder
	if err := delayedio.EnqueueAt(context.Background(), e.c, "q", []byte(`{"class":"A","args":[]}`), time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	for time.Now().Before(deadline) {
		if n, _ := e.c.Do(context.Background(), "LLEN", e.c.Keys().Queue("q")); n.(int64) == 1 {
			return
		}
		<-poll.C
	}
	t.Fatal("the due item was not promoted")
}
