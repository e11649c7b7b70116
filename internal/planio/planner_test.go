package planio_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/redistest/rdbtest"
	"github.com/resque-go/resque-go/plan"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

func TestMain(m *testing.M) { os.Exit(redistest.Main(m, redisEnv)) }

// clock is an injected clock the test moves by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

type env struct {
	t     *testing.T
	c     *rdb.Client
	clock *clock
}

func newEnv(t *testing.T, now time.Time) *env {
	t.Helper()
	return &env{t: t, c: rdbtest.New(t, rdb.Options{MaxIdle: 32}).Client, clock: &clock{now: now}}
}

func (e *env) planner() *planio.Planner {
	e.t.Helper()
	p, err := planio.NewPlanner(planio.PlannerConfig{Client: e.c, Now: e.clock.Now, Hostname: "vm", WorkerID: "vm:1:planner"})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) pass(p *planio.Planner) int {
	e.t.Helper()
	n, err := p.Pass(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) do(cmd string, args ...any) any {
	e.t.Helper()
	v, err := e.c.Do(context.Background(), cmd, args...)
	if err != nil {
		e.t.Fatalf("%s %v: %v", cmd, args, err)
	}
	return v
}

func (e *env) strs(cmd string, args ...any) []string {
	e.t.Helper()
	v, err := redis.Strings(e.do(cmd, args...), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *env) str(key string) string {
	e.t.Helper()
	v, err := redis.String(e.do("GET", key), nil)
	if err != nil && err != redis.ErrNil {
		e.t.Fatal(err)
	}
	return v
}

func (e *env) add(p plan.Plan) string {
	e.t.Helper()
	id, err := planio.AddAt(context.Background(), e.c, p, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// schedule is the plan_schedule zset and each slot's list, as text.
func (e *env) schedule() string {
	e.t.Helper()
	k := e.c.Keys()
	var parts []string
	for _, ts := range e.strs("ZRANGE", k.PlanSchedule(), 0, -1) {
		var n int64
		fmt.Sscan(ts, &n)
		parts = append(parts, ts+"="+strings.Join(e.strs("LRANGE", k.PlanSlot(n), 0, -1), ","))
	}
	return strings.Join(parts, " ")
}

type job struct {
	Class     string          `json:"class"`
	Args      json.RawMessage `json:"args"`
	Queue     string          `json:"queue"`
	ID        string          `json:"id"`
	QueueTime float64         `json:"queue_time"`
}

func (e *env) jobs(q string) []job {
	e.t.Helper()
	var out []job
	for _, raw := range e.strs("LRANGE", e.c.Keys().Queue(q), 0, -1) {
		var j job
		if err := json.Unmarshal([]byte(raw), &j); err != nil {
			e.t.Fatalf("%s: %v", raw, err)
		}
		out = append(out, j)
	}
	return out
}

var t0 = time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)

func TestAddThenFireEvery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, t0)
	id := e.add(plan.Plan{ID: "p1", Queue: "mail", Class: "Digest", Args: json.RawMessage(`[1, "two"]`), Every: 5 * time.Minute})
	k := e.c.Keys()
	slot := t0.Add(5 * time.Minute).Unix()
	want := fmt.Sprintf(`{"class":"Digest","args":[1,"two"],"queue":"mail","id":"p1","nextRun":%d,"recurrenceInterval":"P0Y0M0DT0H5M0S","misfire":"coalesce","start":%d}`, slot, t0.Unix())
	if got := e.str(k.Plan(id)); id != "p1" || got != want {
		t.Fatalf("plan %q:\n got %s\nwant %s", id, got, want)
	}
	if got := e.schedule(); got != fmt.Sprintf("%d=p1", slot) {
		t.Fatalf("schedule: %s", got)
	}
	p := e.planner()
	e.clock.set(t0.Add(5*time.Minute - time.Second))
	if n := e.pass(p); n != 0 {
		t.Fatalf("fired %d before the slot", n)
	}
	e.clock.set(t0.Add(5*time.Minute + 300*time.Millisecond))
	if n := e.pass(p); n != 1 {
		t.Fatalf("fired %d at the slot", n)
	}
	jobs := e.jobs("mail")
	if len(jobs) != 1 || jobs[0].Class != "Digest" || string(jobs[0].Args) != `[1,"two"]` || jobs[0].Queue != "mail" ||
		len(jobs[0].ID) != 32 || jobs[0].QueueTime != float64(slot)+0.3 {
		t.Fatalf("job: %+v", jobs)
	}
	raw := e.strs("LRANGE", k.Queue("mail"), 0, -1)[0]
	if !strings.HasPrefix(raw, `{"class":"Digest","args":[1,"two"],"queue":"mail","id":"`) || strings.Contains(raw, "nextRun") {
		t.Errorf("payload: %s", raw)
	}
	if q := e.strs("SMEMBERS", k.Queues()); len(q) != 1 || q[0] != "mail" {
		t.Errorf("queues set")
	}
	next := slot + 300
	if got := e.str(k.Plan(id)); got != strings.Replace(want, fmt.Sprint(slot), fmt.Sprint(next), 1) {
		t.Errorf("plan after fire: %s", got)
	}
	if got := e.schedule(); got != fmt.Sprintf("%d=p1", next) {
		t.Errorf("schedule after fire: %s", got)
	}
	pl, err := planio.Get(context.Background(), e.c, id)
	if err != nil || pl.NextRun.Unix() != next || pl.Period != "P0Y0M0DT0H5M0S" || pl.Problem != "" || !pl.Start.Equal(t0) {
		t.Errorf("get: %+v %v", pl, err)
	}
	up, err := plan.Upcoming(pl, 3)
	if err != nil || len(up) != 3 || up[2].Unix() != next+600 {
		t.Errorf("upcoming: %v %v", up, err)
	}
}

func TestAddStartAndErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, t0)
	ctx := context.Background()
	get := func(id string) plan.Plan {
		p, err := planio.Get(ctx, e.c, id)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// a past start never fires retroactively: first slot after now, in phase
	id := e.add(plan.Plan{Queue: "q", Class: "C", Every: time.Hour, Start: t0.Add(-150 * time.Minute)})
	if p := get(id); !p.NextRun.Equal(t0.Add(30*time.Minute)) || len(id) != 32 {
		t.Errorf("past start: next %s", p.NextRun)
	}
	id = e.add(plan.Plan{Queue: "q", Class: "C", Period: "P1M", Start: t0.Add(48 * time.Hour)})
	if p := get(id); !p.NextRun.Equal(t0.Add(48 * time.Hour)) {
		t.Errorf("future start: next %s", p.NextRun)
	}
	id = e.add(plan.Plan{Queue: "q", Class: "C", Cron: "0 3 * * *", Timezone: "Europe/Prague", Start: t0.Add(72 * time.Hour)})
	if p := get(id); p.NextRun.Format(time.RFC3339) != "2026-01-14T02:00:00Z" || p.Timezone != "Europe/Prague" {
		t.Errorf("cron with a start: next %s", p.NextRun)
	}
	id = e.add(plan.Plan{Queue: "q", Class: "C", Cron: "*/10 * * * *"})
	if p := get(id); !p.NextRun.Equal(t0.Add(10*time.Minute)) || p.Timezone != "UTC" || !strings.Contains(string(p.Raw), `"cron":"*/10 * * * *","timezone":"UTC","misfire":"coalesce"}`) {
		t.Errorf("cron: %s", p.Raw)
	}
	for _, bad := range []plan.Plan{
		{Queue: "q", Class: "C"},
		{Queue: "q", Class: "C", Every: time.Minute, Cron: "* * * * *"},
		{Queue: "q", Class: "C", Every: 1500 * time.Millisecond},
		{Queue: "q", Class: "C", Every: time.Minute, Timezone: "Europe/Prague"},
		{Queue: "q", Class: "C", Period: "P1X"},
		{Queue: "q", Class: "C", Period: "P0D"},
		{Queue: "q", Class: "C", Cron: "0 0 30 2 *"},
		{Queue: "q", Class: "C", Cron: "0 3 * * *", Timezone: "Mars/Olympus"},
		{Queue: "q", Class: "C", Every: time.Minute, Misfire: "sometimes"},
		{Queue: "q", Class: "C", Every: time.Minute, Args: json.RawMessage(`5`)},
		{Queue: "a,b", Class: "C", Every: time.Minute},
		{Class: "C", Every: time.Minute},
		// never firing, or not readable back: more than 100 years ahead,
		// before 1970
		{Queue: "q", Class: "C", Period: "P1000000Y"},
		{Queue: "q", Class: "C", Period: "P101Y"},
		{Queue: "q", Class: "C", Period: "P200Y", Start: time.Unix(0, 0)},
		{Queue: "q", Class: "C", Every: 1_000_000 * time.Hour},
		{Queue: "q", Class: "C", Every: time.Minute, Start: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)},
		{Queue: "q", Class: "C", Cron: "0 3 * * *", Start: time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Queue: "q", Class: "C", Every: time.Minute, Start: time.Unix(-5, 0)},
	} {
		if _, err := planio.AddAt(ctx, e.c, bad, t0); !errors.Is(err, plan.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", bad, err)
		}
	}
	// the bounds themselves
	for _, ok := range []plan.Plan{
		{Queue: "q", Class: "C", Period: "P100Y"},
		{Queue: "q", Class: "C", Every: time.Minute, Start: t0.AddDate(plan.MaxYearsAhead, 0, 0)},
		{Queue: "q", Class: "C", Every: time.Minute, Start: time.Unix(0, 0)},
	} {
		id, err := planio.AddAt(ctx, e.c, ok, t0)
		if err != nil {
			t.Errorf("%+v: %v", ok, err)
			continue
		}
		if p := get(id); p.Problem != "" {
			t.Errorf("%+v: %s", ok, p.Problem)
		}
		if err := planio.Remove(ctx, e.c, id); err != nil {
			t.Fatal(err)
		}
	}
	e.add(plan.Plan{ID: "same", Queue: "q", Class: "C", Every: time.Minute})
	if _, err := planio.AddAt(ctx, e.c, plan.Plan{ID: "same", Queue: "q", Class: "D", Every: time.Hour}, t0); !errors.Is(err, plan.ErrExists) {
		t.Errorf("same id: %v", err)
	}
	if _, err := planio.Get(ctx, e.c, "nope"); !errors.Is(err, plan.ErrNotFound) {
		t.Errorf("get nope: %v", err)
	}
	list, err := planio.List(ctx, e.c)
	if err != nil || len(list) != 5 || list[0].ID != "same" || !list[0].NextRun.Equal(t0.Add(time.Minute)) {
		t.Errorf("list: %d %v", len(list), err)
	}
}

