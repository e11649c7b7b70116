package rdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// BenchmarkScriptCost measures what Redis spends per no-op job on the
// claim/finish path with no concurrency and a fixed batch size m (m slots
// finishing and claiming in one round trip), next to two floors measured
// the same way:
//
//   - pipeline: the minimal Resque loop's commands (LPOP, SET worker,
//     INCR stat:processed, INCR stat:processed:<id>, DEL worker) for m jobs
//     in one pipeline, no script;
//   - lua: the same commands for m jobs inside one script call, no logic;
//   - resque-go: finish_claim_batch.lua with m plain successes.
//
// One connection, one request at a time, so Redis's CPU (INFO cpu, main
// thread) is spent on nothing else:
//
//	go test -run '^$' -bench ScriptCost -benchtime 40000x ./internal/rdb
//
// On a busy machine CPU time moves by 20% from run to run; instructions do
// not. To count them, run redis-server under valgrind --tool=callgrind and
// point the benchmark at it with COST_REDIS=redis://127.0.0.1:PORT; the
// difference of two runs' totals (say 10000x and 20000x) over the jobs
// between them is Redis's instructions per job. COST_EDIT="old=>new;;..."
// replaces text in finish_claim_batch.lua's own part and in the functions
// it shares with the other per-job scripts first, to measure what a part
// of them costs (and COST_LUA_DEFS=1 puts the batch script's function
// definitions in front of the lua floor). COST_EVAL=1 runs the scripts as
// EVALSHA instead of functions (hot.go), as on Redis 6.2. COST_EVENTS=1
// turns the events stream on.
func BenchmarkScriptCost(b *testing.B) {
	for _, m := range []int{1, 8, 16, 32} {
		b.Run(fmt.Sprintf("pipeline/m=%d", m), func(b *testing.B) { costPipeline(b, m) })
		b.Run(fmt.Sprintf("lua/m=%d", m), func(b *testing.B) { costLua(b, m) })
		b.Run(fmt.Sprintf("resque-go/m=%d", m), func(b *testing.B) { costBatch(b, m, 0) })
		// jobs with an id while dependencies are in use: each finish
		// records the job's outcome and looks for jobs waiting for it
		b.Run(fmt.Sprintf("deps/m=%d", m), func(b *testing.B) { costBatch(b, m, -1) })
		// the same jobs with dependencies not in use
		b.Run(fmt.Sprintf("ids/m=%d", m), func(b *testing.B) { costBatch(b, m, -2) })
		// plain jobs counted by a cap and a rate, neither ever full
		// (docs/limits.md: --limit Noop=1000 --rate Noop=1000000/1s)
		b.Run(fmt.Sprintf("limits/m=%d", m), func(b *testing.B) { costBatch(b, m, -3) })
		for _, n := range []int{1, 10000} {
			b.Run(fmt.Sprintf("static/sources=%d/m=%d", n, m), func(b *testing.B) { costBatch(b, m, n) })
		}
	}
}

type costEnv struct {
	c    *Client
	conn redis.Conn
	k    protocol.Keys
}

