package chaos

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redisproc"
)

// config sizes a chaos run.
type config struct {
	// Jobs is how many enqueues the producers make (each unique enqueue
	// counts, refused or not); plan fires come on top.
	Jobs int
	// Duration is the chaos window: jobs are pushed over its first 85 %,
	// faults happen all through it.
	Duration time.Duration
	// Seed makes the job mix and the fault schedule repeatable (their
	// timing against the processes is not).
	Seed uint64
	// MaxHole is the longest black hole (at least 2 s). It stays under 3
	// heartbeat intervals (15 s), after which a worker that cannot reach
	// Redis is taken for dead by the others (see the README's failure
	// modes).
	MaxHole time.Duration
	// ConnGap, when set, spaces the faults that break every connection
	// (Redis restarts, cuts, black holes) at least this far apart, so that
	// no worker misses three heartbeats in a row; 0 places them at random
	// among the others, where bursts of them happen.
	ConnGap time.Duration
	// MassRetry gives some mass jobs the classes Retry and Fail (their
	// retries go through the delayed queue); without it every mass job
	// succeeds at once.
	MassRetry bool
}

// fromEnv overrides c with CHAOS_JOBS, CHAOS_DURATION, CHAOS_SEED,
// CHAOS_MAX_BLACKHOLE, CHAOS_CONN_GAP and CHAOS_MASS_RETRY.
func (c config) fromEnv(t *testing.T) config {
	t.Helper()
	if v := os.Getenv("CHAOS_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 50 {
			t.Fatalf("CHAOS_JOBS=%q: want a number of jobs, at least 50", v)
		}
		c.Jobs = n
	}
	dur := func(name string, d *time.Duration) {
		if v := os.Getenv(name); v != "" {
			x, err := time.ParseDuration(v)
			if err != nil || x <= 0 {
				t.Fatalf("%s=%q: want a duration (90s, 10m)", name, v)
			}
			*d = x
		}
	}
	dur("CHAOS_DURATION", &c.Duration)
	dur("CHAOS_MAX_BLACKHOLE", &c.MaxHole)
	if v := os.Getenv("CHAOS_CONN_GAP"); v != "" {
		x, err := time.ParseDuration(v)
		if err != nil || x < 0 {
			t.Fatalf("CHAOS_CONN_GAP=%q: want a duration (0 for none)", v)
		}
		c.ConnGap = x
	}
	if v := os.Getenv("CHAOS_MASS_RETRY"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			t.Fatalf("CHAOS_MASS_RETRY=%q: want 0 or 1", v)
		}
		c.MassRetry = b
	}
	if v := os.Getenv("CHAOS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CHAOS_SEED=%q: want a number", v)
		}
		c.Seed = n
	}
	return c
}

const namespace = "chaos"

// Queues the producers push to; the serial queue is worked one job at a
// time by two processes of two slots each.
var queues = []string{"jobs", "later", "unique", "plans", "serial"}

// plans fired during the run: id -> period.
var plans = map[string]time.Duration{"p1": time.Second, "p2": 2 * time.Second}

// scenario is one chaos run.
type scenario struct {
	t   *testing.T
	cfg config
	dir string // handler files, configs, logs

	redis   *redisproc.Server // the primary
	replica *redisproc.Server // its replica (they swap at a failover)
	px      *proxy
	pool    *proc // current pool manager
	sched   *proc // standalone scheduler (nil while it is down)

	mu     sync.Mutex
	killed map[int][]death // worker pid -> when and how it died (pids are reused)
	faults faults

	sampler *massSampler // the mass pools as seen during the run

	outages []outage // when the workers could not reach Redis (restarts, black holes)

	planStart map[string]int64 // plan id -> first slot
	planEnd   map[string]int64 // plan id -> slot it was filed at when the schedulers stopped
}

