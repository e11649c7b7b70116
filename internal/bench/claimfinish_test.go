package bench

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// BenchmarkClaimFinish drains b.N no-op jobs with an in-process worker (a
// claim, then one finish-and-claim per job) and reports what a job costs
// Redis, measured as `resque-go bench` measures it. In-process, so that
// -cpuprofile shows the worker's side too:
//
//	go test -run '^$' -bench ClaimFinish -benchtime 20000x ./internal/bench
func BenchmarkClaimFinish(b *testing.B) {
	for _, slots := range []int{1, 16} {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) { benchClaimFinish(b, slots, false) })
	}
	// the same 16 slots with every finish-and-claim in its own script call
	// (rdb.Options.Unbatched), for a side-by-side ratio
	b.Run("slots=16/unbatched", func(b *testing.B) { benchClaimFinish(b, 16, true) })
}

func benchClaimFinish(b *testing.B, slots int, unbatched bool) {
	ctx := context.Background()
	url := os.Getenv("RESQUE_GO_TEST_REDIS")
	ns := redistest.Namespace(b)
	keys := protocol.NewKeys(ns)
	mon, err := newMonitor(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer mon.close()
	bb := &bencher{mon: mon}
	defer func() {
		if err := bb.cleanup(ns); err != nil {
			b.Error(err)
		}
	}()
	client, err := rdb.New(rdb.Options{URL: url, Namespace: ns, Unbatched: unbatched})
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	queueKey, staging := keys.Queue(benchQueue), keys.Queue(benchQueue+"-staging")
	if _, err := mon.do("SADD", keys.Queues(), benchQueue); err != nil {
		b.Fatal(err)
	}
	if err := bb.prefill(staging, b.N); err != nil {
		b.Fatal(err)
	}
	reg := worker.NewRegistry()
	reg.Register(NoopClass, func(context.Context, *worker.Job) error { return nil })
	w, err := runtime.New(runtime.Config{Client: client, Registry: reg, Queues: benchQueue, Concurrency: slots, Hostname: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	if err := bb.waitRegistered(ctx, keys, slots, nil); err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	a, err := mon.snapshot(keys.StatProcessed())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := mon.do("RENAME", staging, queueKey); err != nil {
		b.Fatal(err)
	}
	if err := bb.drain(ctx, queueKey, keys.StatProcessed(), int64(b.N), nil, nil); err != nil {
		b.Fatal(err)
	}
	z, err := mon.snapshot(keys.StatProcessed())
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()

	r := makeRun(diff(a, z), 0, 0)
	b.ReportMetric(r.JobsPerSec, "jobs/s")
	b.ReportMetric(r.RedisCPU, "redis-µs/job")
	b.ReportMetric(r.Commands, "cmds/job")
	b.ReportMetric(r.Scripts, "scripts/job")
	b.ReportMetric(r.RoundTrips, "rt/job")
}
