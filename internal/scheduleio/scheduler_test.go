package scheduleio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/redistest/rdbtest"
	"github.com/resque-go/resque-go/internal/scheduleio"
	"github.com/resque-go/resque-go/schedule"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

func TestMain(m *testing.M) { os.Exit(redistest.Main(m, redisEnv)) }

type env struct {
	t  testing.TB
	c  *rdb.Client
	ns string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	r := rdbtest.New(t, rdb.Options{})
	return &env{t, r.Client, r.NS}
}

func (e *env) do(cmd string, args ...any) any {
	e.t.Helper()
	v, err := e.c.Do(context.Background(), cmd, args...)
	if err != nil {
		e.t.Fatalf("%s %v: %v", cmd, args, err)
	}
	return v
}

func (e *env) jobs(q string) []string {
	e.t.Helper()
	v, err := redis.Strings(e.do("LRANGE", e.c.Keys().Queue(q), 0, -1), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// clock is a settable clock shared by the schedulers of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func entries(t *testing.T, yaml string) []schedule.Entry {
	t.Helper()
	es, err := schedule.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func (e *env) scheduler(cfg scheduleio.Config) *scheduleio.Scheduler {
	e.t.Helper()
	cfg.Client = e.c
	s, err := scheduleio.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func pass(t *testing.T, s *scheduleio.Scheduler) schedule.PassResult {
	t.Helper()
	r, err := s.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// slots counts the slots of [from, to] of an entry.
func slots(e schedule.Entry, from, to time.Time) int {
	n := 0
	for s := e.Next(from.Add(-time.Nanosecond)); !s.IsZero() && !s.After(to); s = e.Next(s) {
		n++
	}
	return n
}

// Two schedulers share one Redis over six simulated hours. Mastership
// changes hands many times (a lock that expires while its holder is stuck,
// a master that finds its lock taken mid-pass), their clocks may disagree,
// and every slot of every entry is enqueued exactly once.
func TestTwoSchedulersFireEachSlotOnce(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{0, 3 * time.Second, -45 * time.Second} {
		t.Run(fmt.Sprint("skew=", skew), func(t *testing.T) {
			t.Parallel()
			twoSchedulers(t, skew)
		})
	}
}

func twoSchedulers(t *testing.T, skew time.Duration) {
	e := newEnv(t)
	es := entries(t, `
minutely: {every: 1m, class: Minutely, queue: q1}
five: {cron: "*/5 * * * * Europe/Prague", class: Five, queue: q2}
hourly: {cron: "0 * * * *", class: Hourly, queue: q3, args: [7]}
seconds: {cron: "*/20 * * * * * UTC", class: Seconds, queue: q4}
`)
	start := time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC) // a DST change in Prague
	clk := &clock{t: start}
	clocks := [2]func() time.Time{clk.Now, func() time.Time { return clk.Now().Add(skew) }}
	var ss [2]*scheduleio.Scheduler
	var logs [2]bytes.Buffer // each scheduler's JSON log: one line per enqueue
	for i := range ss {
		log := zerolog.New(&logs[i]).Level(zerolog.InfoLevel)
		ss[i] = e.scheduler(scheduleio.Config{Entries: es, Hostname: "host", Pid: 100 + i, Now: clocks[i],
			Interval: time.Second, Logger: &log})
	}
	lock := e.c.Keys().SchedulerMasterLock("")
	rng := rand.New(rand.NewPCG(1, uint64(skew)))
	end := start.Add(6 * time.Hour)
	handovers := 0
	for clk.Now().Before(end) {
		clk.Add(time.Duration(1+rng.IntN(12)) * time.Second)
		for _, i := range rng.Perm(2) {
			pass(t, ss[i])
		}
		if ss[0].IsMaster() == ss[1].IsMaster() {
			t.Fatalf("at %v: master %v and %v", clk.Now(), ss[0].IsMaster(), ss[1].IsMaster())
		}
		switch rng.IntN(40) {
		case 0: // the lock expires (its holder was stuck): the other takes it
			e.do("DEL", lock)
			handovers++
		case 1: // the lock is taken over while the master is in a pass
			holder := 0
			if ss[1].IsMaster() {
				holder = 1
			}
			e.do("SET", lock, fmt.Sprintf("host:%d", 100+1-holder))
			handovers++
		}
	}
	// the scheduler whose clock is ahead finishes: every slot up to its
	// time is due
	last := 0
	if skew > 0 {
		last = 1
	}
	e.do("SET", lock, fmt.Sprintf("host:%d", 100+last))
	pass(t, ss[last])
	if handovers < 100 {
		t.Fatalf("only %d handovers", handovers)
	}
	// no slot was enqueued twice, by either scheduler
	enqueued := map[string]int{}
	for i := range logs {
		for line := range strings.Lines(logs[i].String()) {
			var l struct{ Message, Schedule, Slot string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Message == "schedule enqueued" {
				enqueued[l.Schedule+" "+l.Slot]++
				enqueued[l.Schedule]++
			}
		}
	}
	for k, n := range enqueued {
		if n > 1 && strings.Contains(k, " ") {
			t.Errorf("%s enqueued %d times", k, n)
		}
	}
	for i, q := range []string{"q1", "q2", "q3", "q4"} {
		got := len(e.jobs(q))
		if got != enqueued[es[i].Name] {
			t.Errorf("%s: %d jobs, %d logged", es[i].Name, got, enqueued[es[i].Name])
		}
		// Clocks that disagree by more than a period coalesce the slots
		// between (the slower one's last and the faster one's now) into one.
		if period := es[i].Next(start.Add(time.Hour)).Sub(start.Add(time.Hour)); period <= skew.Abs() {
			continue
		}
		// the first pass is on a slot
		if want := slots(es[i], start.Add(min(skew, 0)), clocks[last]()); got != want {
			t.Errorf("%s (%s): %d jobs, want %d (one per slot)", es[i].Name, es[i].When(), got, want)
		}
	}
	if got := e.jobs("q3")[0]; got != `{"class":"Hourly","args":[7]}` {
		t.Errorf("payload %s", got)
	}
	if n, _ := redis.Int(e.do("SCARD", e.c.Keys().Queues()), nil); n != 4 {
		t.Errorf("queues set has %d names", n)
	}
	lastAt, _ := redis.StringMap(e.do("HGETALL", e.c.Keys().LastEnqueuedAt()), nil)
	if len(lastAt) != 4 || lastAt["hourly"] == "" {
		t.Errorf("last_enqueued_at %v", lastAt)
	}
}

// A lock in resque-scheduler's own key and form, held by a Ruby scheduler
// on another host, keeps resque-go from firing until it expires; then
// resque-go takes it in the same form.
func TestRubyLockBlocksUntilItExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.ns + ":" + e.ns + ":resque_scheduler_master_lock"
	if got := e.c.Keys().SchedulerMasterLock(""); got != key {
		t.Fatalf("lock key %q, want %q", got, key)
	}
	e.do("SET", key, "otherhost:4242", "EX", 180)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := e.scheduler(scheduleio.Config{Entries: entries(t, `tick: {every: 10s, class: Tick, queue: q}`),
		Hostname: "gohost", Pid: 7, Now: clk.Now})
	for range 10 {
		clk.Add(10 * time.Second)
		if r := pass(t, s); r.Master || r.Fired != 0 {
			t.Fatalf("fired under a Ruby lock: %+v", r)
		}
	}
	if v, _ := redis.String(e.do("GET", key), nil); v != "otherhost:4242" || len(e.jobs("q")) != 0 {
		t.Fatalf("lock %q, jobs %v", v, e.jobs("q"))
	}
	e.do("PEXPIRE", key, 100)
	redistest.Eventually(t, 0, func() bool { return pass(t, s).Master }, "the expired lock to be taken")
	if v, _ := redis.String(e.do("GET", key), nil); v != "gohost:7" {
		t.Errorf("lock value %q", v)
	}
	if ttl, _ := redis.Int(e.do("TTL", key), nil); ttl < 178 || ttl > 180 {
		t.Errorf("lock TTL %d, want 180", ttl)
	}
	if n := len(e.jobs("q")); n != 1 { // the clock is on a slot
		t.Errorf("taking the lock: %d jobs", n)
	}
	clk.Add(10 * time.Second)
	if r := pass(t, s); r.Fired != 1 || len(e.jobs("q")) != 2 {
		t.Errorf("after taking the lock: %+v %v", r, e.jobs("q"))
	}
	// Stop gives the lock up, as resque-scheduler's shutdown does
	s.Start(context.Background())
	s.Stop()
	if n, _ := redis.Int(e.do("EXISTS", key), nil); n != 0 {
		t.Error("the lock outlived Stop")
	}
}

// A master that lost its lock between its lock check and the push
// enqueues nothing; RESQUE_SCHEDULER_MASTER_LOCK_PREFIX makes a separate
// election.
func TestLockChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)}
	es := entries(t, `tick: {every: 10s, class: Tick, queue: q}`)
	a := e.scheduler(scheduleio.Config{Entries: es, Hostname: "a", Pid: 1, Now: clk.Now})
	pass(t, a)
	clk.Add(10 * time.Second)
	if r := pass(t, a); !r.Master || r.Fired != 1 {
		t.Fatalf("%+v", r)
	}
	fired, _, err := e.c.FireSchedule(context.Background(), rdb.ScheduleFire{LockKey: a.LockKey(), LockValue: "b:2",
		Name: "tick", Slot: clk.Now().Unix() + 10, Queue: "q", Payload: []byte(`{}`), EnqueuedAt: "x"})
	if fired || err != rdb.ErrNotMaster || len(e.jobs("q")) != 1 {
		t.Errorf("a non-holder fired: %v %v", fired, err)
	}
	b := e.scheduler(scheduleio.Config{Entries: es, Hostname: "b", Pid: 2, Now: clk.Now, LockPrefix: "MyApp"})
	if r := pass(t, b); !r.Master {
		t.Error("a scheduler with another lock prefix is not master")
	}
	if b.LockKey() != e.ns+":"+e.ns+":MyApp:resque_scheduler_master_lock" {
		t.Errorf("prefixed lock key %q", b.LockKey())
	}
}