// faults counts what was done to the system.
type faults struct {
	WorkerKills, SchedChildKills, SchedulerKills, ManagerKills int
	OrphanedChildren                                           int // children TERMed by their killed manager
	RedisRestarts                                              int
	RedisDown                                                  time.Duration
	Failovers, FailoversAborted                                int
	FailoverPause                                              time.Duration
	Cuts, CutSides                                             int
	Holes                                                      int
	HoleTime                                                   time.Duration
	Skipped                                                    int // faults with no target at that moment
}

// runChaos runs the whole scenario and returns its ledger.
func runChaos(t *testing.T, cfg config) *ledger {
	if cfg.MaxHole < 2*time.Second {
		cfg.MaxHole = 2 * time.Second
	}
	s := &scenario{t: t, cfg: cfg, dir: runDir(t), killed: map[int][]death{},
		planStart: map[string]int64{}, planEnd: map[string]int64{},
		sampler: &massSampler{backlog: map[string]bool{}, deadUnits: map[string]bool{}}}
	t.Logf("chaos: %d jobs over %s, seed %d, logs in %s", cfg.Jobs, cfg.Duration, cfg.Seed, s.dir)
	s.setup()
	jobs, batches := makeJobs(cfg)
	prod := newProducer(t, s.px.URL(), jobs, batches)
	began := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { prod.run(ctx, began, time.Duration(float64(cfg.Duration)*0.85)) })
	sctx, stopSampler := context.WithCancel(ctx)
	var sampling sync.WaitGroup
	sampling.Go(func() { s.sampler.sample(sctx, s.direct()) })
	s.chaos(began)
	produced := make(chan struct{})
	go func() { wg.Wait(); close(produced) }()
	if !pollProgress(2*time.Minute, func() bool { return isClosed(produced) }, prod.progress) {
		t.Fatal("the producers got nowhere for 2 minutes after the chaos window")
	}
	stopSampler()
	sampling.Wait()
	t.Logf("chaos: window over after %s; producers done; stopping the pool and the schedulers", time.Since(began).Round(time.Second))
	s.stopAll()
	c := s.direct()
	s.readPlanEnds(c)
	drain := s.drain(c)
	l := account(s, prod, c, drain)
	l.elapsed = time.Since(began)
	return l
}