func newCostEnv(b *testing.B) *costEnv {
	url := os.Getenv("RESQUE_GO_TEST_REDIS")
	if u := os.Getenv("COST_REDIS"); u != "" {
		url = u // a server under a profiler (callgrind)
	}
	// a namespace of one length for every case, as short as a real one
	// ("resque"): the test's name would make keys longer for some cases
	// than for others, and past 64 bytes Redis copies a script's argument
	// instead of reusing a cached object (a 55-byte namespace put the
	// static cases' keys there and not the plain queue's)
	var r [4]byte
	_, _ = rand.Read(r[:])
	// COST_EVENTS=1: the events stream on (docs/events.md), to measure it
	c, err := New(Options{URL: url, Namespace: "rq" + hex.EncodeToString(r[:]), Events: EventsConfig{On: os.Getenv("COST_EVENTS") != ""}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	conn, err := redis.DialURL(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return &costEnv{c: c, conn: conn, k: c.Keys()}
}

// fill queues n no-op jobs.
func (e *costEnv) fill(b *testing.B, n int) {
	args := []any{e.k.Queue("q")}
	for i := 0; i < n; i++ {
		args = append(args, `{"class":"Noop","args":[1]}`)
		if len(args) == 1001 || i == n-1 {
			if _, err := e.conn.Do("RPUSH", args...); err != nil {
				b.Fatal(err)
			}
			args = args[:1]
		}
	}
}

// fillIDs queues n no-op jobs with ids, as resque-go and php-resque write them.
func (e *costEnv) fillIDs(b *testing.B, n int) {
	args := []any{e.k.Queue("q")}
	for i := 0; i < n; i++ {
		args = append(args, fmt.Sprintf(`{"class":"Noop","args":[1],"id":"%032x"}`, i))
		if len(args) == 1001 || i == n-1 {
			if _, err := e.conn.Do("RPUSH", args...); err != nil {
				b.Fatal(err)
			}
			args = args[:1]
		}
	}
}

// zeroCallgrind zeroes the counters of a Redis run under callgrind
// (COST_CALLGRIND=1), so they count the drain alone: that server's only,
// found by its process id, not every callgrind run on the machine.
func (e *costEnv) zeroCallgrind(b *testing.B) {
	if os.Getenv("COST_CALLGRIND") == "" {
		return
	}
	info, err := redis.String(e.conn.Do("INFO", "server"))
	if err != nil {
		b.Fatal(err)
	}
	pid := ""
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "process_id:"); ok {
			pid = v
		}
	}
	if pid == "" {
		b.Fatal("no process_id in INFO server")
	}
	if out, err := exec.Command("callgrind_control", "-z", pid).CombinedOutput(); err != nil {
		b.Fatalf("callgrind_control: %v %s", err, out)
	}
}

// fillStatic queues n no-op jobs in a static pool (p) as the allocator
// does: the ring of the sources, each entry holding its source's first job
// (it joined the ring with an empty FIFO), and the others in its FIFO.
func (e *costEnv) fillStatic(b *testing.B, n, sources int) {
	const noop = `{"class":"Noop","args":[1]}`
	for i := 0; i < n; i++ {
		src := "s" + strconv.Itoa(i%sources)
		if i < sources {
			e.conn.Send("RPUSH", e.k.StaticRing("p"), protocol.StaticInline(src, noop))
			e.conn.Send("HSET", e.k.StaticState("p"), "m:"+src, "r")
		} else {
			e.conn.Send("RPUSH", e.k.StaticSourceQueue("p", src), noop)
		}
	}
	if _, err := e.conn.Do(""); err != nil {
		b.Fatal(err)
	}
}

// cost reads Redis's main-thread CPU (µs) and its command count.
func (e *costEnv) cost(b *testing.B) (usec float64, cmds int64, exec float64) {
	var scripts, plain float64
	info, err := redis.String(e.conn.Do("INFO", "all"))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case name == "used_cpu_sys_main_thread" || name == "used_cpu_user_main_thread":
			f, _ := strconv.ParseFloat(v, 64)
			usec += f * 1e6
		case strings.HasPrefix(name, "cmdstat_") && name != "cmdstat_info":
			c, rest, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
			u, _, _ := strings.Cut(strings.TrimPrefix(rest, "usec="), ",")
			n, _ := strconv.ParseInt(c, 10, 64)
			t, _ := strconv.ParseFloat(u, 64)
			if name == "cmdstat_evalsha" || name == "cmdstat_eval" || name == "cmdstat_fcall" {
				scripts += t
				continue
			}
			cmds += n
			plain += t
		}
	}
	if scripts > 0 {
		return usec, cmds, scripts
	}
	return usec, cmds, plain
}

