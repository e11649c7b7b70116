package poolrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/pool"
)

const (
	redisEnv     = "RESQUE_GO_TEST_REDIS"
	fakeChildEnv = "POOL_FAKE_CHILD"
	fakeDirEnv   = "POOL_FAKE_DIR"
)

// testMain runs the fake child when the test binary is started as one, and
// the tests (with a shared redis-server) otherwise.
func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	if os.Getenv(fakeChildEnv) != "" {
		return fakeChild(os.Args[1:])
	}
	return redistest.Main(m, redisEnv)
}

// fakeChild stands in for `resque-go work --node-config-fd 3`: it records
// its arguments, its node config and the signals it gets in
// $POOL_FAKE_DIR/<pid>, and behaves by its queue list: "crash" exits 1 at
// once, "refused" writes log lines and an unterminated error line to stderr
// and exits 1, as work does when Redis refuses it, "stubborn" ignores QUIT
// and TERM, any other exits 0 on QUIT or TERM. Like work, it exits when its
// supervisor is gone.
func fakeChild(args []string) int {
	var cfg node.Config
	var readErr error
	if slices.Equal(args, []string{"work", "--node-config-fd", "3"}) {
		f := os.NewFile(3, "node-config")
		cfg, readErr = node.Decode(f)
		f.Close()
	}
	queues, supervisor := cfg.Queues, cfg.SupervisorPID
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT)
	// The file appears once the signals are caught: tests wait for it.
	log, err := os.OpenFile(filepath.Join(os.Getenv(fakeDirEnv), strconv.Itoa(os.Getpid())), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 3
	}
	defer log.Close()
	var b strings.Builder
	_ = cfg.Encode(&b)
	fmt.Fprintf(log, "args %s\nconfig %s", strings.Join(args, " "), b.String())
	if readErr != nil {
		fmt.Fprintf(log, "config error %v\n", readErr)
	}
	fmt.Fprintf(log, "env %s\n", strings.Join(settingEnv(), " "))
	switch queues {
	case "crash":
		return 1
	case "recycle":
		// as work after a recycle: the reason line, exit node.ExitRecycled
		fmt.Fprint(os.Stderr, "resque-go: recycled: max_rss reached; exiting so that a fresh process takes over")
		return node.ExitRecycled
	case "refused":
		fmt.Fprintln(os.Stderr, "\x1b[90m2026-01-02T03:04:05Z\x1b[0m \x1b[33mWRN\x1b[0m no handler registered")
		fmt.Fprint(os.Stderr, "resque-go: start: redis://:sekret@127.0.0.1:1: NOAUTH Authentication required.")
		return 1
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case s := <-sigs:
			fmt.Fprintf(log, "signal %s\n", s)
			if (s == syscall.SIGQUIT || s == syscall.SIGTERM) && queues != "stubborn" {
				return 0
			}
		case <-tick.C:
			if os.Getppid() != supervisor {
				return 0
			}
		}
	}
}

// settingEnv lists the variables of the child's environment that work
// would read as settings (a few of them; the CLI's test checks them all).
func settingEnv() []string {
	var out []string
	for _, name := range []string{"REDIS_URL", "QUEUE", "COUNT", "RESQUE_HTTP_TOKEN"} {
		if v, ok := os.LookupEnv(name); ok {
			out = append(out, name+"="+v)
		}
	}
	return out
}

// childConfig reads the node config a fake child recorded.
func (h *harness) childConfig(pid int) node.Config {
	h.t.Helper()
	for _, line := range strings.Split(h.childLog(pid), "\n") {
		if text, ok := strings.CutPrefix(line, "config "); ok {
			cfg, err := node.Decode(strings.NewReader(text))
			if err != nil {
				h.t.Fatalf("child %d: %v", pid, err)
			}
			return cfg
		}
	}
	h.t.Fatalf("child %d recorded no config:\n%s", pid, h.childLog(pid))
	return node.Config{}
}

// harness is one supervisor over fake children, with its events.
type harness struct {
	t      *testing.T
	dir    string
	client *rdb.Client
	sup    *Supervisor

	mu     sync.Mutex
	events []pool.Event
	notify chan struct{}
}