// setup starts Redis (append-only file, fsync always), the proxy, the
// plans, the pool and the standalone scheduler.
func (s *scenario) setup() {
	t := s.t
	var err error
	s.redis, err = redisproc.StartWith(redisproc.Options{Dir: filepath.Join(s.dir, "redis"),
		Args: []string{"--appendonly", "yes", "--appendfsync", "always"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.redis.Stop() })
	// the replica, started as a primary and made a replica at run time: a
	// restart (of whichever is the primary by then) keeps its role
	s.replica, err = redisproc.StartWith(redisproc.Options{Dir: filepath.Join(s.dir, "replica"),
		Args: []string{"--appendonly", "yes", "--appendfsync", "always"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.replica.Stop() })
	host, port, _ := strings.Cut(s.redis.Addr(), ":")
	if _, err := redisDo(s.replica.Addr(), "REPLICAOF", host, port); err != nil {
		t.Fatal(err)
	}
	if !poll(30*time.Second, func() bool { return replicaInSync(s.replica.Addr()) }) {
		t.Fatal("the replica did not sync within 30 s")
	}
	s.px = startProxy(t, s.redis.Addr())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	handler := fmt.Sprintf("#!/bin/sh\n%s=1 %s='%s' GORACE=atexit_sleep_ms=0 exec '%s'\n", handlerEnv, dirEnv, s.dir, self)
	s.write("handler.sh", handler, 0o755)
	s.write("pool.yml", s.poolConfig(true), 0o644)
	s.write("drain.yml", s.poolConfig(false), 0o644)
	s.addPlans()
	s.pool = s.startPool("pool.yml")
	s.sched = s.startScheduler()
}

func (s *scenario) write(name, text string, mode os.FileMode) {
	if err := os.WriteFile(filepath.Join(s.dir, name), []byte(text), mode); err != nil {
		s.t.Fatal(err)
	}
}

// poolConfig is the pool file: 3 worker processes of 4 slots over the
// plain queues (the jobs queue under a cap of 12, so their leases fit
// only while no killed child's lease lingers, and a rate with room), 2 of 2 slots over the serial queue that run each job in a
// child process (--fork, children started ahead), a scheduler child
// (left out of the drain pool), and the mass queues: a static pool and a
// batch pool of two units (see massPools), every source mapped to them.
func (s *scenario) poolConfig(scheduler bool) string {
	return fmt.Sprintf(`fail_retries: 3
retry_backoff: fixed:1s
term_timeout: 2
kill_timeout: 8
log: {level: warn, format: json}
scheduler: %t
handlers:
  "*": {exec: "%s"}
limits:
  "queue:jobs": 12
rates:
  "queue:jobs": 5000/1s
workers:
  - queues: jobs,unique,later,plans
    processes: 3
    concurrency: 4
  - queues: serial
    serial: true
    fork: true
    processes: 2
    concurrency: 2
node_id: %s
pools:
  static:
    %s: {worker_count: 2}
  batch:
    %s: {unit_count: 2, workers_per_unit: 2}
mapping:
  static:
    default: {default: %[4]s}
  batch:
    default: {default: %[5]s}
`, scheduler, filepath.Join(s.dir, "handler.sh"), massNode, staticPool, batchPool)
}

func (s *scenario) startPool(cfg string) *proc {
	return startProc(s.t, "pool", filepath.Join(s.dir, "pool.log"), "pool", "--config", filepath.Join(s.dir, cfg),
		"--redis", s.px.URL(), "--namespace", namespace, "--status-interval", "1")
}

func (s *scenario) startScheduler() *proc {
	return startProc(s.t, "scheduler", filepath.Join(s.dir, "scheduler.log"), "scheduler",
		"--redis", s.px.URL(), "--namespace", namespace, "--log-format", "json", "--log-level", "warn")
}

// direct is a client straight to Redis (not through the proxy) for the
// checks.
func (s *scenario) direct() *rdb.Client {
	c, err := rdb.New(rdb.Options{URL: s.redis.URL(), Namespace: namespace})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close() })
	return c
}

// addPlans adds the plans with `resque-go plan add`, catch-up so that
// every slot fires (slots missed while no scheduler ran fire late, once).
func (s *scenario) addPlans() {
	start := time.Now().Add(3 * time.Second).Unix()
	c := s.direct()
	for id, every := range plans {
		code, out, errOut := runCLI(context.Background(), "plan", "add", "--redis", s.redis.URL(), "--namespace", namespace,
			"--id", id, "--queue", "plans", "--class", classPlan, "--args", fmt.Sprintf(`["plan-%s",0]`, id),
			"--every", every.String(), "--misfire", "catch-up", "--start", strconv.FormatInt(start, 10))
		if code != 0 {
			s.t.Fatalf("plan add: exit %d: %s%s", code, out, errOut)
		}
		p, err := planio.Get(context.Background(), c, id)
		if err != nil {
			s.t.Fatal(err)
		}
		s.planStart[id] = p.NextRun.Unix()
	}
}

// readPlanEnds reads where each plan stands once no scheduler runs.
func (s *scenario) readPlanEnds(c *rdb.Client) {
	for id := range plans {
		p, err := planio.Get(context.Background(), c, id)
		if err != nil {
			s.t.Fatal(err)
		}
		s.planEnd[id] = p.NextRun.Unix()
		if err := planio.Remove(context.Background(), c, id); err != nil {
			s.t.Fatal(err)
		}
	}
}

// death is the end of a worker process the test caused.
type death struct {
	at    time.Time
	cause string
}