func (e *costEnv) report(b *testing.B, jobs int, u0 float64, c0 int64, x0 float64) {
	u1, c1, x1 := e.cost(b)
	b.ReportMetric((x1-x0)/float64(jobs), "exec-µs/job")
	b.ReportMetric((u1-u0)/float64(jobs), "redis-µs/job")
	b.ReportMetric(float64(c1-c0-1)/float64(jobs), "cmds/job")
}

func costPipeline(b *testing.B, m int) {
	e := newCostEnv(b)
	e.fill(b, b.N)
	u0, c0, x0 := e.cost(b)
	e.zeroCallgrind(b)
	b.ResetTimer()
	// as the minimal loop: a job's writes (SET worker, the counters, DEL
	// worker) go with the next pop
	held := make([]any, m)
	for {
		for j, p := range held {
			if p != nil {
				id := "w" + strconv.Itoa(j)
				e.conn.Send("SET", e.k.Worker(id), p)
				e.conn.Send("INCR", e.k.StatProcessed())
				e.conn.Send("INCR", e.k.StatProcessedWorker(id))
				e.conn.Send("DEL", e.k.Worker(id))
			}
		}
		for j := 0; j < m; j++ {
			e.conn.Send("LPOP", e.k.Queue("q"))
		}
		replies, err := redis.Values(e.conn.Do(""))
		if err != nil {
			b.Fatal(err)
		}
		copy(held, replies[len(replies)-m:])
		if held[0] == nil {
			break
		}
	}
	b.StopTimer()
	e.report(b, b.N, u0, c0, x0)
}

var costLuaScript = redis.NewScript(-1, costLuaBody)

const costLuaBody = `
local m = tonumber(ARGV[1])
local out, n = {}, 0
for j = 1, m do
  if ARGV[1 + j] == '1' then
    redis.call('DEL', KEYS[2 + 2 * j - 1])
    redis.call('INCR', KEYS[2 + 2 * j])
    n = n + 1
  end
end
if n > 0 then redis.call('INCRBY', KEYS[2], n) end
for j = 1, m do
  local p = redis.call('LPOP', KEYS[1])
  if p then redis.call('SET', KEYS[2 + 2 * j - 1], p) end
  out[j] = p
end
return out`

func costLua(b *testing.B, m int) {
	script := costLuaScript
	if os.Getenv("COST_LUA_DEFS") != "" {
		src := newHotScripts(false, nil).finishClaimBatch.source()
		src = src[:strings.Index(src, "local m = tonumber(ARGV[#ARGV])")]
		script = redis.NewScript(-1, src+"\nlocal memo = {rings = {}, units = {}}\n"+costLuaBody)
	}
	e := newCostEnv(b)
	e.fill(b, b.N)
	u0, c0, x0 := e.cost(b)
	e.zeroCallgrind(b)
	b.ResetTimer()
	held := make([]bool, m)
	for done := 0; done < b.N; {
		args := []any{2 + 2*m, e.k.Queue("q"), e.k.StatProcessed()}
		for j := 0; j < m; j++ {
			id := "w" + strconv.Itoa(j)
			args = append(args, e.k.Worker(id), e.k.StatProcessedWorker(id))
		}
		args = append(args, m)
		for j := 0; j < m; j++ {
			if held[j] {
				args = append(args, "1")
				done++
			} else {
				args = append(args, "0")
			}
		}
		out, err := redis.Values(script.Do(e.conn, args...))
		if err != nil {
			b.Fatal(err)
		}
		for j := range held {
			held[j] = j < len(out) && out[j] != nil
		}
		if !held[0] {
			break
		}
	}
	b.StopTimer()
	e.report(b, b.N, u0, c0, x0)
}