// resque-scheduler records its enqueues in delayed:last_enqueued_at only;
// a resque-go scheduler taking over from a Ruby master does not enqueue a
// slot that Ruby already did, and catches up the one it missed.
func TestTakeOverFromRuby(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	es := entries(t, `
five: {cron: "*/5 * * * * UTC", class: Five, queue: q}
ten: {cron: "*/10 * * * * UTC", class: Ten, queue: q10}
`)
	s := e.scheduler(scheduleio.Config{Entries: es, Hostname: "go", Pid: 1, Now: clk.Now})
	// The Ruby master enqueued 10:05 (five) and 10:10 (ten), then died
	// holding the lock, which expired at 10:13.
	e.do("HSET", e.c.Keys().LastEnqueuedAt(), "five", "2026-01-01 11:05:00 +0100", "ten", "2026-01-01 10:10:01 +0000")
	clk.t = start.Add(13*time.Minute + 2*time.Second)
	if r := pass(t, s); !r.Master || r.Fired != 1 {
		t.Fatalf("takeover: %+v", r)
	}
	if j, j10 := e.jobs("q"), e.jobs("q10"); len(j) != 1 || len(j10) != 0 {
		t.Fatalf("five %v (10:10 missed, caught up), ten %v (10:10 done by Ruby)", j, j10)
	}
	if v, _ := redis.String(e.do("HGET", e.c.Keys().ScheduleSlots(), "five"), nil); v != fmt.Sprint(start.Add(10*time.Minute).Unix()) {
		t.Errorf("slot recorded %s", v)
	}
	clk.Add(7 * time.Minute) // 10:20:02
	if r := pass(t, s); r.Fired != 2 {
		t.Errorf("10:15 and 10:20: %+v", r)
	}
}