// A plan as the resque-v3 PHP producer wrote it: json_encode of a float
// microtime id, flattened job fields, escaped slashes, nextRun and
// recurrenceInterval; the id in the slot list is PHP's string of the float.
const phpPlan = `{"class":"Reports_Job","args":{"report":"daily","path":"a\/b"},"queue":"reports","sourceId":"src1","isMonitored":true,"includePath":"app\/","environment":{"K":"V"},"id":1506092109.1235,"nextRun":1506092400,"recurrenceInterval":"P0Y0M0DT0H5M0S"}`

func (e *env) writePHP(id, raw string, slot int64) {
	k := e.c.Keys()
	e.do("SET", k.Plan(id), raw)
	e.do("ZADD", k.PlanSchedule(), slot, slot)
	e.do("RPUSH", k.PlanSlot(slot), id)
}

func TestPHPPlanFiredAndRescheduled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Unix(1506092402, 0))
	k := e.c.Keys()
	const id = "1506092109.1235"
	e.writePHP(id, phpPlan, 1506092400)
	if n := e.pass(e.planner()); n != 1 {
		t.Fatalf("fired %d", n)
	}
	raw := e.strs("LRANGE", k.Queue("reports"), 0, -1)
	want := `{"class":"Reports_Job","args":{"report":"daily","path":"a\/b"},"queue":"reports","sourceId":"src1","isMonitored":true,"includePath":"app\/","environment":{"K":"V"},"id":"`
	if len(raw) != 1 || !strings.HasPrefix(raw[0], want) || !strings.HasSuffix(raw[0], `","queue_time":1506092402.0000}`) {
		t.Fatalf("payload: %q", raw)
	}
	if got := e.str(k.Plan(id)); got != strings.Replace(phpPlan, `"nextRun":1506092400`, `"nextRun":1506092700`, 1) {
		t.Errorf("plan written back: %s", got)
	}
	if got := e.schedule(); got != "1506092700="+id {
		t.Errorf("schedule: %s", got)
	}
	p, err := planio.Get(context.Background(), e.c, id)
	if err != nil || p.ID != id || p.Problem != "" || p.Queue != "reports" || p.NextRun.Unix() != 1506092700 {
		t.Errorf("get: %+v %v", p, err)
	}
	if err := planio.Remove(context.Background(), e.c, id); err != nil {
		t.Fatal(err)
	}
	if n := e.do("EXISTS", k.Plan(id), k.PlanSchedule(), k.PlanSlot(1506092700)).(int64); n != 0 {
		t.Errorf("%d keys left after remove", n)
	}
}

