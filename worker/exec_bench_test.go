package worker_test

import (
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/worker"
)

// BenchmarkExecOverhead measures what --exec costs per job: the handler run
// directly (no Redis) with a command that does nothing, and with one that
// reads the payload. Besides wall time per job it reports the CPU time the
// worker and the job's processes spent per job, which a busy machine
// disturbs less.
//
//	go test -run '^$' -bench ExecOverhead -benchtime 300x ./worker
func BenchmarkExecOverhead(b *testing.B) {
	for _, c := range []struct{ name, cmd string }{{"noop", ":"}, {"stdin", "cat >/dev/null"}} {
		b.Run(c.name, func(b *testing.B) {
			h := worker.ExecHandler(c.cmd, worker.ExecOptions{Stdout: io.Discard, Stderr: io.Discard})
			job := &worker.Job{Queue: "bench", Class: "Ok", ID: "0123456789abcdef", Args: []byte(`[1,"two"]`),
				Payload: []byte(`{"class":"Ok","args":[1,"two"],"id":"0123456789abcdef"}`), WorkerID: "bench:1:bench"}
			ctx := context.Background()
			self0, children0 := cpuTimes(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := h(ctx, job); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			self1, children1 := cpuTimes(b)
			b.ReportMetric(float64((self1-self0).Microseconds())/float64(b.N), "worker-cpu-µs/op")
			b.ReportMetric(float64((children1-children0).Microseconds())/float64(b.N), "job-cpu-µs/op")
		})
	}
}

// cpuTimes is the user+system CPU time of this process and of its waited-for
// children so far.
func cpuTimes(b *testing.B) (self, children time.Duration) {
	b.Helper()
	var ru syscall.Rusage
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		if err := syscall.Getrusage(who, &ru); err != nil {
			b.Fatal(err)
		}
		d := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		if who == syscall.RUSAGE_SELF {
			self = d
		} else {
			children = d
		}
	}
	return self, children
}
