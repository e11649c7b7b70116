package node_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/redistest/rdbtest"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

const redisEnv = "REDIS_URL"

// TestMain starts the package's redis-server; its URL is in REDIS_URL, where the
// examples read it as a program would.
func TestMain(m *testing.M) { os.Exit(redistest.Main(m, redisEnv)) }

// env is one test's namespace on the shared server.
type env struct {
	t      *testing.T
	ns     string
	client *rdb.Client
	log    *syncBuffer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	r := rdbtest.New(t, rdb.Options{ReadTimeout: 5 * time.Second})
	return &env{t: t, ns: r.NS, client: r.Client, log: &syncBuffer{}}
}

// config is a valid Config for this test's namespace.
func (e *env) config(queues string) node.Config {
	return node.Config{Redis: node.Redis{URL: os.Getenv(redisEnv), Namespace: e.ns}, Queues: queues, Hostname: "nodehost"}
}

// node builds a node that logs (JSON) into e.log, with no process title.
func (e *env) node(cfg node.Config) *node.Node {
	e.t.Helper()
	reg := worker.NewRegistry()
	reg.Register("Job", func(context.Context, *worker.Job) error { return nil })
	n, err := node.New(cfg, reg, node.WithLogger(zerolog.New(e.log)), node.WithTitle(nil))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(n.Shutdown)
	return n
}

func (e *env) do(cmd string, args ...any) any {
	e.t.Helper()
	v, err := e.client.Do(context.Background(), cmd, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *env) workers() []string {
	var out []string
	for _, v := range e.do("SMEMBERS", e.client.Keys().Workers()).([]any) {
		out = append(out, string(v.([]byte)))
	}
	return out
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitDone(t *testing.T, n *node.Node) {
	t.Helper()
	select {
	case <-n.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("node not done")
	}
}

// Start brings up the slots, the runtime record and the heartbeat interval
// of the config; Stop takes all of it down again, and Done closes.
func TestStartRegistersAndStopUnregisters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config("a,b")
	cfg.Concurrency = 2
	cfg.HeartbeatInterval = 2500 * time.Millisecond
	n := e.node(cfg)
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ids := e.workers()
	if len(ids) != 2 || !strings.HasPrefix(ids[0], "nodehost:") || !strings.HasSuffix(ids[0], ":a,b") {
		t.Fatalf("workers = %q", ids)
	}
	if iv := e.do("HGET", e.client.Keys().WorkerIntervals(), ids[0]); iv == nil || string(iv.([]byte)) != "2.5" {
		t.Errorf("heartbeat interval %v, want 2.5", iv)
	}
	rec := e.client.Keys().Process("nodehost", os.Getpid())
	redistest.Eventually(t, 0, func() bool { return e.do("EXISTS", rec).(int64) == 1 }, "runtime record")
	n.Stop()
	waitDone(t, n)
	if ids := e.workers(); len(ids) != 0 {
		t.Errorf("still registered: %q", ids)
	}
	if e.do("EXISTS", rec).(int64) != 0 {
		t.Error("runtime record left after Stop")
	}
	if err := n.Start(context.Background()); err == nil {
		t.Error("a stopped node started again")
	}
}

// A literal queue nobody ever enqueued to gets one warning.
func TestStartWarnsAboutUnknownQueues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("SADD", e.client.Keys().Queues(), "mail")
	n := e.node(e.config("mial,mail,lo*"))
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return strings.Contains(e.log.String(), `"queue":"mial"`) }, "the warning")
	n.Stop()
	if c := strings.Count(e.log.String(), "queue is not in the queues set"); c != 1 {
		t.Errorf("%d warnings, want 1:\n%s", c, e.log.String())
	}
}

// A Redis that is down is waited for; a stop before it answers makes Start
// return nil with the node done.
func TestStopWhileWaitingForRedis(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config("a")
	cfg.Redis.URL = "redis://" + closedAddr(t)
	n := e.node(cfg)
	started := make(chan error, 1)
	go func() { started <- n.Start(context.Background()) }()
	redistest.Eventually(t, 0, func() bool { return strings.Contains(e.log.String(), "redis unavailable; retrying") }, "a retry")
	n.Shutdown()
	select {
	case err := <-started:
		if err != nil {
			t.Errorf("Start = %v, want nil after a stop", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Start did not return")
	}
	waitDone(t, n)
}

// The end of Start's context is a hard stop.
func TestContextEndShutsDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.node(e.config("a"))
	ctx, cancel := context.WithCancel(context.Background())
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	waitDone(t, n)
	if ids := e.workers(); len(ids) != 0 {
		t.Errorf("still registered: %q", ids)
	}
}

// A node whose supervisor is not its parent (any more) shuts down.
func TestSupervisorGoneShutsDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config("a")
	cfg.SupervisorPID = os.Getppid() + 100000 // not our parent
	n := e.node(cfg)
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitDone(t, n)
	if !strings.Contains(e.log.String(), "supervisor is gone; shutting down") {
		t.Errorf("log:\n%s", e.log.String())
	}
}

// Redis refusing the node is Start's error, not a retry; the node is done.
func TestStartRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config("a")
	cfg.Redis.URL = os.Getenv(redisEnv) + "/99" // no such database
	n := e.node(cfg)
	err := n.Start(context.Background())
	var ce *rdb.ConnError
	if err == nil || !strings.HasPrefix(err.Error(), "start: ") || !errors.As(err, &ce) || errors.Is(err, node.ErrConfig) {
		t.Errorf("Start = %v", err)
	}
	waitDone(t, n)
}

// A metrics address that cannot be served is a config error of Start.
func TestMetricsAddrInUse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := e.config("a")
	cfg.MetricsAddr = l.Addr().String()
	n := e.node(cfg)
	err = n.Start(context.Background())
	if !errors.Is(err, node.ErrConfig) || !strings.HasPrefix(err.Error(), "node: Config.MetricsAddr \""+l.Addr().String()+"\": ") {
		t.Errorf("Start = %v", err)
	}
	waitDone(t, n)
	if ids := e.workers(); len(ids) != 0 {
		t.Errorf("registered: %q", ids)
	}
}

// Stop and Shutdown are safe before Start, concurrently and repeatedly.
func TestStopIdempotent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	idle := e.node(e.config("a"))
	idle.Stop()
	idle.Shutdown()
	waitDone(t, idle)

	n := e.node(e.config("a"))
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	n.Pause()
	n.Resume()
	n.CancelJobs()
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				n.Stop()
			} else {
				n.Shutdown()
			}
		}()
	}
	wg.Wait()
	waitDone(t, n)
	if ids := e.workers(); len(ids) != 0 {
		t.Errorf("still registered: %q", ids)
	}
}

// A job runs through an Exec handler of the config, and the delayed mover
// of the node promotes a due item.
func TestExecHandlerAndMover(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := t.TempDir() + "/ran"
	cfg := e.config("q")
	cfg.Exec = []string{"Other=cat > " + out}
	n := e.node(cfg)
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	k := e.client.Keys()
	payload := `{"class":"Other","args":[7]}`
	e.do("RPUSH", k.Queue("q"), payload)
	redistest.Eventually(t, 0, func() bool {
		b, err := os.ReadFile(out)
		return err == nil && string(b) == payload
	}, "the exec job")
	if err := delayedio.EnqueueAt(context.Background(), e.client, "q2", []byte(`{"class":"Job","args":[]}`), time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return e.do("EXISTS", k.Queue("q2")).(int64) == 1 }, "the delayed item promoted")
	n.Stop()
}

func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