// A fresh scheduler does not enqueue the slots from before it loaded an
// entry; first_in delays the first one.
func TestNoSlotsBeforeLoad(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	start := time.Date(2026, 1, 1, 10, 0, 30, 0, time.UTC)
	clk := &clock{t: start}
	s := e.scheduler(scheduleio.Config{Now: clk.Now, Hostname: "h", Pid: 1, Entries: entries(t, `
minutely: {every: 1m, class: M, queue: q}
delayed: {every: ["1m", {first_in: 3m}], class: D, queue: d}
`)})
	if r := pass(t, s); r.Fired != 0 {
		t.Fatalf("fired a slot from before the start: %+v", r)
	}
	clk.Add(30 * time.Second) // 10:01:00
	if r := pass(t, s); r.Fired != 1 || len(e.jobs("d")) != 0 {
		t.Fatalf("10:01: %+v", r)
	}
	clk.Add(150 * time.Second) // 10:03:30, first_in passed at 10:03:30
	pass(t, s)
	if n := len(e.jobs("d")); n != 0 {
		t.Errorf("first_in: %d jobs at 10:03:30", n)
	}
	clk.Add(30 * time.Second) // 10:04:00
	pass(t, s)
	if n, m := len(e.jobs("d")), len(e.jobs("q")); n != 1 || m != 3 {
		t.Errorf("10:04: first_in entry %d jobs, minutely %d (10:02 and 10:03 caught up as one)", n, m)
	}
}

