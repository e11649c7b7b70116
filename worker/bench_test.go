package worker_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/worker"
)

// BenchmarkNoopJobs measures throughput of no-op jobs: b.N jobs are queued
// first, then drained by one worker process with the given slot count.
//
//	go test -run '^$' -bench NoopJobs -benchtime 20000x ./worker
func BenchmarkNoopJobs(b *testing.B) {
	for _, slots := range []int{1, 16} {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) {
			e := newEnv(b)
			ctx := context.Background()
			var done atomic.Int64
			all := make(chan struct{})
			n := int64(b.N)
			e.reg.Register("Noop", func(ctx context.Context, j *worker.Job) error {
				if done.Add(1) == n {
					close(all)
				}
				return nil
			})
			payload := []byte(`{"class":"Noop","args":[1,"two"],"id":"0123456789abcdef0123456789abcdef","queue_time":1700000000.1234}`)
			for i := 0; i < b.N; i++ {
				if err := e.client.Enqueue(ctx, "bench", payload); err != nil {
					b.Fatal(err)
				}
			}
			w, err := worker.New(worker.Config{Client: e.client, Registry: e.reg, Queues: "bench", Concurrency: slots, Hostname: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			if err := w.Start(ctx); err != nil {
				b.Fatal(err)
			}
			<-all
			elapsed := time.Since(start)
			b.StopTimer()
			w.Stop()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
		})
	}
}

// BenchmarkIdlePickup measures the latency from RPUSH to the handler
// starting, for a worker that is idle (blocked waiting) when the job arrives.
//
//	go test -run '^$' -bench IdlePickup -benchtime 2000x ./worker
func BenchmarkIdlePickup(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	got := make(chan time.Time, 1)
	e.reg.Register("Ping", func(ctx context.Context, j *worker.Job) error {
		got <- time.Now()
		return nil
	})
	finished := make(chan struct{}, 1)
	w, err := worker.New(worker.Config{Client: e.client, Registry: e.reg, Queues: "a,b,ping", Hostname: "bench",
		OnFinish: func(worker.Finished) { finished <- struct{}{} }})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	payload := []byte(`{"class":"Ping","args":[]}`)
	var total, worst time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// Let the slot go back to its blocking wait before the next push.
		<-time.After(2 * time.Millisecond)
		b.StartTimer()
		sent := time.Now()
		if err := e.client.Enqueue(ctx, "ping", payload); err != nil {
			b.Fatal(err)
		}
		d := (<-got).Sub(sent)
		<-finished
		total += d
		if d > worst {
			worst = d
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/pickup")
	b.ReportMetric(float64(worst.Microseconds()), "µs-max")
}

// BenchmarkForkOverhead compares a no-op job run in-process with the same
// job run in a child process per job (fork mode; the child is this test
// binary re-executed), one slot each.
//
//	go test -run '^$' -bench ForkOverhead -benchtime 300x ./worker
func BenchmarkForkOverhead(b *testing.B) {
	for _, fork := range []bool{false, true} {
		b.Run(fmt.Sprintf("fork=%v", fork), func(b *testing.B) {
			e := newEnv(b)
			ctx := context.Background()
			var done atomic.Int64
			all := make(chan struct{})
			n := int64(b.N)
			e.reg.Register("Ok", func(ctx context.Context, j *worker.Job) error { return nil })
			for i := 0; i < b.N; i++ {
				if err := e.client.Enqueue(ctx, "bench", []byte(`{"class":"Ok","args":[]}`)); err != nil {
					b.Fatal(err)
				}
			}
			cfg := worker.Config{Client: e.client, Registry: e.reg, Queues: "bench", Hostname: "bench",
				OnFinish: func(worker.Finished) {
					if done.Add(1) == n {
						close(all)
					}
				}}
			if fork {
				cfg.Fork = &worker.ForkConfig{Command: []string{os.Args[0]}, Env: []string{childEnv + "=1"}}
			}
			w, err := worker.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			if err := w.Start(ctx); err != nil {
				b.Fatal(err)
			}
			<-all
			b.StopTimer()
			w.Stop()
		})
	}
}