// kill notes that worker pid dies now of cause.
func (s *scenario) kill(pid int, cause string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killed[pid] = append(s.killed[pid], death{time.Now(), cause})
}

// runDir is the run's directory: the test's own, or with CHAOS_KEEP=1 one
// that stays for a look at the logs.
func runDir(t *testing.T) string {
	if os.Getenv("CHAOS_KEEP") != "1" {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("", "chaos-ledger-")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Causes of death recorded for the pids of worker processes.
const (
	causeWorkerKill  = "worker kill -9"
	causeManagerKill = "pool manager kill -9 (its children got TERM)"
)

// fault kinds
const (
	fWorker = iota
	fSchedChild
	fScheduler
	fManager
	fRedis // the rest break every connection to Redis
	fFailover
	fCut
	fHole
	nFaults
)

var faultNames = [nFaults]string{"kill -9 worker", "kill -9 scheduler child", "kill -9 standalone scheduler",
	"kill -9 pool manager", "redis kill -9 + restart", "failover to the replica", "cut connections", "black hole"}

func breaksConnections(f int) bool { return f >= fRedis }

// plannedFault is a fault due at an offset of the window.
type plannedFault struct {
	at   time.Duration
	kind int
}

// faultPlan draws the faults: at least minimum of each kind, the rest by
// weight, one about every 3 s of the window, in random order and evenly
// spread with jitter. With a gap, the faults that break connections are
// taken out of that order and spaced gap (plus the longest black hole)
// apart instead, as many as fit, the minimum ones first.
func faultPlan(rng *rand.Rand, cfg config) []plannedFault {
	minimum := [nFaults]int{fWorker: 4, fSchedChild: 2, fScheduler: 2, fManager: 2, fRedis: 2, fFailover: 2, fCut: 2, fHole: 1}
	weight := [nFaults]int{fWorker: 34, fSchedChild: 8, fScheduler: 8, fManager: 8, fRedis: 6, fFailover: 4, fCut: 24, fHole: 12}
	var mins, rest []int
	for k, n := range minimum {
		for range n {
			mins = append(mins, k)
		}
	}
	total := 0
	for _, w := range weight {
		total += w
	}
	for len(mins)+len(rest) < int(cfg.Duration/(3*time.Second)) {
		x := rng.IntN(total)
		for k, w := range weight {
			if x < w {
				rest = append(rest, k)
				break
			}
			x -= w
		}
	}
	order := append(mins, rest...)
	var conn []int
	if cfg.ConnGap > 0 {
		var others []int
		for _, k := range order {
			if breaksConnections(k) {
				conn = append(conn, k)
			} else {
				others = append(others, k)
			}
		}
		order = others
		conn = conn[:min(len(conn), int(cfg.Duration/(cfg.ConnGap+cfg.MaxHole)))]
		rng.Shuffle(len(conn), func(i, j int) { conn[i], conn[j] = conn[j], conn[i] })
	}
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var plan []plannedFault
	step := cfg.Duration / time.Duration(len(order)+1)
	for i, k := range order {
		plan = append(plan, plannedFault{step*time.Duration(i+1) + time.Duration(rng.Int64N(int64(step/2))) - step/4, k})
	}
	if len(conn) > 0 {
		step := cfg.Duration / time.Duration(len(conn))
		for i, k := range conn {
			plan = append(plan, plannedFault{step*time.Duration(i) + step/2 - cfg.MaxHole, k})
		}
	}
	slices.SortStableFunc(plan, func(a, b plannedFault) int { return cmp.Compare(a.at, b.at) })
	return plan
}

// chaos runs the faults over the window. A black hole holds the loop for
// its length; the faults after it then follow at once.
func (s *scenario) chaos(began time.Time) {
	rng := rand.New(rand.NewPCG(s.cfg.Seed, 2))
	for _, f := range faultPlan(rng, s.cfg) {
		if d := time.Until(began.Add(f.at)); d > 0 {
			<-time.After(d) // the fault schedule
		}
		s.event("%s", faultNames[f.kind])
		s.fault(f.kind, rng)
	}
	if d := time.Until(began.Add(s.cfg.Duration)); d > 0 {
		<-time.After(d) // the end of the window
	}
}

// event appends a line to the run's fault log (faults.log).
func (s *scenario) event(format string, args ...any) {
	line := time.Now().Format("15:04:05.000") + " " + fmt.Sprintf(format, args...)
	appendLine(s.dir, "faults.log", line)
}

func (s *scenario) fault(f int, rng *rand.Rand) {
	switch f {
	case fWorker, fSchedChild:
		var targets []int
		for _, c := range children(s.pool.pid()) {
			if c.scheduler == (f == fSchedChild) {
				targets = append(targets, c.pid)
			}
		}
		if len(targets) == 0 {
			s.faults.Skipped++ // all in their restart backoff
			return
		}
		pid := targets[rng.IntN(len(targets))]
		s.event("  pid %d", pid)
		if f == fWorker {
			s.kill(pid, causeWorkerKill)
			s.faults.WorkerKills++
		} else {
			s.faults.SchedChildKills++
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	case fScheduler:
		s.sched.kill9()
		s.faults.SchedulerKills++
		<-time.After(time.Duration(200+rng.IntN(1800)) * time.Millisecond) // scheduler down a while
		s.sched = s.startScheduler()
	case fManager:
		old := s.pool
		kids := children(old.pid())
		old.kill9()
		s.event("  manager %d, children %v", old.pid(), kids)
		for _, c := range kids {
			if !c.scheduler {
				s.kill(c.pid, causeManagerKill)
			}
		}
		s.faults.ManagerKills++
		s.faults.OrphanedChildren += len(kids)
		s.pool = s.startPool("pool.yml")
	case fRedis:
		down := time.Duration(rng.IntN(1500)) * time.Millisecond
		from := time.Now()
		defer func() { s.noteOutage(from) }()
		s.redis.Stop()     // SIGKILL; the append-only file stays
		<-time.After(down) // Redis down a while
		if err := s.redis.Restart(); err != nil {
			s.t.Fatalf("redis restart: %v", err)
		}
		s.faults.RedisRestarts++
		s.faults.RedisDown += down
		s.event("  redis back after %s down", down)
	case fFailover:
		s.failover()
	case fCut:
		s.faults.CutSides += s.px.Cut()
		s.faults.Cuts++
	case fHole:
		d := 2*time.Second + time.Duration(rng.Int64N(int64(s.cfg.MaxHole-2*time.Second)+1))
		from := time.Now()
		s.px.BlackHole(d)
		s.noteOutage(from)
		s.event("  black hole of %s over", d)
		s.faults.Holes++
		s.faults.HoleTime += d
	}
}

// failover hands the primary's role to its replica with Redis's own
// coordinated FAILOVER (writes pause until the replica has everything, then
// the two swap roles: nothing acknowledged is lost, as with a planned
// Sentinel failover), points the proxy at the new primary and cuts every
// connection, as a Sentinel-aware client would see it. A replica not in
// sync at that moment (just after a restart of the primary) aborts it.
func (s *scenario) failover() {
	from := time.Now()
	if !replicaInSync(s.replica.Addr()) {
		s.faults.FailoversAborted++
		s.event("  failover skipped: the replica is not in sync")
		return
	}
	if _, err := redisDo(s.redis.Addr(), "FAILOVER", "TIMEOUT", "10000"); err != nil {
		s.faults.FailoversAborted++
		s.event("  failover refused: %v", err)
		return
	}
	if !poll(15*time.Second, func() bool { return role(s.replica.Addr()) == "master" }) {
		s.faults.FailoversAborted++
		s.event("  failover did not complete within 15 s (old primary's role: %s)", role(s.redis.Addr()))
		return
	}
	s.px.Retarget(s.replica.Addr())
	s.faults.CutSides += s.px.Cut()
	s.redis, s.replica = s.replica, s.redis
	s.noteOutage(from)
	s.faults.Failovers++
	s.faults.FailoverPause += time.Since(from)
	s.event("  failover done in %s: the primary is now %s", time.Since(from).Round(time.Millisecond), s.redis.Addr())
}

// redisDo sends one command on a connection of its own.
func redisDo(addr, cmd string, args ...any) (any, error) {
	c, err := redis.Dial("tcp", addr, redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(cmd, args...)
}

// role is ROLE's first element ("master", "slave"), "" when unreachable.
func role(addr string) string {
	v, err := redis.Values(redisDo(addr, "ROLE"))
	if err != nil || len(v) == 0 {
		return ""
	}
	r, _ := redis.String(v[0], nil)
	return r
}

// replicaInSync reports whether the replica at addr is connected to its
// primary and synced.
func replicaInSync(addr string) bool {
	info, err := redis.String(redisDo(addr, "INFO", "replication"))
	return err == nil && strings.Contains(info, "master_link_status:up") && !strings.Contains(info, "master_sync_in_progress:1")
}

// outage is a time when no process could reach Redis.
type outage struct{ from, to time.Time }

// noteOutage records an outage from from to now.
func (s *scenario) noteOutage(from time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outages = append(s.outages, outage{from, time.Now()})
}

// heartbeat is the workers' heartbeat interval; a worker whose heartbeat
// is 3 intervals old is taken for dead (README: failure modes).
const heartbeat = 5 * time.Second

// cutOffBefore finds, for a prune at at, an outage burst (outages less than
// a heartbeat apart) that began at least 2 heartbeats before it and lasted
// until a heartbeat before it or later: a worker's last beat then came at
// most a heartbeat before the burst, so at the prune its heartbeat could be
// 3 intervals old although it was alive. It returns the burst's length.
func cutOffBefore(outages []outage, at time.Time) (time.Duration, bool) {
	sorted := slices.SortedFunc(slices.Values(outages), func(a, b outage) int { return a.from.Compare(b.from) })
	for i := 0; i < len(sorted); {
		burst := sorted[i]
		j := i + 1
		for ; j < len(sorted) && sorted[j].from.Sub(burst.to) < heartbeat; j++ {
			if sorted[j].to.After(burst.to) {
				burst.to = sorted[j].to
			}
		}
		if !at.Before(burst.from.Add(2*heartbeat)) && !at.After(burst.to.Add(heartbeat)) {
			return burst.to.Sub(burst.from), true
		}
		i = j
	}
	return 0, false
}

// stopAll stops the standalone scheduler and the pool with QUIT (running
// jobs finish) and waits for every resque-go process to be gone (the
// children of killed managers exit on their own after TERM).
func (s *scenario) stopAll() {
	if err := s.sched.quit(30 * time.Second); err != nil {
		s.t.Error(err)
	}
	if err := s.pool.quit(60 * time.Second); err != nil {
		s.t.Error(err)
	}
	if !poll(30*time.Second, func() bool { return len(processes()) == 0 }) {
		s.t.Errorf("resque-go processes %v still run 30 s after the pool stopped", processes())
	}
}

// drainState is what the drain saw.
type drainState struct {
	took       time.Duration
	deadIDs    []string          // registered worker ids of dead pids, with a pool running
	leftover   []string          // what was not empty when the drain gave up
	stranded   map[string]string // job key -> queue:<mass list> it waits in, which no worker serves
	afterStop  []string          // keys left once the drain pool stopped
	workersEnd int64
}

// drain runs a pool without the scheduler child (nothing fires plans any
// more) until the queues, the delayed queue and the mass queues are empty
// and no worker holds a job, then checks the registry and stops it.
func (s *scenario) drain(c *rdb.Client) drainState {
	t := s.t
	ctx := context.Background()
	k := c.Keys()
	began := time.Now()
	p := s.startPool("drain.yml")
	var st drainState
	check := func() []string {
		var left []string
		// every queue Redis knows: a job sent back to a queue no worker
		// serves (a mass job's retry, say) shows here
		known, _ := strList(c.Do(ctx, "SMEMBERS", k.Queues()))
		for _, q := range uniqueStrings(append(known, queues...)) {
			if protocol.IsMassQueueName(q) {
				continue // stranded: read below, not waited for
			}
			if n, _ := c.Do(ctx, "LLEN", k.Queue(q)); n != int64(0) {
				left = append(left, fmt.Sprintf("queue %s: %v jobs", q, n))
			}
		}
		left = append(left, massLeft(ctx, c)...)
		if n, _ := c.Do(ctx, "ZCARD", k.DelayedSchedule()); n != int64(0) {
			left = append(left, fmt.Sprintf("delayed queue: %v timestamps", n))
		}
		// jobs parked by the cap or waiting for the rate
		for _, suffix := range []string{protocol.LimitParkedSuffix, protocol.LimitWaitingSuffix} {
			if n, _ := c.Do(ctx, "LLEN", k.LimitBase("queue:jobs")+suffix); n != int64(0) {
				left = append(left, fmt.Sprintf("limit queue:jobs%s: %v jobs", suffix, n))
			}
		}
		ids, _ := strList(c.Do(ctx, "SMEMBERS", k.Workers()))
		for _, id := range ids {
			if v, _ := c.Do(ctx, "GET", k.Worker(id)); v != nil {
				left = append(left, "worker "+id+" holds a job")
			}
		}
		return left
	}
	// stable for 3 s: a retry or a deferred job may be due a second later;
	// given up only when what is left has not changed for 2 minutes (a
	// slow machine drains slowly)
	stableSince := time.Time{}
	ok := pollProgress(2*time.Minute, func() bool {
		st.leftover = check()
		if len(st.leftover) > 0 {
			stableSince = time.Time{}
			return false
		}
		if stableSince.IsZero() {
			stableSince = time.Now()
		}
		return time.Since(stableSince) > 3*time.Second
	}, func() string { return fmt.Sprint(st.leftover) })
	st.took = time.Since(began)
	if !ok {
		t.Errorf("drain: nothing moved for 2 minutes (%s in all): %v", st.took.Round(time.Second), st.leftover)
	}
	st.stranded = readStranded(t, c)
	ids, err := strList(c.Do(ctx, "SMEMBERS", k.Workers()))
	if err != nil {
		t.Fatal(err)
	}
	// the drain pool's children are the only workers alive now
	live := map[int]bool{}
	for _, c := range children(p.pid()) {
		live[c.pid] = true
	}
	for _, id := range ids {
		if w, err := protocol.ParseWorkerID(id); err != nil || !live[w.PID] {
			st.deadIDs = append(st.deadIDs, id)
		}
	}
	if err := p.quit(60 * time.Second); err != nil {
		t.Error(err)
	}
	if n, err := c.Do(ctx, "SCARD", k.Workers()); err == nil {
		st.workersEnd = n.(int64)
	}
	for _, pattern := range []string{k.UniqueStatePattern(), k.UniquePrefix() + "*:deferred", k.Prefix() + "queuedata:*:lock"} {
		keys, err := strList(c.Do(ctx, "KEYS", pattern))
		if err != nil {
			t.Fatal(err)
		}
		st.afterStop = append(st.afterStop, keys...)
	}
	return st
}

func strList(v any, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var out []string
	for _, x := range v.([]any) {
		out = append(out, string(x.([]byte)))
	}
	return out, nil
}

func uniqueStrings(xs []string) []string {
	slices.Sort(xs)
	return slices.Compact(xs)
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
