package massio_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/cputime"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

// BenchmarkDrain drains b.N no-op jobs with 16 worker slots (a claim, then
// one finish-and-claim per job, as the runtime does) from a plain queue
// and from a static pool whose jobs belong to 1, 100 or 10,000 sources:
//
//	go test -run '^$' -bench Drain -benchtime 20000x ./internal/massio
//
// To count Redis's instructions, run redis-server under valgrind
// --tool=callgrind, point the benchmark at it (COST_REDIS=redis://...) and
// set COST_CALLGRIND=1: the counters are zeroed when the drain starts.
// DRAIN_CMDS=1 prints each command's calls per job (INFO commandstats).
func BenchmarkDrain(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchDrain(b, 0) })
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("static/sources=%d", n), func(b *testing.B) { benchDrain(b, n) })
	}
}

func benchDrain(b *testing.B, sources int) {
	e := newEnv(b)
	ctx := context.Background()
	src := protocol.QueueSource("q")
	if sources == 0 {
		args := []any{e.ns + ":queue:q"}
		for i := 0; i < b.N; i++ {
			args = append(args, fmt.Sprintf(`{"class":"J","args":[%d],"id":"%d","queue_time":1.5}`, i, i))
			if len(args) == 2001 || i == b.N-1 {
				e.do("RPUSH", args...)
				args = args[:1]
			}
		}
	} else {
		src = protocol.StaticPoolSource("general")
		e.unassignRoundRobin(b.N, sources)
		e.allocate(e.allocator(mustConfig(b, staticConfig), newClock()))
	}
	const slots = 16
	calls0, usec0 := e.commandStats()
	per0 := e.commandCalls()
	e.zeroCallgrind()
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	self0, _, err := cputime.Now()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for s := 0; s < slots; s++ {
		w := e.worker(s, src)
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			res, err := e.c.Claim(ctx, rdb.ClaimArgs{WorkerID: w.id, Host: "h", Sources: []protocol.Source{src}, Now: time.Now()})
			for err == nil && res.Payload != nil {
				n++
				o := rdb.Outcome{Seq: res.Seq, Kind: rdb.OutcomeOK, Class: "J", Now: time.Now()}
				a := rdb.ClaimArgs{WorkerID: w.id, Host: "h", Sources: []protocol.Source{src}, Now: time.Now()}
				_, res, err = e.c.FinishAndClaim(ctx, w.id, "h", res.Source, o, a)
			}
			if err != nil {
				b.Error(err)
			}
			mu.Lock()
			done += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	self1, _, err := cputime.Now()
	if err != nil {
		b.Fatal(err)
	}
	if done != b.N {
		b.Fatalf("drained %d of %d", done, b.N)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "jobs/s")
	calls, usec := e.commandStats()
	if os.Getenv("DRAIN_CMDS") != "" && b.N > 1 {
		for name, n := range e.commandCalls() {
			if d := n - per0[name]; d > 0 {
				fmt.Printf("%s/%s: %.3f calls/job\n", b.Name(), name, float64(d)/float64(b.N))
			}
		}
	}
	b.ReportMetric(float64(calls-calls0)/float64(b.N), "cmds/job")
	b.ReportMetric(float64(usec-usec0)/float64(b.N), "redis-µs/job")
	b.ReportMetric(float64((self1-self0).Microseconds())/float64(b.N), "client-cpu-µs/job")
}

// commandTable is each command's calls and microseconds (INFO
// commandstats), by name without its cmdstat_ prefix.
func (e *env) commandTable() map[string][2]int64 {
	out := map[string][2]int64{}
	for _, line := range strings.Split(e.str("INFO", "commandstats"), "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var cu [2]int64
		for _, f := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				cu[0] = n
			case "usec":
				cu[1] = n
			}
		}
		out[strings.TrimPrefix(name, "cmdstat_")] = cu
	}
	return out
}

// commandCalls is each command's calls.
func (e *env) commandCalls() map[string]int64 {
	out := map[string]int64{}
	for name, cu := range e.commandTable() {
		out[name] = cu[0]
	}
	return out
}

// commandStats sums the calls of every command Redis ran (commands inside
// scripts included, the script calls themselves not) and the microseconds
// of the script calls (EVALSHA, or FCALL on Redis 7: their time includes
// their commands').
func (e *env) commandStats() (calls, usec int64) {
	for name, cu := range e.commandTable() {
		switch name {
		case "evalsha", "eval", "fcall":
			usec += cu[1]
		case "info":
		default:
			calls += cu[0]
		}
	}
	return calls, usec
}

// BenchmarkAllocateStatic routes b.N static payloads from unassigned to a
// pool, 100 a script call: of 2 sources (after its first job, each source's
// jobs go to its FIFO), or dealt round-robin to 10,000 (as many jobs as
// sources: each job joins the ring in its source's entry).
func BenchmarkAllocateStatic(b *testing.B) {
	for _, n := range []int{2, 10000} {
		b.Run(fmt.Sprintf("sources=%d", n), func(b *testing.B) {
			e := newEnv(b)
			e.unassignRoundRobin(b.N, n)
			a := e.allocator(mustConfig(b, staticConfig), newClock())
			e.zeroCallgrind()
			b.ResetTimer()
			start := time.Now()
			e.allocate(a)
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
		})
	}
}

// BenchmarkAllocateBatch allocates b.N committed batches (of 1,000 sources,
// so most wait in a backlog) to 4 units.
func BenchmarkAllocateBatch(b *testing.B) {
	e := newEnv(b)
	e.beat("imports", "n1-0", "n1-1", "n1-2", "n1-3")
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("s%d:n:%08x", i%1000, i)
		e.do("RPUSH", e.ns+":committed:"+id, `{"class":"J"}`)
		e.do("LPUSH", e.ns+":committed", id)
	}
	a := e.allocator(mustConfig(b, testConfig), newClock())
	b.ResetTimer()
	start := time.Now()
	n := 0
	for n < b.N {
		st := e.pass(a)
		n += st.Batches["assigned"] + st.Batches["backlog"]
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "batches/s")
}

var _ = massqueue.KindStatic

// unassignRoundRobin queues jobs static payloads in unassigned, dealt
// round-robin to sources sources (s0, s1, ...).
func (e *env) unassignRoundRobin(jobs, sources int) {
	args := []any{e.ns + ":unassigned"}
	for i := 0; i < jobs; i++ {
		args = append(args, fmt.Sprintf(`{"class":"J","sourceId":"s%d","name":"n","args":[%d],"id":"%d","queue_time":1.5}`, i%sources, i, i))
		if len(args) == 2001 || i == jobs-1 {
			e.do("LPUSH", args...)
			args = args[:1]
		}
	}
}

// zeroCallgrind zeroes the counters of a Redis run under callgrind
// (COST_REDIS, with COST_CALLGRIND=1), so they count what follows alone:
// that server's only, found by its process id.
func (e *env) zeroCallgrind() {
	if os.Getenv("COST_CALLGRIND") == "" {
		return
	}
	info, _ := e.do("INFO", "server").([]byte)
	pid := ""
	for _, l := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "process_id:"); ok {
			pid = v
		}
	}
	if pid == "" {
		e.t.Fatal("no process_id in INFO server")
	}
	if out, err := exec.Command("callgrind_control", "-z", pid).CombinedOutput(); err != nil {
		e.t.Fatalf("callgrind_control: %v %s", err, out)
	}
}