func newHarness(t *testing.T, cfgText string, tune func(*Params)) *harness {
	t.Helper()
	ns := redistest.Namespace(t)
	client, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	h := &harness{t: t, dir: t.TempDir(), client: client, notify: make(chan struct{}, 1)}
	cfg := h.config(cfgText)
	log := zerolog.New(zerolog.NewTestWriter(t))
	p := Params{
		Client: client, Command: []string{os.Args[0]},
		// The race detector sleeps a second at exit unless told not to.
		Env:        append(os.Environ(), fakeChildEnv+"=1", fakeDirEnv+"="+h.dir, "GORACE=atexit_sleep_ms=0"),
		BackoffMin: 50 * time.Millisecond, BackoffMax: 200 * time.Millisecond, BackoffReset: 10 * time.Second,
		StatusInterval: 100 * time.Millisecond, Logger: &log, OnEvent: h.record,
	}
	if tune != nil {
		tune(&p)
	}
	h.sup, err = New(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.sup.Shutdown)
	return h
}

func (h *harness) config(text string) *pool.Config {
	h.t.Helper()
	cfg, err := pool.Parse("test.yml", []byte("hostname: pool-test\n"+text), pool.LoadOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return cfg
}

func (h *harness) record(e pool.Event) {
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
	select {
	case h.notify <- struct{}{}:
	default:
	}
}

// waitFor waits until cond holds over the events so far (bounded).
func (h *harness) waitFor(what string, cond func(evs []pool.Event) bool) []pool.Event {
	h.t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		evs := slices.Clone(h.events)
		h.mu.Unlock()
		if cond(evs) {
			return evs
		}
		select {
		case <-h.notify:
		case <-deadline.C:
			h.t.Fatalf("timed out waiting for %s; events: %+v", what, evs)
		}
	}
}

func count(evs []pool.Event, kind pool.EventKind, queues string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind && (queues == "" || e.Queues == queues) {
			n++
		}
	}
	return n
}

func pidsOf(evs []pool.Event, kind pool.EventKind, queues string) []int {
	var out []int
	for _, e := range evs {
		if e.Kind == kind && e.Queues == queues {
			out = append(out, e.PID)
		}
	}
	return out
}

func (h *harness) childLog(pid int) string {
	b, _ := os.ReadFile(filepath.Join(h.dir, strconv.Itoa(pid)))
	return string(b)
}

