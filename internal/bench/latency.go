package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// latencyQueue is the queue of the pickup latency scenario.
const latencyQueue = "latency"

// latency measures pickup latency cfg.Runs times.
func (b *bencher) latency(ctx context.Context) (Latency, error) {
	res := Latency{Jobs: b.cfg.LatencyJobs, Rate: b.cfg.LatencyRate, Slots: b.cfg.LatencySlots}
	for i := 1; i <= b.cfg.Runs; i++ {
		b.log.Info().Str("scenario", ScenarioLatency).Int("run", i).Int("runs", b.cfg.Runs).Int("jobs", b.cfg.LatencyJobs).Msg("bench run started")
		run, err := b.latencyRun(ctx)
		if err != nil {
			return res, fmt.Errorf("latency run %d: %w", i, err)
		}
		res.Runs = append(res.Runs, run)
	}
	res.summarize()
	return res, nil
}

// latencyRun runs an in-process worker (its handler must report back) that
// is idle when each job arrives: jobs are enqueued one at a time, each with
// its enqueue time (Unix nanoseconds) as its argument, and the handler
// records how long ago that was.
func (b *bencher) latencyRun(ctx context.Context) (run LatencyMetrics, err error) {
	ns := b.namespace()
	defer func() {
		if cerr := b.cleanup(ns); err == nil {
			err = cerr
		}
	}()
	client, err := rdb.New(rdb.Options{URL: b.url, Namespace: ns})
	if err != nil {
		return run, err
	}
	defer client.Close()
	n := b.cfg.LatencyJobs
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n)
	all := make(chan struct{})
	reg := worker.NewRegistry()
	reg.Register(NoopClass, func(ctx context.Context, j *worker.Job) error {
		now := time.Now()
		var args []int64
		if err := j.DecodeArgs(&args); err != nil || len(args) != 1 {
			return fmt.Errorf("latency job without its enqueue time: %s", j.Args)
		}
		mu.Lock()
		defer mu.Unlock()
		lat = append(lat, now.Sub(time.Unix(0, args[0])))
		if len(lat) == n {
			close(all)
		}
		return nil
	})
	log := b.log.Level(max(b.log.GetLevel(), zerolog.WarnLevel))
	w, err := runtime.New(runtime.Config{Client: client, Registry: reg, Queues: latencyQueue,
		Concurrency: b.cfg.LatencySlots, Hostname: "bench-latency", Logger: &log})
	if err != nil {
		return run, err
	}
	if err := w.Start(ctx); err != nil {
		return run, err
	}
	defer w.Stop()
	if err := b.waitRegistered(ctx, protocol.NewKeys(ns), b.cfg.LatencySlots, nil); err != nil {
		return run, err
	}
	if err := sleep(ctx, b.cfg.Settle); err != nil {
		return run, err
	}
	interval := time.Duration(float64(time.Second) / b.cfg.LatencyRate)
	next := time.Now()
	for range n {
		if err := sleep(ctx, time.Until(next)); err != nil {
			return run, err
		}
		next = next.Add(interval)
		payload := `{"class":"` + NoopClass + `","args":[` + strconv.FormatInt(time.Now().UnixNano(), 10) + `]}`
		if err := client.Enqueue(ctx, latencyQueue, []byte(payload)); err != nil {
			return run, err
		}
	}
	select {
	case <-all:
	case <-time.After(stallTimeout):
		mu.Lock()
		got := len(lat)
		mu.Unlock()
		return run, fmt.Errorf("%d of %d latency jobs ran within %s", got, n, stallTimeout)
	case <-ctx.Done():
		return run, ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return LatencyMetrics{P50: ms(percentile(lat, 0.50)), P99: ms(percentile(lat, 0.99)), Max: ms(lat[len(lat)-1])}, nil
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(float64(len(sorted))*p)) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
