package statsio_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/statsio"
	"github.com/resque-go/resque-go/stats"
)

// published counts a publisher's writes and hands each one to the test.
type published struct {
	mu  sync.Mutex
	n   int
	err error
}

func (p *published) record(_ stats.Record, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.err = err
}

func (p *published) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func (p *published) lastErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (e *env) publisher(t *testing.T, cfg statsio.PublisherConfig) (*statsio.Publisher, *published) {
	t.Helper()
	pub := &published{}
	cfg.Client, cfg.OnPublish = e.client, pub.record
	if cfg.Logger == nil {
		l := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
		cfg.Logger = &l
	}
	p, err := statsio.NewPublisher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p, pub
}

func TestPublisherWritesRecord(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := []string{"pubhost:" + strconv.Itoa(os.Getpid()) + "-1:q", "pubhost:" + strconv.Itoa(os.Getpid()) + "-2:q"}
	p, pub := e.publisher(t, statsio.PublisherConfig{Hostname: "pubhost", Interval: 10 * time.Second,
		WorkerIDs: ids, Slots: func() (int, int) { return 1, 2 }, Paused: func() bool { return true }})
	before := time.Now().Truncate(time.Second)
	p.Start(context.Background())
	redistest.Eventually(t, 0, func() bool { return pub.count() >= 1 }, "first publish")
	if err := pub.lastErr(); err != nil {
		t.Fatal(err)
	}

	key := e.key("resque-go:process:pubhost:" + strconv.Itoa(os.Getpid()))
	raw, ok := e.get(key)
	if !ok {
		t.Fatalf("%s not written", key)
	}
	t.Logf("record: %s", raw)
	r, err := protocol.ParseProcessRecord([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if r.PID != os.Getpid() || r.Host != "pubhost" || r.HeartbeatIntervalS != 10 ||
		r.SlotsBusy != 1 || r.SlotsTotal != 2 || !slices.Equal(r.WorkerIDs, ids) || !r.Paused {
		t.Errorf("record identity: %s", raw)
	}
	if r.RSSBytes == 0 || r.Goroutines < 2 {
		t.Errorf("process metrics not plausible: rss %d, goroutines %d", r.RSSBytes, r.Goroutines)
	}
	if r.CPUPercent < 0 || r.HostCPUPercent < 0 || r.HostCPUPercent > 100 || r.MemUsedPercent <= 0 ||
		r.MemUsedPercent > 100 || r.Load1 < 0 {
		t.Errorf("host metrics not plausible: %s", raw)
	}
	after := time.Now()
	if r.UpdatedAt.Before(before) || r.UpdatedAt.After(after) || r.StartedAt.After(r.UpdatedAt) {
		t.Errorf("started_at %v / updated_at %v not within [%v, %v]", r.StartedAt, r.UpdatedAt, before, after)
	}
	// TTL is three intervals, less what passed since the write.
	if ttl := e.pttl(key); ttl <= 20_000 || ttl > 30_000 {
		t.Errorf("PTTL %d ms, want about 30000", ttl)
	}

	p.Stop()
	if _, ok := e.get(key); ok {
		t.Error("record still there after Stop")
	}
}

func TestPublisherRefreshes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const iv = 300 * time.Millisecond
	p, pub := e.publisher(t, statsio.PublisherConfig{Hostname: "refresh", Interval: iv})
	p.Start(context.Background())
	redistest.Eventually(t, 0, func() bool { return pub.count() >= 3 }, "three publishes")
	key := e.key("resque-go:process:refresh:" + strconv.Itoa(os.Getpid()))
	if ttl := e.pttl(key); ttl <= 0 || ttl > 900 {
		t.Errorf("PTTL %d ms, want in (0, 900]", ttl)
	}
	raw, _ := e.get(key)
	if r, err := protocol.ParseProcessRecord([]byte(raw)); err != nil || r.SlotsTotal != 0 || len(r.WorkerIDs) != 0 {
		t.Errorf("record without slots: %s (%v)", raw, err)
	}
	p.Stop()
	if _, ok := e.get(key); ok {
		t.Error("record still there after Stop")
	}
}

// A receive on Refresh writes the record at once, with the state as it is
// then (a pause shows without waiting an interval of an hour).
func TestPublisherRefreshesOnRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	refresh := make(chan struct{}, 1)
	var mu sync.Mutex
	paused := false
	p, pub := e.publisher(t, statsio.PublisherConfig{Hostname: "kicked", Interval: time.Hour, Refresh: refresh,
		Paused: func() bool { mu.Lock(); defer mu.Unlock(); return paused }})
	p.Start(context.Background())
	redistest.Eventually(t, 0, func() bool { return pub.count() >= 1 }, "the first publish")
	mu.Lock()
	paused = true
	mu.Unlock()
	refresh <- struct{}{}
	redistest.Eventually(t, 0, func() bool { return pub.count() >= 2 }, "the publish on request")
	raw, _ := e.get(e.key("resque-go:process:kicked:" + strconv.Itoa(os.Getpid())))
	if r, err := protocol.ParseProcessRecord([]byte(raw)); err != nil || !r.Paused {
		t.Errorf("record after a pause: %s (%v)", raw, err)
	}
}