// ready waits until the children have set up their signal handling.
func (h *harness) ready(pids ...int) {
	h.t.Helper()
	for _, pid := range pids {
		redistest.Eventually(h.t, 0, func() bool { return strings.Contains(h.childLog(pid), "\nenv ") }, "child "+strconv.Itoa(pid)+" ready")
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// Children start with the config's command line; one killed with -9 is
// replaced; QUIT stops them all, and the status record goes with the pool.
func TestSupervisorRunsRestartsAndStops(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "redis: redis://127.0.0.1:1\nworkers:\n  a: 2\n  b: 1\n", nil)
	h.sup.Start(context.Background())
	evs := h.waitFor("3 children", func(evs []pool.Event) bool { return count(evs, pool.EventStarted, "") == 3 })
	a := pidsOf(evs, pool.EventStarted, "a")
	if len(a) != 2 {
		t.Fatalf("a children: %v", a)
	}
	h.ready(pidsOf(evs, pool.EventStarted, "a")...)
	h.ready(pidsOf(evs, pool.EventStarted, "b")...)
	got := h.childConfig(a[0])
	if log := h.childLog(a[0]); !strings.HasPrefix(log, "args work --node-config-fd 3\n") || !strings.Contains(log, "\nenv \n") ||
		got.Queues != "a" || got.Concurrency != 1 || got.SupervisorPID != os.Getpid() || got.Redis.URL != "redis://127.0.0.1:1" {
		t.Errorf("child started with:\n%s", log)
	}

	key := h.client.Keys().PoolManager("pool-test", os.Getpid())
	var rec protocol.PoolRecord
	redistest.Eventually(t, 0, func() bool {
		v, err := h.client.Do(context.Background(), "GET", key)
		if err != nil || v == nil {
			return false
		}
		rec, err = protocol.ParsePoolRecord(v.([]byte))
		running := 0
		for _, c := range rec.Children {
			if c.State == pool.ChildRunning && c.PID > 0 && c.RSSBytes > 0 {
				running++
			}
		}
		return err == nil && running == 3
	}, "status record with 3 running children")
	if rec.Format != pool.FormatResqueGo || rec.Config != "test.yml" || rec.State != pool.StateRunning || rec.RSSBytes == 0 {
		t.Errorf("record = %+v", rec)
	}

	if err := syscall.Kill(a[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	evs = h.waitFor("a replaced", func(evs []pool.Event) bool { return count(evs, pool.EventStarted, "a") == 3 })
	next := pidsOf(evs, pool.EventStarted, "a")[2]
	if next == a[0] || next == a[1] {
		t.Errorf("replacement pid %d", next)
	}
	h.ready(next)
	h.waitFor("a pruning pass after the death", func(evs []pool.Event) bool {
		i := slices.IndexFunc(evs, func(e pool.Event) bool { return e.Kind == pool.EventExited && e.PID == a[0] })
		return i >= 0 && slices.ContainsFunc(evs[i:], func(e pool.Event) bool { return e.Kind == pool.EventPruned })
	})
	st := h.sup.Status()
	restarts := 0
	for _, c := range st.Children {
		restarts += c.Restarts
		if c.Queues == "a" && c.Restarts == 1 && c.LastExit != "signal: killed" {
			t.Errorf("last exit = %q", c.LastExit)
		}
	}
	if restarts != 1 || len(st.Children) != 3 {
		t.Errorf("status = %+v", st)
	}

	h.sup.Stop()
	evs = h.waitFor("stopped", func(evs []pool.Event) bool { return count(evs, pool.EventStopped, "") == 1 })
	if n := count(evs, pool.EventExited, ""); n != 4 {
		t.Errorf("%d exits, want 4", n)
	}
	for _, e := range evs {
		if e.Kind == pool.EventExited && e.PID != a[0] {
			if e.Err != nil {
				t.Errorf("child %d: %v", e.PID, e.Err)
			}
			if !strings.Contains(h.childLog(e.PID), "signal quit") {
				t.Errorf("child %d did not get QUIT:\n%s", e.PID, h.childLog(e.PID))
			}
		}
	}
	if v, _ := h.client.Do(context.Background(), "EXISTS", key); v.(int64) != 0 {
		t.Error("status record left after the stop")
	}
}

// A child that recycles itself (exit node.ExitRecycled) is started again
// at once, whatever the backoff, never shown as crash-looping, and counted
// as a recycle, not a restart.
func TestSupervisorRecyclesWithoutBackoff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "workers:\n  recycle: 1\n", func(p *Params) { p.BackoffMin, p.BackoffMax = time.Hour, time.Hour })
	h.sup.Start(context.Background())
	evs := h.waitFor("5 starts", func(evs []pool.Event) bool { return count(evs, pool.EventStarted, "recycle") >= 5 })
	for _, e := range evs {
		if e.Kind == pool.EventExited && e.Recycled != node.LimitMaxRSS {
			t.Errorf("exit event %+v: want Recycled %q", e, node.LimitMaxRSS)
		}
	}
	redistest.Eventually(t, 0, func() bool {
		c := h.sup.Status().Children[0]
		return c.Recycles >= 4 && c.Restarts == 0 && c.State != pool.ChildCrashLoop && c.LastExit == "recycled (max_rss)"
	}, "recycles in the status")
	h.sup.Shutdown()
}

// A child that keeps dying is restarted with a doubling, capped delay and
// shown as crash-looping.
func TestSupervisorBackoffAndCrashLoop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "workers:\n  crash: 1\n", nil)
	start := time.Now()
	h.sup.Start(context.Background())
	h.waitFor("5 starts", func(evs []pool.Event) bool { return count(evs, pool.EventStarted, "crash") >= 5 })
	// Delays 50, 100, 200, 200 ms: at least 550 ms for the first five starts.
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("5 starts within %v: no backoff", d)
	}
	redistest.Eventually(t, 0, func() bool {
		st := h.sup.Status()
		return len(st.Children) == 1 && st.Children[0].State == pool.ChildCrashLoop && st.Children[0].LastExit == "exit status 1"
	}, "crashloop state")
	// the status snapshot trails the events by a loop turn
	redistest.Eventually(t, 0, func() bool { return h.sup.Status().Children[0].Restarts >= 4 }, "4 restarts in the status")
	h.sup.Shutdown()
}

