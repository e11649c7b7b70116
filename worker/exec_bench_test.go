package worker_test

import (
	"context"
	"io"
	"testing"

	"github.com/resque-go/resque-go/internal/cputime"
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
			cpu := cputime.Start(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := h(ctx, job); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cpu.Report("job-cpu-µs/op")
		})
	}
}
