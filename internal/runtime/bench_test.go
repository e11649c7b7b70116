package runtime_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/cputime"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// BenchmarkNoopJobs measures throughput of no-op jobs: b.N jobs are queued
// first, then drained by one worker process with the given slot count.
//
//	go test -run '^$' -bench NoopJobs -benchtime 20000x ./internal/runtime
//
// Besides jobs/s it reports Redis's own CPU time per job (INFO cpu) and
// Redis commands per job (INFO commandstats), which the 2-core development
// machine measures as fairly as a big one.
func BenchmarkNoopJobs(b *testing.B) {
	payloads := map[string]string{
		"ruby":     `{"class":"Noop","args":[1]}`,
		"resquego": `{"class":"Noop","args":[1,"two"],"id":"0123456789abcdef0123456789abcdef","queue_time":1700000000.1234}`,
	}
	for _, form := range []string{"ruby", "resquego"} {
		for _, slots := range []int{1, 16} {
			b.Run(fmt.Sprintf("payload=%s/slots=%d", form, slots), func(b *testing.B) {
				benchNoop(b, slots, []byte(payloads[form]), nil)
			})
		}
	}
	// one cap and one rate on the jobs' class, neither ever full
	// (docs/limits.md): what limits cost the worker
	capRule, err := protocol.ParseLimit("Noop=1000")
	if err != nil {
		b.Fatal(err)
	}
	rate, err := protocol.ParseRate("Noop=1000000/1s")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("payload=ruby/slots=16/limits", func(b *testing.B) {
		benchNoop(b, 16, []byte(payloads["ruby"]), []protocol.Limit{capRule, rate})
	})
}

func benchNoop(b *testing.B, slots int, payload []byte, limits []protocol.Limit) {
	{
		{
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
			for i := 0; i < b.N; i++ {
				if err := e.client.Enqueue(ctx, "bench", payload); err != nil {
					b.Fatal(err)
				}
			}
			w, err := runtime.New(runtime.Config{Client: e.client, Registry: e.reg, Queues: "bench", Concurrency: slots, Hostname: "bench", Limits: limits})
			if err != nil {
				b.Fatal(err)
			}
			cpu0, cmds0 := redisCost(b, e)
			ex0 := execMicros(b, e)
			b.ResetTimer()
			start := time.Now()
			if err := w.Start(ctx); err != nil {
				b.Fatal(err)
			}
			<-all
			elapsed := time.Since(start)
			b.StopTimer()
			cpu1, cmds1 := redisCost(b, e)
			ex1 := execMicros(b, e)
			b.ReportMetric((ex1-ex0)/float64(b.N), "redis-exec-us/job")
			if os.Getenv("RESQUE_GO_BENCH_STATS") != "" {
				v, _ := e.client.Do(ctx, "INFO", "commandstats")
				b.Logf("%s", v)
			}
			w.Stop()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
			b.ReportMetric((cpu1-cpu0)*1e6/float64(b.N), "redis-us/job")
			b.ReportMetric(float64(cmds1-cmds0)/float64(b.N), "redis-cmds/job")
		}
	}
}

// execMicros is the time Redis spent executing commands (not reading and
// writing sockets), from INFO commandstats: the script calls when there are
// any (their inner commands are inside them), else every command.
func execMicros(b *testing.B, e *env) float64 {
	b.Helper()
	v, err := e.client.Do(context.Background(), "INFO", "commandstats")
	if err != nil {
		b.Fatal(err)
	}
	var scripts, all float64
	for _, line := range strings.Split(string(v.([]byte)), "\r\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_info" {
			continue
		}
		for _, f := range strings.Split(val, ",") {
			if u, ok := strings.CutPrefix(f, "usec="); ok {
				n, _ := strconv.ParseFloat(u, 64)
				all += n
				if name == "cmdstat_evalsha" || name == "cmdstat_eval" || name == "cmdstat_fcall" {
					scripts += n
				}
			}
		}
	}
	if scripts > 0 {
		return scripts
	}
	return all
}

// commandCounts reads INFO commandstats: calls by command.
func commandCounts(b *testing.B, e *env) map[string]int64 {
	b.Helper()
	v, err := e.client.Do(context.Background(), "INFO", "commandstats")
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(v.([]byte)), "\r\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(val, "calls="), ",")
		out[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.ParseInt(calls, 10, 64)
	}
	return out
}