// A reload keeps unchanged children, QUITs removed and changed ones, and
// starts the rest.
func TestSupervisorReloadConverges(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "workers:\n  a: 2\n  b: 1\n  gone: 1\n", nil)
	h.sup.Start(context.Background())
	evs := h.waitFor("4 children", func(evs []pool.Event) bool { return count(evs, pool.EventStarted, "") == 4 })
	a, b, gone := pidsOf(evs, pool.EventStarted, "a"), pidsOf(evs, pool.EventStarted, "b"), pidsOf(evs, pool.EventStarted, "gone")
	h.ready(append(append(a, b...), gone...)...)

	next := h.config("workers:\n  a: 1\n  b: {processes: 1, concurrency: 2}\n  c: 2\n")
	if err := h.sup.Reload(next); err != nil {
		t.Fatal(err)
	}
	evs = h.waitFor("converged", func(evs []pool.Event) bool {
		return count(evs, pool.EventStarted, "c") == 2 && count(evs, pool.EventStarted, "b") == 2 && count(evs, pool.EventExited, "") == 3
	})
	retired := pidsOf(evs, pool.EventRetiring, "a")
	if len(retired) != 1 || retired[0] != a[1] {
		t.Errorf("retired a = %v; want the second, %d", retired, a[1])
	}
	for _, pid := range []int{a[1], b[0], gone[0]} {
		if !strings.Contains(h.childLog(pid), "signal quit") {
			t.Errorf("child %d was not sent QUIT", pid)
		}
	}
	if !alive(a[0]) || strings.Contains(h.childLog(a[0]), "signal") {
		t.Errorf("unchanged child %d was touched", a[0])
	}
	nb := pidsOf(evs, pool.EventStarted, "b")[1]
	h.ready(nb)
	if c := h.childConfig(nb); c.Concurrency != 2 {
		t.Errorf("new b's concurrency = %d", c.Concurrency)
	}
	st := h.sup.Status()
	var got []string
	for _, c := range st.Children {
		got = append(got, c.Queues+":"+c.State)
	}
	if !slices.Equal(got, []string{"a:running", "b:running", "c:running", "c:running"}) {
		t.Errorf("children after reload = %v", got)
	}
	if h.sup.Config() != next {
		t.Error("Config() is not the new config")
	}
	bad := h.config("namespace: other\nworkers:\n  a: 1\n")
	if err := h.sup.Reload(bad); err == nil || !strings.Contains(err.Error(), "namespace") {
		t.Errorf("reload changing the namespace: %v", err)
	}
}

// TERM goes to every child; a child still running after kill_timeout is
// killed.
func TestSupervisorShutdownKillsAfterTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "kill_timeout: 1s\nworkers:\n  stubborn: 1\n  a: 1\n", nil)
	h.sup.Start(context.Background())
	evs := h.waitFor("2 children", func(evs []pool.Event) bool { return count(evs, pool.EventStarted, "") == 2 })
	stubborn := pidsOf(evs, pool.EventStarted, "stubborn")[0]
	h.ready(stubborn, pidsOf(evs, pool.EventStarted, "a")[0])
	began := time.Now()
	h.sup.Shutdown()
	if d := time.Since(began); d < time.Second {
		t.Errorf("shutdown took %v, less than the kill timeout", d)
	}
	evs = h.waitFor("stopped", func(evs []pool.Event) bool { return count(evs, pool.EventStopped, "") == 1 })
	for _, e := range evs {
		if e.Kind != pool.EventExited {
			continue
		}
		if !strings.Contains(h.childLog(e.PID), "signal terminated") {
			t.Errorf("child %d did not get TERM", e.PID)
		}
		if e.PID == stubborn && (e.Err == nil || e.Err.Error() != "signal: killed") {
			t.Errorf("stubborn child: %v", e.Err)
		}
		if e.PID != stubborn && e.Err != nil {
			t.Errorf("child %d: %v", e.PID, e.Err)
		}
	}
	if err := h.sup.Reload(h.config("workers: {a: 1}\n")); !errors.Is(err, ErrNotRunning) {
		t.Errorf("reload after stop: %v", err)
	}
}

