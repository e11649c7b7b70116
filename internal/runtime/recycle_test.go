package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// MaxJobs: the slots claim exactly that many jobs between them (none rides
// on the last one's finish), run them, and the worker stops by itself with
// the rest left queued.
func TestMaxJobsDrainsAfterThatManyJobs(t *testing.T) {
	t.Parallel()
	for _, slots := range []int{1, 3} {
		t.Run(fmt.Sprintf("concurrency=%d", slots), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var mu sync.Mutex
			ran := map[string]int{}
			e.reg.Register("Job", func(ctx context.Context, j *worker.Job) error {
				mu.Lock()
				ran[string(j.Args)]++
				mu.Unlock()
				return nil
			})
			const jobs, max = 12, 5
			for i := range jobs {
				e.push("q", fmt.Sprintf(`{"class":"Job","args":[%d]}`, i))
			}
			w := e.start(runtime.Config{Queues: "q", Concurrency: slots, MaxJobs: max})
			select {
			case <-w.Done():
			case <-time.After(20 * time.Second):
				t.Fatal("the worker did not stop after max_jobs")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(ran) != max {
				t.Errorf("ran %d distinct jobs, want %d: %v", len(ran), max, ran)
			}
			for args, n := range ran {
				if n != 1 {
					t.Errorf("job %s ran %d times", args, n)
				}
			}
			k := e.client.Keys()
			if q := e.list(k.Queue("q")); len(q) != jobs-max {
				t.Errorf("queue holds %d jobs, want %d", len(q), jobs-max)
			}
			if m := e.members(k.Workers()); len(m) != 0 {
				t.Errorf("workers after the drain = %v", m)
			}
			if !w.MaxJobsReached() {
				t.Error("MaxJobsReached is false")
			}
			if err := w.Ready(); !errors.Is(err, runtime.ErrRecycling) || !errors.Is(err, runtime.ErrDraining) {
				t.Errorf("Ready after max_jobs = %v, want ErrRecycling (a drain)", err)
			}
		})
	}
}

// Ready: nil while the worker takes jobs; ErrPaused while paused (USR2),
// ErrPausedAll while pause-all-workers is set, ErrDraining after a stop.
func TestReady(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	running, release := make(chan struct{}), make(chan struct{})
	e.reg.Register("Slow", func(ctx context.Context, j *worker.Job) error {
		close(running)
		<-release
		return nil
	})
	w := e.start(runtime.Config{Queues: "q", Polling: true, Interval: 20 * time.Millisecond})
	redistest.Eventually(t, 0, func() bool { return w.Ready() == nil }, "ready")
	w.Pause()
	if err := w.Ready(); !errors.Is(err, runtime.ErrPaused) {
		t.Errorf("Ready while paused = %v", err)
	}
	w.Resume()
	if err := w.Ready(); err != nil {
		t.Errorf("Ready after resume = %v", err)
	}
	if _, err := e.client.Do(e.ctx(), "SET", e.client.Keys().PauseAll(), "true"); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return errors.Is(w.Ready(), runtime.ErrPausedAll) }, "ErrPausedAll")
	if _, err := e.client.Do(e.ctx(), "DEL", e.client.Keys().PauseAll()); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return w.Ready() == nil }, "ready after pause-all-workers is gone")
	e.push("q", `{"class":"Slow","args":[]}`)
	<-running
	stopped := make(chan struct{})
	go func() { w.Stop(); close(stopped) }()
	redistest.Eventually(t, 0, func() bool { return errors.Is(w.Ready(), runtime.ErrDraining) }, "ErrDraining")
	close(release)
	<-stopped
}

// Ready fails once the heartbeat has not been written for 2 intervals (a
// clock moved past it, the heartbeat's own ticker far off).
func TestReadyHeartbeatStale(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	w := e.start(runtime.Config{Queues: "q", HeartbeatInterval: time.Minute, Now: now})
	redistest.Eventually(t, 0, func() bool { return w.Ready() == nil }, "ready")
	skew.Store(int64(90 * time.Second))
	if err := w.Ready(); err != nil {
		t.Errorf("Ready 1.5 intervals after the last heartbeat = %v", err)
	}
	skew.Store(int64(3 * time.Minute))
	if err := w.Ready(); !errors.Is(err, runtime.ErrHeartbeatStale) {
		t.Errorf("Ready 3 intervals after the last heartbeat = %v, want ErrHeartbeatStale", err)
	}
}