func TestPHPStaleNextRun(t *testing.T) {
	t.Parallel()
	// The PHP scheduler wrote the plan back with the slot it had just
	// fired: the list, not nextRun, says where the plan is.
	e := newEnv(t, time.Unix(1506092700, 0))
	k := e.c.Keys()
	const id = "1506092109.1235"
	e.writePHP(id, phpPlan, 1506092700)
	e.do("RPUSH", k.PlanSlot(1506092700), id) // listed twice: fired once
	if n := e.pass(e.planner()); n != 1 || len(e.jobs("reports")) != 1 {
		t.Fatalf("fired %d", n)
	}
	if got := e.schedule(); got != "1506093000="+id || !strings.Contains(e.str(k.Plan(id)), `"nextRun":1506093000`) {
		t.Errorf("schedule %s, plan %s", got, e.str(k.Plan(id)))
	}
	e.writePHP("2.5", strings.Replace(phpPlan, `"id":1506092109.1235`, `"id":2.5`, 1), 1506099999)
	if err := planio.Remove(context.Background(), e.c, "2.5"); err != nil {
		t.Fatal(err)
	}
	if got := e.schedule(); got != "1506093000="+id {
		t.Errorf("after removing a stale plan: %s", got)
	}
	if err := planio.Remove(context.Background(), e.c, "2.5"); !errors.Is(err, plan.ErrNotFound) {
		t.Errorf("remove again: %v", err)
	}
}

func TestUniquePlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t, t0)
	k := e.c.Keys()
	id := e.add(plan.Plan{Queue: "u", Class: "Sync", UniqueID: "acct-7", Every: time.Minute})
	p := e.planner()
	e.do("SET", k.UniqueState("acct-7"), "queued")
	e.clock.set(t0.Add(time.Minute))
	if n := e.pass(p); n != 0 || len(e.jobs("u")) != 0 {
		t.Fatalf("fired %d with the uid taken", n)
	}
	if got := e.schedule(); got != fmt.Sprintf("%d=%s", t0.Add(2*time.Minute).Unix(), id) {
		t.Fatalf("the plan did not move on: %s", got)
	}
	e.do("DEL", k.UniqueState("acct-7"))
	e.clock.set(t0.Add(2 * time.Minute))
	if n := e.pass(p); n != 1 {
		t.Fatalf("fired %d with the uid free", n)
	}
	raw := e.strs("LRANGE", k.Queue("u"), 0, -1)
	if !strings.HasPrefix(raw[0], `{"class":"Sync","args":[],"queue":"u","unique":{"uid":"acct-7"},"id":"`) || e.str(k.UniqueState("acct-7")) != "queued" {
		t.Fatalf("payload %s, state %q", raw, e.str(k.UniqueState("acct-7")))
	}
	e.clock.set(t0.Add(3 * time.Minute))
	if n := e.pass(p); n != 0 || len(e.jobs("u")) != 1 {
		t.Fatalf("fired %d while the first job is queued", n)
	}

	// a deferrable resque-v3 plan meeting its uid running is parked
	e.writePHP("9.5", `{"class":"D","args":[],"queue":"u","unique":{"uid":"d1","deferrableBy":30},"id":9.5,"nextRun":1,"recurrenceInterval":"PT1H"}`, t0.Unix())
	e.do("SET", k.UniqueState("d1"), "running")
	if n := e.pass(p); n != 0 {
		t.Fatalf("fired %d", n)
	}
	parked := e.str(k.UniqueDeferred("d1"))
	if !strings.HasPrefix(parked, `{"class":"D","args":[],"queue":"u","unique":{"uid":"d1","deferrableBy":30},"id":"`) {
		t.Errorf("deferred: %q", parked)
	}
}

func TestMisfirePolicies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		misfire plan.Misfire
		late    time.Duration
		fired   int
	}{
		{plan.Coalesce, 65 * time.Minute, 1},
		{plan.CatchUp, 65 * time.Minute, 6},
		{plan.Skip, 65 * time.Minute, 0},
		{plan.Skip, 10*time.Minute + 30*time.Second, 1},
	} {
		t.Run(fmt.Sprint(tc.misfire, tc.late), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, t0)
			id := e.add(plan.Plan{Queue: "q", Class: "C", Every: 10 * time.Minute, Misfire: tc.misfire})
			e.clock.set(t0.Add(tc.late))
			if n := e.pass(e.planner()); n != tc.fired || len(e.jobs("q")) != tc.fired {
				t.Errorf("fired %d, want %d", n, tc.fired)
			}
			next := t0.Add(tc.late).Truncate(10 * time.Minute).Add(10 * time.Minute)
			if got := e.schedule(); got != fmt.Sprintf("%d=%s", next.Unix(), id) {
				t.Errorf("schedule %s, want next slot %s", got, next)
			}
		})
	}
}

