package massio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/massqueue"
)

const testConfig = `
node_id: n1
pools:
  static: {general: {worker_count: 2}, reports: {worker_count: 1}}
  batch:  {imports: {unit_count: 2, workers_per_unit: 2}}
mapping:
  static: {default: {default: general, report: reports}, s2: {report: nowhere}}
  batch:  {default: {default: imports}, s3: {report: missing_batch}}
`

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Unix(1700000000, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func mustConfig(t testing.TB, y string) *massqueue.Config {
	t.Helper()
	cfg, err := massqueue.ParseConfig([]byte(y), "h")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func (e *env) allocator(cfg *massqueue.Config, clk *clock) *massio.Allocator {
	e.t.Helper()
	a, err := massio.NewAllocator(massio.AllocatorConfig{Client: e.c, Config: cfg, Now: clk.Now,
		Hostname: "h", WorkerID: "h:1:mass-allocator", Interval: 50 * time.Millisecond})
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func (e *env) pass(a *massio.Allocator) massio.PassStats {
	e.t.Helper()
	st, err := a.Pass(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// released writes a static payload in the released shape, as resqu-client
// does (LPUSH unassigned).
func (e *env) released(source, name string, n int) string {
	p := fmt.Sprintf(`{"class":"Job","sourceId":%q,"name":%q,"args":{"n":%d},"id":"%08x5a8e3f1c2b3d41.23456789","queue_time":1700000000.123456}`,
		source, name, n, n)
	e.do("LPUSH", e.ns+":unassigned", p)
	return p
}

// releasedBatch builds and commits a batch with the commands resqu-client
// sends: LPUSH (first push), LPUSHX, EXPIRE after each, then RENAMENX,
// PERSIST and LPUSH committed.
func (e *env) releasedBatch(source, name string, n int) string {
	id := fmt.Sprintf("%s:%s:%08x", source, name, n*7919+len(source))
	unc, com := e.ns+":uncommitted:"+id, e.ns+":committed:"+id
	for i := 0; i < n; i++ {
		p := fmt.Sprintf(`{"class":"Job","sourceId":%q,"name":%q,"args":{"batch":%q,"n":%d},"id":"j%d","queue_time":1700000000.5}`, source, name, id, i, i)
		if i == 0 {
			e.do("LPUSH", unc, p)
		} else {
			e.do("LPUSHX", unc, p)
		}
		e.do("EXPIRE", unc, 3600)
	}
	e.do("RENAMENX", unc, com)
	e.do("PERSIST", com)
	e.do("LPUSH", e.ns+":committed", id)
	return id
}

func (e *env) beat(pool string, units ...string) {
	e.t.Helper()
	for _, u := range units {
		if err := e.c.UnitBeat(context.Background(), pool, u, time.Unix(1700000000, 0)); err != nil {
			e.t.Fatal(err)
		}
	}
}

func TestAllocateStatic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	clk := newClock()
	a := e.allocator(mustConfig(t, testConfig), clk)
	p1 := e.released("s1", "import", 1)
	p2 := e.released("s1", "import", 2)
	p3 := e.released("s2", "import", 3)
	p4 := e.released("s1", "report", 4)
	nowhere := e.released("s2", "report", 5)
	e.do("LPUSH", e.ns+":unassigned", `{"class":"Job","args":[]}`)
	e.do("LPUSH", e.ns+":unassigned", `{"class":"Job","sourceId":"a:b","name":"x"}`)
	e.do("LPUSH", e.ns+":unassigned", `garbage`)
	if _, err := massio.EnqueueStatic(ctx, e.c, massqueue.Job{Class: "Go", Source: "s3", Name: "import"}); err != nil {
		t.Fatal(err)
	}
	st := e.pass(a)
	if st.Static.Moved != 5 || st.Static.Quarantined != 3 || st.Static.Failed != 1 || st.BadRecorded != 3 {
		t.Fatalf("pass: %+v", st)
	}
	if got := e.queued("general", "s1"); len(got) != 2 || got[0] != p1 || got[1] != p2 {
		t.Errorf("general/s1: %q", got)
	}
	if got := e.queued("general", "s2"); len(got) != 1 || got[0] != p3 {
		t.Errorf("general/s2: %q", got)
	}
	if got := e.queued("reports", "s1"); len(got) != 1 || got[0] != p4 {
		t.Errorf("reports/s1: %q", got)
	}
	if got := e.ring("general"); strings.Join(got, ",") != "s1,s2,s3" {
		t.Errorf("ring: %q", got)
	}
	// each source's first job is in its ring entry (it joined the ring
	// with an empty FIFO), s1's second in its FIFO: status counts both
	if got := e.strs("LRANGE", e.ns+":static:queue:general:s1", 0, -1); len(got) != 1 || got[0] != p2 {
		t.Errorf("general/s1's FIFO: %q", got)
	}
	if n := e.int("EXISTS", e.ns+":static:queue:general:s2"); n != 0 {
		t.Errorf("general/s2 has a FIFO for its one job")
	}
	for _, sp := range e.status().Static {
		if want := map[string]string{"general": "4 ring 3 [{s1 2} {s2 1} {s3 1}]", "reports": "1 ring 1 [{s1 1}]"}[sp.Pool]; fmt.Sprintf("%d ring %d %v", sp.Waiting, sp.Ring, sp.Sources) != want {
			t.Errorf("status of %s: %+v, want %s", sp.Pool, sp, want)
		}
	}
	failed := e.strs("LRANGE", e.ns+":failed", 0, -1)
	t.Logf("failed: %q", failed)
	if len(failed) != 3 {
		t.Fatalf("failed: %q", failed)
	}
	joined := strings.Join(failed, "\n")
	for _, want := range []string{`missing sourceId, name`, `sourceId \"a:b\" contains ':'`, `not a JSON object`, `"exception":"ResqueGo::BadPayload"`, `"queue":"unassigned"`, `"payload":"garbage"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("failed entries lack %s:\n%s", want, joined)
		}
	}
	fs, err := massio.Failures(ctx, e.c)
	if err != nil || len(fs) != 1 || string(fs[0].Entry) != nowhere || fs[0].Kind != massqueue.KindStatic || fs[0].Source != "s2" ||
		fs[0].Reason != "static pool nowhere (from mapping.static.s2.report) does not exist" {
		t.Fatalf("failures: %+v %v", fs, err)
	}
	// an override fixes the route; reallocation runs it
	if err := massio.SetRoute(ctx, e.c, "s2", "report", "general"); err != nil {
		t.Fatal(err)
	}
	if n, err := massio.Reallocate(ctx, e.c, fs[0].ID); err != nil || n != 1 {
		t.Fatalf("reallocate: %d %v", n, err)
	}
	if st := e.pass(a); st.Static.Moved != 1 {
		t.Fatalf("pass after reallocate: %+v", st)
	}
	if got := e.queued("general", "s2"); len(got) != 2 || got[1] != nowhere {
		t.Errorf("general/s2 after reallocate: %q", got)
	}
	if e.int("HLEN", e.ns+":batch:allocation_reasons") != 0 || e.int("LLEN", e.ns+":batch:allocation_failures") != 0 {
		t.Error("reallocation left its failure behind")
	}
}

// Overrides win over the mapping: src:<s>:cfg:<j>, then src:<s>:cfg:default;
// Resolve (the CLI's view) and the allocation script agree.
func TestRouteOverrides(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	cfg := mustConfig(t, testConfig)
	a := e.allocator(cfg, newClock())
	check := func(source, job, pool, from string) {
		t.Helper()
		r, err := massio.Resolve(ctx, e.c, cfg, massqueue.KindStatic, source, job)
		if err != nil || r.Pool != pool || r.From != from {
			t.Errorf("resolve %s/%s: %+v %v, want %s from %s", source, job, r, err, pool, from)
		}
		n := len(e.queued(pool, source))
		e.released(source, job, 1)
		e.pass(a)
		if len(e.queued(pool, source)) != n+1 {
			t.Errorf("%s/%s not allocated to %s", source, job, pool)
		}
	}
	check("s5", "report", "reports", "mapping.static.default.report")
	_ = massio.SetRoute(ctx, e.c, "s5", "", "general")
	check("s5", "report", "general", "src:s5:cfg:default")
	_ = massio.SetRoute(ctx, e.c, "s5", "report", "reports")
	check("s5", "report", "reports", "src:s5:cfg:report")
	check("s5", "other", "general", "src:s5:cfg:default")
	_ = massio.SetRoute(ctx, e.c, "s5", "report", "")
	check("s5", "report", "general", "src:s5:cfg:default")
	rs, err := massio.Routes(ctx, e.c, cfg)
	if err != nil || len(rs) == 0 || rs[0].From != "src:s5:cfg:default" || rs[0].Kind != massqueue.KindStatic {
		t.Errorf("routes: %+v %v", rs, err)
	}
	// an override naming a batch pool cannot take a static job
	_ = massio.SetRoute(ctx, e.c, "s6", "", "imports")
	e.released("s6", "x", 1)
	e.pass(a)
	fs, _ := massio.Failures(ctx, e.c)
	if len(fs) != 1 || fs[0].Reason != "static pool imports (from src:s6:cfg:default) is a batch pool" {
		t.Errorf("failures: %+v", fs)
	}
}

// Several allocators at once, static jobs and batches: each job lands in
// exactly one pool FIFO, each batch on exactly one unit or backlog.
func TestAllocationExactlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	cfg := mustConfig(t, testConfig)
	e.beat("imports", "n1-0", "n1-1", "n2-0")
	const jobs, sources, batches = 20000, 50, 300
	var args []any
	args = append(args, e.ns+":unassigned")
	for i := 0; i < jobs; i++ {
		args = append(args, fmt.Sprintf(`{"class":"J","sourceId":"s%d","name":"n","id":"%d","queue_time":1.5}`, i%sources, i))
		if len(args) == 1001 || i == jobs-1 {
			e.do("LPUSH", args...)
			args = args[:1]
		}
	}
	var ids []string
	for i := 0; i < batches; i++ {
		id := fmt.Sprintf("b%d:n:%08x", i%40, i)
		e.do("RPUSH", e.ns+":committed:"+id, `{"class":"J"}`)
		e.do("LPUSH", e.ns+":committed", id)
		ids = append(ids, id)
	}
	const allocators = 6
	var wg sync.WaitGroup
	var mu sync.Mutex
	var moved, assigned, backlog int
	cctx, cancel := context.WithCancel(ctx)
	for i := 0; i < allocators; i++ {
		a, err := massio.NewAllocator(massio.AllocatorConfig{Client: e.c, Config: cfg, Chunk: 50, Interval: 20 * time.Millisecond,
			Now: newClock().Now, OnPass: func(st massio.PassStats) {
				mu.Lock()
				moved += st.Static.Moved
				assigned += st.Batches[rdb.BatchAssigned]
				backlog += st.Batches[rdb.BatchBacklog]
				mu.Unlock()
			}})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); a.Start(cctx); <-cctx.Done(); a.Stop() }()
	}
	redistest.Eventually(t, 0, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return moved == jobs && assigned+backlog == batches
	}, "allocation")
	cancel()
	wg.Wait()
	seen := map[string]bool{}
	total := 0
	for s := 0; s < sources; s++ {
		for _, p := range e.queued("general", fmt.Sprintf("s%d", s)) {
			var v struct{ ID string }
			_ = json.Unmarshal([]byte(p), &v)
			if seen[v.ID] {
				t.Fatalf("job %s allocated twice", v.ID)
			}
			seen[v.ID] = true
			total++
		}
	}
	if total != jobs || e.int("LLEN", e.ns+":unassigned") != 0 {
		t.Fatalf("%d of %d jobs allocated", total, jobs)
	}
	if n := e.int("LLEN", e.ns+":static:ring:general"); n != sources {
		t.Errorf("ring has %d sources, want %d", n, sources)
	}
	place := map[string]int{}
	for _, u := range []string{"n1-0", "n1-1", "n2-0"} {
		for _, id := range e.strs("LRANGE", e.ns+":pool:imports:"+u+":queues", 0, -1) {
			place[id]++
		}
	}
	for s := 0; s < 40; s++ {
		for _, id := range e.strs("LRANGE", fmt.Sprintf("%s:pool:imports:backlog:b%d", e.ns, s), 0, -1) {
			place[id]++
		}
	}
	for _, id := range ids {
		if place[id] != 1 {
			t.Fatalf("batch %s placed %d times", id, place[id])
		}
	}
	// one active batch per source: 40 sources on the units, the rest waiting
	if active := e.int("HLEN", e.ns+":pool:imports"); active != 40 || assigned != 40 {
		t.Errorf("%d active sources, %d assigned", active, assigned)
	}
}

// Jobs the released PHP server had already routed into its static pool
// FIFOs (static:queue:<pool>) when a team switched servers are adopted:
// moved back to unassigned, oldest first, and routed like new ones.
func TestAllocatorAdoptsReleasedServerFIFOs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clk := newClock()
	a := e.allocator(mustConfig(t, testConfig), clk)
	var want []string
	for i := range 3 {
		p := fmt.Sprintf(`{"class":"Job","sourceId":"s1","name":"import","args":{"n":%d},"id":"old%d","queue_time":1600000000.5}`, i, i)
		e.do("LPUSH", e.ns+":static:queue:general", p) // the released server's FIFO, oldest at the tail
		want = append(want, p)
	}
	st := e.pass(a) // adopts them
	if st.Adopted != 3 {
		t.Fatalf("adopted %d, want 3 (%+v)", st.Adopted, st)
	}
	clk.Add(time.Second)
	e.pass(a) // routes them
	if n := e.int("LLEN", e.ns+":static:queue:general"); n != 0 {
		t.Errorf("the released FIFO still holds %d jobs", n)
	}
	got := e.queued("general", "s1")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("general/s1 = %q, want the adopted jobs oldest first %q", got, want)
	}
}

// A mass job put back in the Resque queue its worker record names, as
// resque-web's retry of its failed entry does (SADD queues, RPUSH), is
// adopted instead of waiting in a queue no worker serves: a static job's
// (queue:static:queue:<pool>) and a batch job's (queue:committed:<batch
// id>), routed again as a static job of its source and name, as `resque-go
// failed retry` routes it, even though its batch is gone. A payload that
// cannot be routed is recorded in failed with the reason.
func TestAllocatorAdoptsResqueQueuesOfMassJobs(t *testing.T) {
	t.Parallel()
	for _, q := range []string{"static:queue:general", "committed:s1:import:abc"} {
		t.Run(q, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			clk := newClock()
			a := e.allocator(mustConfig(t, testConfig), clk)
			var want []string
			for i := range 3 {
				p := fmt.Sprintf(`{"class":"Job","sourceId":"s1","name":"import","args":{"n":%d},"id":"r%d","queue_time":1600000000.5}`, i, i)
				e.do("SADD", e.ns+":queues", q)
				e.do("RPUSH", e.ns+":queue:"+q, p)
				want = append(want, p)
			}
			e.do("RPUSH", e.ns+":queue:"+q, `{"class":"Job","args":[1]}`)
			if st := e.pass(a); st.Adopted != 4 {
				t.Fatalf("adopted %d, want 4 (%+v)", st.Adopted, st)
			}
			clk.Add(time.Second)
			e.pass(a)
			if n := e.int("LLEN", e.ns+":queue:"+q); n != 0 {
				t.Errorf("the Resque queue still holds %d jobs", n)
			}
			got := e.queued("general", "s1")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("general/s1 = %q, want the adopted jobs oldest first %q", got, want)
			}
			failed := e.strs("LRANGE", e.ns+":failed", 0, -1)
			if len(failed) != 1 || !strings.Contains(failed[0], `"payload":{"class":"Job","args":[1]}`) || !strings.Contains(failed[0], "missing sourceId") {
				t.Errorf("failed = %q, want the unroutable payload recorded once, with the reason", failed)
			}
		})
	}
}

// A source joins the ring with its job in its ring entry only when its
// FIFO is empty: between a resume's clearing of the pause flag and its
// putting the source back on the ring, an allocation finds the source off
// the ring with jobs queued, and its job goes after them (the FIFO), the
// source's name on the ring. Claims then serve the source in order.
func TestAllocatorKeepsSourceOrderAcrossPause(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a := e.allocator(mustConfig(t, testConfig), newClock())
	if err := massio.Pause(ctx, e.c, "s9"); err != nil {
		t.Fatal(err)
	}
	want := []string{e.released("s9", "import", 1), e.released("s9", "import", 2)}
	e.pass(a)
	if got := e.ring("general"); len(got) != 0 {
		t.Fatalf("a paused source is on the ring: %q", got)
	}
	if _, err := e.c.ClearPauseFlag(ctx, "s9"); err != nil {
		t.Fatal(err)
	}
	want = append(want, e.released("s9", "import", 3))
	e.pass(a)
	if got := e.strs("LRANGE", e.ns+":static:ring:general", 0, -1); strings.Join(got, ",") != "s9" {
		t.Errorf("ring: %q, want the source's name", got)
	}
	if got := e.queued("general", "s9"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("queued: %q, want %q", got, want)
	}
	if _, err := massio.Resume(ctx, e.c, "s9"); err != nil {
		t.Fatal(err)
	}
	w := e.worker(1, protocol.StaticPoolSource("general"))
	for i, p := range want {
		res, ok := w.claim()
		if !ok || string(res.Payload) != p {
			t.Fatalf("claim %d: %s, want %s", i, res.Payload, p)
		}
		w.finish(res, rdb.OutcomeOK)
	}
	if res, ok := w.claim(); ok {
		t.Errorf("a fourth job: %s", res.Payload)
	}
}

// A job routed to a pool that does not exist is recorded with where the
// pool came from, for each step of the lookup; two jobs of one source and
// name in one pass share the route and both are recorded.
func TestRouteFailureReasons(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a := e.allocator(mustConfig(t, `
pools: {static: {general: {worker_count: 1}}}
mapping: {static: {default: {default: ghost_d, rep: ghost_j}, s3: {imp: ghost_s}}}`), newClock())
	e.do("SET", e.ns+":src:s1:cfg:imp", "ghost_o")
	e.do("SET", e.ns+":src:s2:cfg:default", "ghost_od")
	for _, sj := range [][2]string{{"s1", "imp"}, {"s2", "imp"}, {"s3", "imp"}, {"s4", "rep"}, {"s5", "imp"}, {"s5", "imp"}} {
		e.released(sj[0], sj[1], 1)
	}
	if st := e.pass(a); st.Static.Failed != 6 {
		t.Fatalf("pass: %+v", st)
	}
	fs, err := massio.Failures(ctx, e.c)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, f.Reason)
	}
	sort.Strings(got)
	want := []string{
		"static pool ghost_d (from mapping.static.default.default) does not exist",
		"static pool ghost_d (from mapping.static.default.default) does not exist",
		"static pool ghost_j (from mapping.static.default.rep) does not exist",
		"static pool ghost_o (from src:s1:cfg:imp) does not exist",
		"static pool ghost_od (from src:s2:cfg:default) does not exist",
		"static pool ghost_s (from mapping.static.s3.imp) does not exist",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reasons:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The allocator reads the producers' shape ({"class","sourceId","name"
// first, names without escapes) by a pattern and decodes anything else:
// both ways route a payload to the same source, and quarantine the same
// bad ones. A payload in that shape that is not JSON further on is routed
// (its worker fails it as a BadPayload).
func TestAllocateStaticPayloadShapes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.allocator(mustConfig(t, `
pools: {static: {general: {worker_count: 1}, other: {worker_count: 1}}}
mapping: {static: {default: {default: general, nA: other}}}`), newClock())
	routed := map[string]string{
		`{"class":"J","sourceId":"s1","name":"n"}`:                  "s1",
		`{"class":"J","sourceId":"s\/2","name":"n","args":[]}`:      "s/2",
		`{"sourceId":"s3","class":"J","name":"n"}`:                  "s3",
		`{"class":"J","sourceId":7,"name":"n"}`:                     "7",
		`{ "class": "J", "sourceId": "s4", "name": "n" }`:           "s4",
		`{"class":"J","sourceId":"s5","name":"n\u0041","args":{}}`:  "s5",
		`{"class":"J","sourceId":"s6","name":"n","args":[1,}`:       "s6",
		`{"class":"J","sourceId":"s7","name":"n","args":{"a:b":1}}`: "s7",
		// a class with escapes (PHP's namespaces, an escaped quote)
		`{"class":"App\\Jobs\\Import","sourceId":"s9","name":"n","args":[]}`: "s9",
		`{"class":"a\",\"b","sourceId":"s10","name":"n"}`:                    "s10",
		// cjson takes a raw control character in a string
		"{\"class\":\"J\",\"sourceId\":\"s\n8\",\"name\":\"n\"}": "s\n8",
	}
	bad := []string{
		`{"class":"","sourceId":"b1","name":"n"}`,
		`{"class":"J","sourceId":"b:2","name":"n"}`,
		`{"class":"J","sourceId":"b3","name":"n"`,
		`{"class":"J","sourceId":"b4"}`,
		`{"class":"J","sourceId":"","name":"n"}`,
		`{"class":"J","sourceId":"b5","name":"n","args":[`,
	}
	for p := range routed {
		e.do("LPUSH", e.ns+":unassigned", p)
	}
	for _, p := range bad {
		e.do("LPUSH", e.ns+":unassigned", p)
	}
	if st := e.pass(a); st.Static.Moved != len(routed) || st.Static.Quarantined != len(bad) {
		t.Fatalf("pass: %+v", st)
	}
	for p, source := range routed {
		pool := "general"
		if source == "s5" {
			pool = "other" // its name, nA, escaped
		}
		if got := e.queued(pool, source); len(got) != 1 || got[0] != p {
			t.Errorf("%s: source %s holds %q", p, source, got)
		}
	}
	failed := strings.Join(e.strs("LRANGE", e.ns+":failed", 0, -1), "\n")
	for _, p := range bad {
		if q, _ := json.Marshal(p); !strings.Contains(failed, string(q[1:len(q)-1])) && !strings.Contains(failed, p) {
			t.Errorf("%s not in failed:\n%s", p, failed)
		}
	}
}

// A source's FIFO or a pool's ring that is not a list (a key written by
// hand) does not lose the payload being placed there, nor stop the pass:
// the payload is recorded in batch:allocation_failures with the reason, the
// others are placed, and once the key is fixed `mass reallocate` places it.
func TestAllocationSurvivesKeysOfTheWrongType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a := e.allocator(mustConfig(t, `
pools: {static: {general: {worker_count: 1}, reports: {worker_count: 1}, third: {worker_count: 1}}}
mapping: {static: {default: {default: general, report: reports, third: third}}}`), newClock())
	e.do("SET", e.ns+":static:queue:general:s1", "not a list")
	e.do("SET", e.ns+":static:ring:reports", "not a list")
	e.do("SET", e.ns+":static:state:third", "not a hash")
	p1 := e.released("s1", "import", 1)
	p2 := e.released("s2", "import", 2)
	p3 := e.released("s3", "report", 3)
	p4 := e.released("s4", "third", 4)
	if st := e.pass(a); st.Static.Moved != 1 || st.Static.Failed != 3 {
		t.Fatalf("pass: %+v", st)
	}
	if got := e.queued("general", "s2"); len(got) != 1 || got[0] != p2 {
		t.Errorf("general/s2: %q", got)
	}
	if got := e.ring("general"); strings.Join(got, ",") != "s2" {
		t.Errorf("general's ring: %q", got)
	}
	fs, err := massio.Failures(ctx, e.c)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, f := range fs {
		reasons[string(f.Entry)] = f.Reason
	}
	if r := reasons[p1]; !strings.Contains(r, "static:queue:general:s1") || !strings.Contains(r, "WRONGTYPE") {
		t.Errorf("p1's reason: %q (failures %+v)", r, fs)
	}
	if r := reasons[p3]; !strings.Contains(r, "static:ring:reports is a string, not a list") {
		t.Errorf("p3's reason: %q (failures %+v)", r, fs)
	}
	if r := reasons[p4]; !strings.Contains(r, "static:state:third is a string, not a hash") {
		t.Errorf("p4's reason: %q (failures %+v)", r, fs)
	}
	if e.int("HEXISTS", e.ns+":static:state:reports", "m:s3") != 0 || e.int("HEXISTS", e.ns+":static:state:general", "m:s1") != 0 {
		t.Error("a source is marked on a ring it is not on")
	}
	e.do("DEL", e.ns+":static:queue:general:s1", e.ns+":static:ring:reports", e.ns+":static:state:third")
	for _, f := range fs {
		if n, err := massio.Reallocate(ctx, e.c, f.ID); err != nil || n != 1 {
			t.Fatalf("reallocate: %d %v", n, err)
		}
	}
	if st := e.pass(a); st.Static.Moved != 3 {
		t.Fatalf("pass after reallocate: %+v", st)
	}
	if got := e.queued("third", "s4"); len(got) != 1 || got[0] != p4 {
		t.Errorf("third/s4: %q", got)
	}
	if got := e.queued("general", "s1"); len(got) != 1 || got[0] != p1 {
		t.Errorf("general/s1: %q", got)
	}
	if got := e.queued("reports", "s3"); len(got) != 1 || got[0] != p3 {
		t.Errorf("reports/s3: %q", got)
	}
}

// A key every allocation may need (the quarantine, the allocation
// failures and their reasons, the source settings, the static pools'
// beats; for batches, committed too) written by hand with another type
// stops the pass with an error naming it before anything is popped: the
// payload or batch waits in unassigned or committed, and is placed once
// the key is fixed.
func TestAllocationRefusesSharedKeysOfTheWrongType(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"resque-go:mass:quarantine", "batch:allocation_failures", "batch:allocation_reasons", "static:settings", "static:pools"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			a := e.allocator(mustConfig(t, testConfig), newClock())
			e.do("SET", e.ns+":"+key, "not a list, hash or zset")
			p := e.released("s1", "import", 1)
			b := e.releasedBatch("s2", "import", 1)
			_, err := a.Pass(context.Background())
			if err == nil || !strings.Contains(err.Error(), e.ns+":"+key+" is a string") {
				t.Fatalf("pass: %v, want an error naming %s", err, key)
			}
			if got := e.strs("LRANGE", e.ns+":unassigned", 0, -1); len(got) != 1 || got[0] != p {
				t.Errorf("unassigned: %q", got)
			}
			if key != "static:pools" && key != "resque-go:mass:quarantine" {
				// the batch step alone (the pass stopped at the static one)
				cfg := mustConfig(t, testConfig)
				_, err := e.c.AllocateBatch(context.Background(), rdb.AllocArgs{Routing: cfg.Routing(), Now: time.Unix(1700000000, 0), Alive: 30 * time.Second})
				if err == nil || !strings.Contains(err.Error(), e.ns+":"+key+" is a string") {
					t.Errorf("batch allocation: %v, want an error naming %s", err, key)
				}
			}
			if got := e.strs("LRANGE", e.ns+":committed", 0, -1); len(got) != 1 || got[0] != b {
				t.Errorf("committed: %q", got)
			}
			e.do("DEL", e.ns+":"+key)
			e.beat("imports", "n1-0")
			e.pass(a)
			if got := e.queued("general", "s1"); len(got) != 1 || got[0] != p {
				t.Errorf("general/s1 after the fix: %q", got)
			}
			if got := e.units("imports", "n1-0"); len(got) != 1 || got[0] != b {
				t.Errorf("n1-0 after the fix: %q", got)
			}
		})
	}
}