// TestPublisherRecordExpiresWhenProcessDies kills a publishing process with
// SIGKILL: nothing deletes its record, which must expire on its own after
// three intervals.
func TestPublisherRecordExpiresWhenProcessDies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const iv = 300 * time.Millisecond
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=dying", helperNSEnv+"="+e.ns, helperIvEnv+"="+iv.String())
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	key := e.key("resque-go:process:dying:" + strconv.Itoa(cmd.Process.Pid))
	redistest.Eventually(t, 0, func() bool { _, ok := e.get(key); return ok }, "the helper's record")
	if ttl := e.pttl(key); ttl <= 0 || ttl > 900 {
		t.Errorf("PTTL %d ms, want in (0, 900]", ttl)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// The PTTL checked above bounds how long the record outlives its process;
	// here it must actually go (no wall-clock assertion).
	redistest.Eventually(t, 0, func() bool { _, ok := e.get(key); return !ok }, "the dead process's record to expire")
}

func TestPublisherStopsWithContext(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, pub := e.publisher(t, statsio.PublisherConfig{Hostname: "ctxhost", Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	p.Start(ctx)
	redistest.Eventually(t, 0, func() bool { return pub.count() >= 1 }, "first publish")
	key := e.key("resque-go:process:ctxhost:" + strconv.Itoa(os.Getpid()))
	if _, ok := e.get(key); !ok {
		t.Fatal("record not written")
	}
	cancel()
	redistest.Eventually(t, 0, func() bool { _, ok := e.get(key); return !ok }, "record deleted after ctx is done")
}

func TestPublisherStartStopIdempotent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, pub := e.publisher(t, statsio.PublisherConfig{Hostname: "startstop", Interval: time.Hour})
	p.Stop() // before any Start: a no-op
	for range 20 {
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(2)
			go func() { defer wg.Done(); p.Start(context.Background()) }()
			go func() { defer wg.Done(); p.Stop() }()
		}
		wg.Wait()
	}
	p.Start(context.Background())
	p.Start(context.Background()) // already running: no second loop
	n := pub.count()
	redistest.Eventually(t, 0, func() bool { return pub.count() > n }, "a publish")
	p.Stop()
	p.Stop()
	if _, ok := e.get(e.key("resque-go:process:startstop:" + strconv.Itoa(os.Getpid()))); ok {
		t.Error("record still there after the last Stop")
	}
}

func TestNewPublisherNeedsClient(t *testing.T) {
	t.Parallel()
	if _, err := statsio.NewPublisher(statsio.PublisherConfig{}); err == nil {
		t.Error("want an error without a Client")
	}
}

// TestCollectJoinsPublisher runs a real publisher next to registered worker
// ids and checks that Collect joins them by host and pid.
func TestCollectJoinsPublisher(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := "joinhost:" + strconv.Itoa(os.Getpid()) + ":q"
	if _, err := e.client.Register(e.ctx(), id, time.Now(), 5*time.Second, true); err != nil {
		t.Fatal(err)
	}
	p, pub := e.publisher(t, statsio.PublisherConfig{Hostname: "joinhost", Interval: time.Hour, WorkerIDs: []string{id}})
	p.Start(context.Background())
	redistest.Eventually(t, 0, func() bool { return pub.count() >= 1 }, "first publish")

	s, err := statsio.Collect(e.ctx(), e.client, "joinhost")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Workers) != 1 || s.Workers[0].ID != id || s.Workers[0].State != "idle" || s.Workers[0].HeartbeatIntervalS != 5 {
		t.Fatalf("workers: %+v", s.Workers)
	}
	if w := s.Workers[0]; w.RSSBytes == nil || *w.RSSBytes == 0 || w.CPUPercent == nil {
		t.Errorf("worker not joined with its runtime record: %+v", w)
	}
	if len(s.Hosts) != 1 || len(s.Hosts[0].Processes) != 1 || s.Hosts[0].Processes[0].PID != os.Getpid() {
		t.Errorf("hosts: %+v", s.Hosts)
	}
}