// redisCost reads Redis's CPU seconds (user + sys) and the number of
// commands it has run, scripts' inner commands included.
func redisCost(b *testing.B, e *env) (cpu float64, cmds int64) {
	b.Helper()
	for _, section := range []string{"cpu", "commandstats"} {
		v, err := e.client.Do(context.Background(), "INFO", section)
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(string(v.([]byte)), "\r\n") {
			name, val, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch {
			case name == "used_cpu_sys" || name == "used_cpu_user":
				f, _ := strconv.ParseFloat(val, 64)
				cpu += f
			case strings.HasPrefix(name, "cmdstat_") && name != "cmdstat_info":
				calls, _, _ := strings.Cut(strings.TrimPrefix(val, "calls="), ",")
				n, _ := strconv.ParseInt(calls, 10, 64)
				cmds += n
			}
		}
	}
	return cpu, cmds
}

// BenchmarkIdlePickup measures the latency from RPUSH to the handler
// starting, for a worker that is idle (blocked waiting) when the job arrives.
//
//	go test -run '^$' -bench IdlePickup -benchtime 2000x ./internal/runtime
func BenchmarkIdlePickup(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	got := make(chan time.Time, 1)
	e.reg.Register("Ping", func(ctx context.Context, j *worker.Job) error {
		got <- time.Now()
		return nil
	})
	finished := make(chan struct{}, 1)
	w, err := runtime.New(runtime.Config{Client: e.client, Registry: e.reg, Queues: "a,b,ping", Hostname: "bench",
		OnFinish: func(runtime.Finished) { finished <- struct{}{} }})
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

// BenchmarkForkOverhead compares a job run in-process with the same job
// run in a child process per job (fork mode; the child is this test binary
// re-executed), started with its job or ahead of it (Prestart, as resque-go
// work --fork does), one slot each; for a no-op job and one that sleeps 5 ms.
// Besides the time per job it reports the CPU the worker and its children
// spent per job.
//
//	go test -run '^$' -bench ForkOverhead -benchtime 300x ./internal/runtime
func BenchmarkForkOverhead(b *testing.B) {
	for _, class := range []string{"Noop", "Sleep5ms"} {
		for _, mode := range []string{"in-process", "fork", "fork-prestart"} {
			b.Run(fmt.Sprintf("job=%s/mode=%s", class, mode), func(b *testing.B) {
				e := newEnv(b)
				ctx := context.Background()
				var done atomic.Int64
				all := make(chan struct{})
				n := int64(b.N)
				e.reg = forkClasses()
				for i := 0; i < b.N; i++ {
					if err := e.client.Enqueue(ctx, "bench", []byte(`{"class":"`+class+`","args":[]}`)); err != nil {
						b.Fatal(err)
					}
				}
				var failed atomic.Int64
				cfg := runtime.Config{Client: e.client, Registry: e.reg, Queues: "bench", Hostname: "bench",
					OnFinish: func(f runtime.Finished) {
						if f.Outcome != "ok" {
							failed.Add(1)
						}
						if done.Add(1) == n {
							close(all)
						}
					}}
				if mode != "in-process" {
					cfg.Fork = &worker.ForkConfig{Command: []string{os.Args[0]}, Env: []string{childEnv + "=1"}, Prestart: mode == "fork-prestart"}
				}
				w, err := runtime.New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				cpu := cputime.Start(b)
				b.ResetTimer()
				if err := w.Start(ctx); err != nil {
					b.Fatal(err)
				}
				<-all
				b.StopTimer()
				w.Stop()
				if failed.Load() != 0 {
					b.Fatalf("%d of %d jobs failed", failed.Load(), n)
				}
				cpu.Report("child-cpu-µs/op")
			})
		}
	}
}

// BenchmarkReferenceLoop is the minimal Resque loop resque-go's cost per
// job is compared with: LPOP; SET worker:<id>; INCR stat:processed; INCR
// stat:processed:<id>; DEL worker:<id>, the writes of one job sent together
// with the next pop, over 16 connections.
//
//	go test -run '^$' -bench 'ReferenceLoop|NoopJobs' -benchtime 20000x ./internal/runtime
func BenchmarkReferenceLoop(b *testing.B) {
	referenceLoop(b, func(conn redis.Conn, k protocol.Keys, id string) {
		held := false
		for {
			if held {
				conn.Send("INCR", k.StatProcessed())
				conn.Send("INCR", k.StatProcessedWorker(id))
				conn.Send("DEL", k.Worker(id))
			}
			conn.Send("LPOP", k.Queue("bench"))
			conn.Flush()
			if held {
				for i := 0; i < 3; i++ {
					conn.Receive()
				}
			}
			job, err := redis.Bytes(conn.Receive())
			if err != nil {
				return // queue empty
			}
			if _, err := conn.Do("SET", k.Worker(id), job); err != nil {
				b.Error(err)
				return
			}
			held = true
		}
	})
}

// referenceLoop prefills b.N no-op jobs, runs loop on 16 connections
// (each with its own worker id) until they return, and reports jobs/s and
// Redis's cost per job.
func referenceLoop(b *testing.B, loop func(conn redis.Conn, k protocol.Keys, id string)) {
	e := newEnv(b)
	ctx := context.Background()
	payload := []byte(`{"class":"Noop","args":[1]}`)
	for i := 0; i < b.N; i++ {
		if err := e.client.Enqueue(ctx, "bench", payload); err != nil {
			b.Fatal(err)
		}
	}
	cpu0, cmds0 := redisCost(b, e)
	ex0 := execMicros(b, e)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < 16; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := redis.Dial("tcp", strings.TrimPrefix(os.Getenv(redisEnv), "redis://"))
			if err != nil {
				b.Error(err)
				return
			}
			defer conn.Close()
			loop(conn, e.client.Keys(), fmt.Sprintf("bench:%d:bench", c))
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cpu1, cmds1 := redisCost(b, e)
	ex1 := execMicros(b, e)
	b.ReportMetric((ex1-ex0)/float64(b.N), "redis-exec-us/job")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
	b.ReportMetric((cpu1-cpu0)*1e6/float64(b.N), "redis-us/job")
	b.ReportMetric(float64(cmds1-cmds0)/float64(b.N), "redis-cmds/job")
}

// BenchmarkIdleCommands reports how many Redis commands per second an idle
// worker process costs (scripts' inner commands included), for a few slot
// and queue counts. It idles 10 s per case whatever b.N is.
//
//	go test -run '^$' -bench IdleCommands -benchtime 1x ./internal/runtime
func BenchmarkIdleCommands(b *testing.B) {
	for _, c := range []struct{ slots, queues int }{{1, 1}, {16, 1}, {16, 10}} {
		b.Run(fmt.Sprintf("slots=%d/queues=%d", c.slots, c.queues), func(b *testing.B) {
			e := newEnv(b)
			// the default read timeout, which bounds the blocking waits
			client, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: e.ns})
			if err != nil {
				b.Fatal(err)
			}
			defer client.Close()
			e.client = client
			qs := make([]string, c.queues)
			for i := range qs {
				qs[i] = fmt.Sprintf("idle%d", i)
			}
			w, err := runtime.New(runtime.Config{Client: e.client, Registry: e.reg, Queues: strings.Join(qs, ","),
				Concurrency: c.slots, Hostname: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			if err := w.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer w.Stop()
			<-time.After(2 * time.Second) // start-up registration and first passes
			_, cmds0 := redisCost(b, e)
			by0 := commandCounts(b, e)
			const idle = 10 * time.Second
			<-time.After(idle)
			_, cmds1 := redisCost(b, e)
			b.ReportMetric(float64(cmds1-cmds0)/idle.Seconds(), "redis-cmds/s")
			if os.Getenv("RESQUE_GO_BENCH_STATS") != "" {
				for name, n := range commandCounts(b, e) {
					if d := n - by0[name]; d > 0 {
						b.Logf("%s: %d", name, d)
					}
				}
			}
		})
	}
}

// BenchmarkReferenceLoopLua is the minimal loop's five commands as one
// script call per job (finish the previous job, claim the next): the cost
// floor of any one-round-trip design built on a script.
func BenchmarkReferenceLoopLua(b *testing.B) {
	var padArgs []any
	if n, _ := strconv.Atoi(os.Getenv("PAD_ARGS")); n > 0 {
		for i := 0; i < n; i++ {
			padArgs = append(padArgs, "resque:some:key:name:"+strconv.Itoa(i))
		}
	}
	script := redis.NewScript(4, `
if ARGV[1] == '1' then
  redis.call('INCR', KEYS[3]) redis.call('INCR', KEYS[4]) redis.call('DEL', KEYS[2])
end
local job = redis.call('LPOP', KEYS[1])
if job then redis.call('SET', KEYS[2], job) end
return job`)
	referenceLoop(b, func(conn redis.Conn, k protocol.Keys, id string) {
		held := "0"
		for {
			job, err := script.Do(conn, append([]any{k.Queue("bench"), k.Worker(id), k.StatProcessed(), k.StatProcessedWorker(id), held}, padArgs...)...)
			if err != nil || job == nil {
				return
			}
			held = "1"
		}
	})
}