func TestRemoveAndGoneSlot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, t0)
	ctx := context.Background()
	k := e.c.Keys()
	a := e.add(plan.Plan{ID: "a", Queue: "q", Class: "A", Every: time.Minute})
	b := e.add(plan.Plan{ID: "b", Queue: "q", Class: "B", Every: time.Minute})
	if err := planio.Remove(ctx, e.c, a); err != nil {
		t.Fatal(err)
	}
	if got := e.schedule(); got != fmt.Sprintf("%d=b", t0.Unix()+60) {
		t.Errorf("schedule after remove: %s", got)
	}
	if err := planio.Remove(ctx, e.c, a); !errors.Is(err, plan.ErrNotFound) {
		t.Errorf("remove again: %v", err)
	}
	// a plan deleted behind the schedule's back: its slot entry is dropped
	e.do("DEL", k.Plan(b))
	e.clock.set(t0.Add(time.Minute))
	if n := e.pass(e.planner()); n != 0 || e.schedule() != "" {
		t.Errorf("fired %d, schedule %q", n, e.schedule())
	}
	if err := planio.Remove(ctx, e.c, b); !errors.Is(err, plan.ErrNotFound) {
		t.Errorf("remove b: %v", err)
	}
	// an empty slot left in the schedule is dropped
	e.do("ZADD", k.PlanSchedule(), 5, 5)
	if n := e.pass(e.planner()); n != 0 || e.schedule() != "" {
		t.Errorf("empty slot: %q", e.schedule())
	}
}

func TestBrokenPlanIsParked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, t0)
	k := e.c.Keys()
	slot := t0.Unix()
	e.writePHP("bad", `{"class":"X","args":[],"id":"bad","nextRun":1,"recurrenceInterval":"PT1M"}`, slot) // no queue
	e.writePHP("junk", `not json`, slot)
	e.writePHP("good", `{"class":"G","args":[],"queue":"q","id":"good","nextRun":1,"recurrenceInterval":"PT1M"}`, slot)
	if n := e.pass(e.planner()); n != 1 || len(e.jobs("q")) != 1 {
		t.Fatalf("fired %d", n)
	}
	if got := e.schedule(); got != fmt.Sprintf("%d=good", slot+60) {
		t.Errorf("schedule: %s", got)
	}
	failed := e.strs("LRANGE", k.Failed(), 0, -1)
	if len(failed) != 2 || !strings.Contains(failed[0], `plan \"bad\" cannot be fired: the plan has no class or no queue`) ||
		!strings.Contains(failed[1], `"payload":"not json"`) || !strings.Contains(failed[1], `"exception":"ResqueGo::BadPayload"`) {
		t.Errorf("failed: %q", failed)
	}
	if e.str(k.Plan("bad")) == "" || e.str(k.Plan("junk")) != "not json" {
		t.Errorf("parked plans must be kept")
	}
	list, err := planio.List(context.Background(), e.c)
	if err != nil || len(list) != 3 || list[0].Problem == "" || list[2].Problem != "" {
		t.Errorf("list: %+v %v", list, err)
	}
}

func TestPlannerStartStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t, t0)
	e.add(plan.Plan{Queue: "q", Class: "C", Every: time.Minute})
	e.clock.set(t0.Add(time.Minute))
	passes := make(chan int, 100)
	p, err := planio.NewPlanner(planio.PlannerConfig{Client: e.c, Now: e.clock.Now, Interval: 5 * time.Millisecond,
		OnPass: func(n int) {
			select {
			case passes <- n:
			default:
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	p.Start(context.Background())
	p.Start(context.Background()) // a second Start does nothing
	deadline := time.After(5 * time.Second)
	for fired := 0; fired == 0; {
		select {
		case n := <-passes:
			fired += n
		case <-deadline:
			t.Fatal("no fire within 5 s")
		}
	}
	p.Stop()
	p.Stop()
	if _, err := planio.NewPlanner(planio.PlannerConfig{}); err == nil {
		t.Error("NewPlanner without a client")
	}
}