// Dynamic schedules: persistent ones are read on becoming master; one set
// or removed with set_schedule/remove_schedule (HSET/HDEL +
// schedules_changed) is picked up on the next pass.
func TestDynamicSchedules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	// the resque-scheduler 5.0.0 fixture's persistent schedule
	e.do("HSET", k.PersistentSchedules(), "persisted_every_5m", `{"class":"MailJob","every":"5m","queue":"mail","args":["dyn",3.5],"description":"persisted via set_schedule"}`)
	e.do("SADD", k.SchedulesChanged(), "persisted_every_5m", "in_memory_cron")
	clk := &clock{t: time.Date(2026, 1, 1, 10, 0, 30, 0, time.UTC)}
	s := e.scheduler(scheduleio.Config{Now: clk.Now, Hostname: "h", Pid: 1, Dynamic: true, Environment: "production",
		Entries: entries(t, `static: {every: 1h, class: Static, queue: s}`)})
	pass(t, s)
	if n := len(s.Entries()); n != 2 {
		t.Fatalf("entries %v", s.Entries())
	}
	if n, _ := redis.Int(e.do("SCARD", k.SchedulesChanged()), nil); n != 0 {
		t.Error("schedules_changed not cleared when becoming master")
	}
	clk.Add(5 * time.Minute) // 10:05:30
	if r := pass(t, s); r.Fired != 1 || e.jobs("mail")[0] != `{"class":"MailJob","args":["dyn",3.5]}` {
		t.Fatalf("%+v %v", r, e.jobs("mail"))
	}
	// set_schedule: a new one, one replacing the static entry, a bad one,
	// one for another environment
	e.do("HSET", k.PersistentSchedules(),
		"new_one", `{"class":"NewJob","cron":"*/2 * * * *","queue":"new","args":{"k":"v"}}`,
		"static", `{"class":"Static2","every":"1m","queue":"s"}`,
		"broken", `{"class":"X","cron":"not cron","queue":"q"}`,
		"elsewhere", `{"class":"Y","every":"1m","queue":"y","rails_env":"staging"}`)
	e.do("SADD", k.SchedulesChanged(), "new_one", "static", "broken", "elsewhere")
	clk.Add(90 * time.Second) // 10:07:00
	pass(t, s)
	st := s.Status()
	if st.Entries != 3 || st.Errors["broken"] == nil || !st.Master {
		t.Fatalf("status %+v", st)
	}
	clk.Add(60 * time.Second) // 10:08:00
	pass(t, s)
	if j := e.jobs("new"); len(j) != 1 || j[0] != `{"class":"NewJob","args":[{"k":"v"}]}` {
		t.Errorf("new schedule: %v", j)
	}
	if j := e.jobs("s"); len(j) != 2 || j[1] != `{"class":"Static2","args":[]}` { // 10:07 and 10:08
		t.Errorf("replaced static: %v", j)
	}
	// remove_schedule: the persistent one goes, the static one is back
	e.do("HDEL", k.PersistentSchedules(), "static", "new_one")
	e.do("SADD", k.SchedulesChanged(), "static", "new_one")
	clk.Add(2 * time.Minute)
	pass(t, s)
	var got []string
	for _, en := range s.Entries() {
		got = append(got, en.Name+"="+en.Class)
	}
	if fmt.Sprint(got) != "[persisted_every_5m=MailJob static=Static]" {
		t.Errorf("after removal: %v", got)
	}
	if len(e.jobs("y")) != 0 {
		t.Error("a schedule of another environment fired")
	}
}

// Start runs passes on its own and wakes at the slots; of two started
// schedulers one is master, and the other takes over when it stops.
func TestStartStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	passes := make(chan schedule.PassResult, 100)
	es := entries(t, `tick: {every: 1s, class: Tick, queue: q}`)
	s := e.scheduler(scheduleio.Config{Hostname: "h", Pid: 1, Interval: 50 * time.Millisecond, Entries: es,
		OnPass: func(r schedule.PassResult) {
			select {
			case passes <- r:
			default:
			}
		}})
	s.Start(context.Background())
	s.Start(context.Background()) // idempotent
	deadline := time.After(10 * time.Second)
	for len(e.jobs("q")) < 2 {
		select {
		case <-passes:
		case <-deadline:
			t.Fatal("no jobs enqueued")
		}
	}
	other := e.scheduler(scheduleio.Config{Hostname: "h", Pid: 2, Interval: 50 * time.Millisecond, Entries: es})
	other.Start(context.Background())
	defer other.Stop()
	if !s.IsMaster() || s.Status().NextSlot.IsZero() {
		t.Errorf("status %+v", s.Status())
	}
	for range 3 { // the first keeps the lock through its passes
		<-passes
	}
	if other.IsMaster() {
		t.Fatal("two masters")
	}
	s.Stop()
	s.Stop()
	if s.IsMaster() {
		t.Error("still master after Stop")
	}
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for !other.IsMaster() {
		select {
		case <-poll.C:
		case <-deadline:
			t.Fatal("the other scheduler did not take over")
		}
	}
}