// costBatch drains a plain queue, or with sources > 0 a static pool's ring
// of that many sources (their jobs in turn), m slots a script call; with
// sources -1 a plain queue of jobs with ids, finished as a worker does
// while dependencies are in use (rdb.Outcome.DepsID); -2 the same jobs
// with dependencies not in use; -3 plain jobs under a cap and a rate.
func costBatch(b *testing.B, m, sources int) {
	e := newCostEnv(b)
	ctx := context.Background()
	src := protocol.QueueSource("q")
	deps := sources == -1
	depsID := func(payload []byte) string {
		if !deps {
			return ""
		}
		p, _ := protocol.DecodePayload(payload)
		return p.ID
	}
	switch {
	case sources == -1 || sources == -2:
		e.fillIDs(b, b.N+m)
	case sources <= 0:
		e.fill(b, b.N+m)
	default:
		src = protocol.StaticPoolSource("p")
		e.fillStatic(b, b.N+m, sources)
	}
	calls := make([]*batchCall, m)
	claims := map[*batchCall]ClaimArgs{}
	now := time.Now()
	var limits *ClaimLimits
	var holds []LimitHold
	if sources == -3 {
		// the claims' time is fixed, and a rate lets N/100 + 1 jobs
		// start in one moment (docs/limits.md)
		if b.N > 9000 {
			b.Skip("limits: at most 9000x (-benchtime)")
		}
		capRule, err := protocol.ParseLimit("Noop=1000")
		if err != nil {
			b.Fatal(err)
		}
		rate, err := protocol.ParseRate("Noop=1000000/1s")
		if err != nil {
			b.Fatal(err)
		}
		limits = NewClaimLimits([]protocol.Limit{capRule, rate}, 15*time.Second)
		holds = []LimitHold{{Name: capRule.Name(), Cap: capRule.N}}
	}
	for j := range calls {
		a := ClaimArgs{WorkerID: "h:" + strconv.Itoa(j) + ":q", Host: "h", Sources: []protocol.Source{src}, Now: now, Limits: limits}
		if _, err := e.c.Register(ctx, a.WorkerID, now, 5*time.Second, true); err != nil {
			b.Fatal(err)
		}
		res, err := e.c.Claim(ctx, a)
		if err != nil || res.Payload == nil {
			b.Fatal(err, "no job")
		}
		ck, ca := e.c.claimKeysArgs(a)
		calls[j] = &batchCall{workerID: a.WorkerID, host: "h", src: res.Source, ck: ck, ca: ca, sources: 1,
			o: Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: "Noop", DepsID: depsID(res.Payload), Now: now, Limits: holds}}
		claims[calls[j]] = a
	}
	bt := &finishBatcher{c: e.c}
	if ed, eval := os.Getenv("COST_EDIT"), os.Getenv("COST_EVAL") != ""; ed != "" || eval {
		found := map[string]bool{}
		e.c.hotScripts = newHotScripts(!eval, func(name, src string) string {
			if (name != "finish_claim_batch.lua" && name != "shared") || ed == "" {
				return src
			}
			for _, r := range strings.Split(ed, ";;") {
				o, n, _ := strings.Cut(r, "=>")
				if strings.Contains(src, o) {
					found[o] = true
					src = strings.ReplaceAll(src, o, n)
				}
			}
			return src
		})
		for _, r := range strings.Split(ed, ";;") {
			if o, _, _ := strings.Cut(r, "=>"); ed != "" && !found[o] {
				b.Fatalf("no %q in the batch script or the shared functions", o)
			}
		}
	}
	u0, c0, x0 := e.cost(b)
	e.zeroCallgrind(b)
	b.ResetTimer()
	for done := 0; done < b.N; {
		for _, call := range calls {
			call.done = make(chan struct{})
		}
		bt.send(calls)
		done += m
		live := calls[:0]
		for _, call := range calls {
			_, res, err := parseFinishClaim(call.workerID, claims[call], call.reply, call.err)
			if err != nil {
				b.Fatal(err)
			}
			if res.Payload != nil {
				call.o.Seq, call.src, call.o.DepsID = res.Seq, res.Source, depsID(res.Payload)
				live = append(live, call)
			}
		}
		calls = live
		if len(calls) == 0 {
			break
		}
	}
	b.StopTimer()
	e.report(b, b.N, u0, c0, x0)
}