// USR1, USR2 and CONT reach every child; the end of the Start context is a
// hard stop.
func TestSupervisorForwardsSignalsAndStopsWithContext(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "workers:\n  a: 2\n", nil)
	ctx, cancel := context.WithCancel(context.Background())
	h.sup.Start(ctx)
	evs := h.waitFor("2 children", func(evs []pool.Event) bool { return count(evs, pool.EventStarted, "") == 2 })
	pids := pidsOf(evs, pool.EventStarted, "a")
	h.ready(pids...)
	for _, sig := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT} {
		h.sup.Signal(sig)
	}
	for _, pid := range pids {
		redistest.Eventually(t, 0, func() bool {
			l := h.childLog(pid)
			return strings.Contains(l, "signal user defined signal 1") && strings.Contains(l, "signal user defined signal 2") && strings.Contains(l, "signal continued")
		}, "signals in the child")
	}
	cancel()
	<-h.sup.Done()
	for _, pid := range pids {
		if !strings.Contains(h.childLog(pid), "signal terminated") {
			t.Errorf("child %d did not get TERM", pid)
		}
	}
}

// The job a killed child held is recovered by the manager's pruning pass.
func TestSupervisorPrunesKilledChild(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "workers:\n  q: 1\n", func(p *Params) { p.BackoffMin = 5 * time.Second })
	h.sup.Start(context.Background())
	evs := h.waitFor("child", func(evs []pool.Event) bool { return count(evs, pool.EventStarted, "") == 1 })
	pid := pidsOf(evs, pool.EventStarted, "q")[0]
	k := h.client.Keys()
	id := protocol.WorkerID{Host: "pool-test", PID: pid, Queues: "q"}.String()
	job := `{"class":"Job","args":[1]}`
	ctx := context.Background()
	for _, cmd := range [][]any{
		{"SADD", k.Workers(), id},
		{"SET", k.Worker(id), `{"queue":"q","run_at":"2024-01-01T00:00:00Z","payload":` + job + `}`},
		{"HSET", k.Heartbeats(), id, time.Now().UTC().Format("2006-01-02T15:04:05+00:00")},
		{"SET", k.Process("pool-test", pid), "{}"},
	} {
		if _, err := h.client.Do(ctx, cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool {
		v, err := h.client.Do(ctx, "LRANGE", k.Queue("q"), 0, -1)
		return err == nil && len(v.([]any)) == 1 && string(v.([]any)[0].([]byte)) == job
	}, "job back in its queue")
	if v, _ := h.client.Do(ctx, "SISMEMBER", k.Workers(), id); v.(int64) != 0 {
		t.Error("dead child still registered")
	}
	redistest.Eventually(t, 0, func() bool {
		v, err := h.client.Do(ctx, "EXISTS", k.Process("pool-test", pid))
		return err == nil && v.(int64) == 0
	}, "runtime record deleted")
	if st := h.sup.Status(); st.Children[0].State != pool.ChildBackoff || st.Children[0].PID != 0 {
		t.Errorf("status = %+v", st.Children[0])
	}
}

// Stop and Shutdown are safe before Start, concurrently and repeatedly; a
// stopped supervisor does not start again.
func TestSupervisorStopIdempotent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "workers:\n  a: 2\n", nil)
	h.sup.Stop()
	h.sup.Shutdown()
	h.sup.Start(context.Background())
	h.sup.Start(context.Background())
	evs := h.waitFor("2 children", func(evs []pool.Event) bool { return count(evs, pool.EventStarted, "") == 2 })
	h.ready(pidsOf(evs, pool.EventStarted, "a")...)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				h.sup.Stop()
			} else {
				h.sup.Shutdown()
			}
		}()
	}
	wg.Wait()
	select {
	case <-h.sup.Done():
	default:
		t.Fatal("Stop returned before the supervisor was done")
	}
	h.sup.Start(context.Background())
	h.sup.Signal(syscall.SIGUSR1)
	if n := count(h.waitFor("stopped", func(evs []pool.Event) bool { return count(evs, pool.EventStopped, "") == 1 }), pool.EventStarted, ""); n != 2 {
		t.Errorf("%d children started, want 2", n)
	}
}
