package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/metrics"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		for _, l := range m.Label {
			if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// Jobs run by a worker show up in /metrics by queue, class and outcome,
// with queue lengths read at scrape time; /readyz follows Redis, /healthz
// does not.
func TestMetricsEndpoint(t *testing.T) {
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := rdb.New(rdb.Options{URL: srv.URL(), Namespace: redistest.Namespace(t), ReadTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	reg := worker.NewRegistry()
	reg.Register("Ok", func(ctx context.Context, j *worker.Job) error { return nil })
	reg.Register("Bad", func(ctx context.Context, j *worker.Job) error { return errors.New("no") })
	var w *runtime.Worker
	m := metrics.New(metrics.Config{Client: c,
		Queues: func(ctx context.Context) ([]string, error) { return w.Queues(ctx) },
		Slots:  func() (int, int) { return w.Slots() }})
	var finished atomic.Int32
	w, err = runtime.New(runtime.Config{Client: c, Registry: reg, Queues: "q,idle", Hostname: "h",
		Retry: worker.RetryPolicy{MaxAttempts: 1},
		OnFinish: func(f runtime.Finished) {
			m.Observe(f)
			finished.Add(1)
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// a class name with every character the exposition must escape (no
	// handler: the job fails as ResqueGo::NoHandler)
	const weird = "We\"ird\\\nName"
	for _, p := range []string{`{"class":"Ok","args":[],"queue_time":1700000000.5}`, `{"class":"Ok","args":[]}`, `{"class":"Bad","args":[]}`,
		`{"class":"We\"ird\\\nName","args":[]}`} {
		if err := c.Enqueue(ctx, "q", []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Enqueue(ctx, "idle", []byte(`{"class":"Ok"}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return finished.Load() >= 5 }, "5 jobs finished")
	w.Pause()
	if err := c.Enqueue(ctx, "idle", []byte(`{"class":"Ok"}`)); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, m.Handler())
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"resque_jobs_total", map[string]string{"queue": "q", "class": "Ok", "outcome": "ok"}, 2},
		{"resque_jobs_total", map[string]string{"queue": "q", "class": "Bad", "outcome": "fail"}, 1},
		{"resque_job_duration_seconds", map[string]string{"queue": "q", "class": "Ok"}, 2},
		{"resque_job_queue_wait_seconds", map[string]string{"queue": "q"}, 1},
		{"resque_queue_length", map[string]string{"queue": "idle"}, 1},
		{"resque_queue_length", map[string]string{"queue": "q"}, 0},
		{"resque_jobs_total", map[string]string{"queue": "q", "class": weird, "outcome": "fail"}, 1},
		{"resque_job_duration_seconds", map[string]string{"queue": "q", "class": weird}, 1},
		{"resque_worker_slots", nil, 1},
		{"resque_worker_slots_busy", nil, 0},
		{"resque_worker_slots_idle", nil, 1},
		{"resque_redis_up", nil, 1},
	} {
		if got, ok := value(fams, tc.name, tc.labels); !ok || got != tc.want {
			t.Errorf("%s%v = %v (present %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	// the histograms have Prometheus's buckets (le), the last +Inf
	if f := fams["resque_job_duration_seconds"]; f == nil || len(f.Metric) == 0 || len(f.Metric[0].Histogram.Bucket) < 10 ||
		f.Metric[0].Histogram.Bucket[0].GetUpperBound() != 0.001 {
		t.Errorf("resque_job_duration_seconds buckets: %v", f)
	}
	// the process's own metrics
	for _, name := range []string{"process_resident_memory_bytes", "go_goroutines"} {
		if got, ok := value(fams, name, nil); !ok || got <= 0 {
			t.Errorf("%s = %v (present %v)", name, got, ok)
		}
	}
	get := func(path string) int {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	if code := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz with Redis up: %d", code)
	}
	if code := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz with Redis up: %d", code)
	}
	w.Shutdown()
	srv.Stop()
	if code := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with Redis down: %d, want 503", code)
	}
	if code := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz with Redis down: %d, want 200 (liveness does not ask Redis)", code)
	}
	if got, _ := value(scrape(t, m.Handler()), "resque_redis_up", nil); got != 0 {
		t.Errorf("resque_redis_up with Redis down = %v", got)
	}
}

// The pool manager's and the scheduler's /metrics parse as Prometheus text
// and carry what their funcs return at scrape time.
func TestPoolAndSchedulerMetrics(t *testing.T) {
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := rdb.New(rdb.Options{URL: srv.URL(), Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := metrics.NewPool(c, func() []metrics.PoolChild {
		return []metrics.PoolChild{{State: "running", Queues: "a,b", Restarts: 2, Recycles: 4, HasSlots: true, SlotsBusy: 1, SlotsTotal: 4},
			{State: "running", Queues: "a,b", HasSlots: true, SlotsBusy: 2, SlotsTotal: 4},
			{State: "running", Queues: "c", Recycles: 1}, // no runtime record yet
			{State: "crash\"loop", Queues: "d", Restarts: 5}}
	}, metrics.ServerOptions{})
	s := metrics.NewScheduler(c, func() metrics.SchedulerCounts {
		return metrics.SchedulerCounts{Promoted: 7, PlansFired: 3, SchedulesFired: 4, DueBuckets: 2, Master: true}
	}, metrics.ServerOptions{})
	pf, sf := scrape(t, p.Handler()), scrape(t, s.Handler())
	for _, tc := range []struct {
		fams   map[string]*dto.MetricFamily
		name   string
		labels map[string]string
		want   float64
	}{
		{pf, "resque_pool_children", map[string]string{"state": "running"}, 3},
		{pf, "resque_pool_children", map[string]string{"state": "crash\"loop"}, 1},
		{pf, "resque_pool_child_restarts_total", nil, 7},
		{pf, "resque_pool_child_recycles_total", nil, 5},
		{pf, "resque_pool_slots_busy", map[string]string{"queues": "a,b"}, 3},
		{pf, "resque_pool_slots_idle", map[string]string{"queues": "a,b"}, 5},
		{pf, "resque_pool_slots_busy", map[string]string{"queues": "c"}, 0},
		{pf, "resque_pool_slots_idle", map[string]string{"queues": "d"}, 0},
		{sf, "resque_delayed_promoted_total", nil, 7},
		{sf, "resque_plan_fires_total", nil, 3},
		{sf, "resque_schedule_fires_total", nil, 4},
		{sf, "resque_delayed_due_buckets", nil, 2},
		{sf, "resque_scheduler_master", nil, 1},
	} {
		if got, ok := value(tc.fams, tc.name, tc.labels); !ok || got != tc.want {
			t.Errorf("%s%v = %v (present %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	for _, f := range []*dto.MetricFamily{sf["resque_delayed_promoted_total"], pf["resque_pool_child_restarts_total"], pf["resque_pool_child_recycles_total"]} {
		if f == nil || f.GetType() != dto.MetricType_COUNTER {
			t.Errorf("not a counter: %v", f)
		}
	}
}

// Class names come from payloads: 20,000 distinct ones leave the job
// metrics with at most DefaultMaxLabelValues class series (and one
// "other") per metric, every job still counted.
func TestClassLabelsAreBounded(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Config{})
	const jobs = 20000
	for i := range jobs {
		m.Observe(runtime.Finished{Queue: "q", Class: fmt.Sprintf("Class%05d", i), Outcome: "ok", Duration: time.Millisecond})
	}
	fams := scrape(t, m.Handler())
	for _, name := range []string{"resque_jobs_total", "resque_job_duration_seconds"} {
		f := fams[name]
		if f == nil {
			t.Fatalf("%s missing", name)
		}
		classes := map[string]bool{}
		var total float64
		for _, s := range f.Metric {
			for _, l := range s.Label {
				if l.GetName() == "class" {
					classes[l.GetValue()] = true
				}
			}
			if s.Counter != nil {
				total += s.Counter.GetValue()
			} else {
				total += float64(s.Histogram.GetSampleCount())
			}
		}
		if len(f.Metric) > metrics.DefaultMaxLabelValues+1 || !classes[metrics.OtherLabel] || !classes["Class00000"] {
			t.Errorf("%s: %d series (classes other: %v, first: %v), want at most %d and the first class and %q",
				name, len(f.Metric), classes[metrics.OtherLabel], classes["Class00000"], metrics.DefaultMaxLabelValues+1, metrics.OtherLabel)
		}
		if total != jobs {
			t.Errorf("%s counts %v jobs, want %d", name, total, jobs)
		}
	}
	if got, _ := value(fams, "resque_jobs_total", map[string]string{"class": metrics.OtherLabel}); got != jobs-metrics.DefaultMaxLabelValues {
		t.Errorf("resque_jobs_total{class=other} = %v, want %d", got, jobs-metrics.DefaultMaxLabelValues)
	}
}

// A worker's queue list can grow with its globs: the queue lengths after
// the first MaxLabelValues are shown as one, "other".
func TestQueueLengthLabelsAreBounded(t *testing.T) {
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := rdb.New(rdb.Options{URL: srv.URL(), Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for q, n := range map[string]int{"a": 1, "c": 2, "d": 3} {
		for range n {
			if err := c.Enqueue(ctx, q, []byte(`{"class":"X","args":[]}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	m := metrics.New(metrics.Config{Client: c, MaxLabelValues: 2,
		Queues: func(context.Context) ([]string, error) { return []string{"a", "b", "c", "d"}, nil }})
	fams := scrape(t, m.Handler())
	if f := fams["resque_queue_length"]; f == nil || len(f.Metric) != 3 {
		t.Fatalf("resque_queue_length: %v, want a, b and other", f)
	}
	for q, want := range map[string]float64{"a": 1, "b": 0, metrics.OtherLabel: 5} {
		if got, ok := value(fams, "resque_queue_length", map[string]string{"queue": q}); !ok || got != want {
			t.Errorf("resque_queue_length{queue=%q} = %v (present %v), want %v", q, got, ok, want)
		}
	}
}

// A bare port listens on 127.0.0.1 only; a host is used as given.
func TestListenAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"9292": "127.0.0.1:9292", ":9292": "127.0.0.1:9292", " :9292 ": "127.0.0.1:9292",
		"0.0.0.0:9292": "0.0.0.0:9292", "[::]:9292": "[::]:9292", "10.1.2.3:9292": "10.1.2.3:9292", "localhost:0": "localhost:0",
		"": "", "host": "", "99999": "", ":http": "", "a:b:c": "",
	} {
		got, err := metrics.ListenAddr(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, srv := range []interface {
		Serve(string) (string, error)
		Close() error
	}{
		metrics.New(metrics.Config{}),
		metrics.NewPool(nil, func() []metrics.PoolChild { return nil }, metrics.ServerOptions{}),
		metrics.NewScheduler(nil, func() metrics.SchedulerCounts { return metrics.SchedulerCounts{} }, metrics.ServerOptions{}),
	} {
		bound, err := srv.Serve(":0")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(bound, "127.0.0.1:") {
			t.Errorf("Serve(\":0\") listens on %s, want 127.0.0.1 only", bound)
		}
		_ = srv.Close()
	}
}

// With a token, /metrics, /healthz and /readyz of every server answer 401 unless
// the request carries it as a bearer token.
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := rdb.New(rdb.Options{URL: srv.URL(), Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const token = "t0ken-s3cret"
	opt := metrics.ServerOptions{Token: token}
	for name, h := range map[string]http.Handler{
		"worker":    metrics.New(metrics.Config{Client: c, Token: token}).Handler(),
		"pool":      metrics.NewPool(c, func() []metrics.PoolChild { return nil }, opt).Handler(),
		"scheduler": metrics.NewScheduler(c, func() metrics.SchedulerCounts { return metrics.SchedulerCounts{} }, opt).Handler(),
	} {
		for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
			for auth, want := range map[string]int{
				"": http.StatusUnauthorized, "Bearer wrong": http.StatusUnauthorized, token: http.StatusUnauthorized,
				"Bearer " + token + "x": http.StatusUnauthorized, "Bearer " + token: http.StatusOK,
			} {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != want {
					t.Errorf("%s %s with Authorization %q: %d, want %d", name, path, auth, rec.Code, want)
				}
				if want == http.StatusUnauthorized && strings.Contains(rec.Body.String(), "resque_") {
					t.Errorf("%s %s: a refused request got metrics", name, path)
				}
			}
		}
	}
	// without a token, no header is needed
	rec := httptest.NewRecorder()
	metrics.New(metrics.Config{Client: c}).Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("/healthz without a token set: %d", rec.Code)
	}
}

// /readyz says "not ready" to whoever asks; why (the Redis error, with
// the server's address) goes to the log. /healthz is liveness: 200 with
// Redis down.
func TestReadyzKeepsTheReasonInTheLog(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()
	srv.Stop()
	c, err := rdb.New(rdb.Options{URL: "redis://:pa55word@" + addr, Namespace: redistest.Namespace(t), DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var logged strings.Builder
	log := zerolog.New(&logged)
	for name, h := range map[string]http.Handler{
		"worker":    metrics.New(metrics.Config{Client: c, Logger: &log}).Handler(),
		"pool":      metrics.NewPool(c, func() []metrics.PoolChild { return nil }, metrics.ServerOptions{Logger: &log}).Handler(),
		"scheduler": metrics.NewScheduler(c, func() metrics.SchedulerCounts { return metrics.SchedulerCounts{} }, metrics.ServerOptions{Logger: &log}).Handler(),
	} {
		logged.Reset()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		if rec.Code != http.StatusServiceUnavailable || strings.TrimSpace(rec.Body.String()) != "not ready" {
			t.Errorf("%s /readyz with Redis down: %d %q, want 503 \"not ready\"", name, rec.Code, rec.Body.String())
		}
		_, port, _ := strings.Cut(addr, ":")
		if !strings.Contains(logged.String(), port) || strings.Contains(logged.String(), "pa55word") {
			t.Errorf("%s: the log should name the unreachable server (without its password): %s", name, logged.String())
		}
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		if rec.Code != http.StatusOK || rec.Body.String() != "ok\n" {
			t.Errorf("%s /healthz with Redis down: %d %q, want 200 \"ok\"", name, rec.Code, rec.Body.String())
		}
	}
}

// /readyz fails while the process's own check does (draining, paused ...),
// the reason in the log only.
func TestReadyzFollowsReady(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := rdb.New(rdb.Options{URL: srv.URL(), Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var logged strings.Builder
	log := zerolog.New(&logged)
	var reason atomic.Value
	reason.Store("")
	ready := func() error {
		if r := reason.Load().(string); r != "" {
			return errors.New(r)
		}
		return nil
	}
	for name, h := range map[string]http.Handler{
		"worker": metrics.New(metrics.Config{Client: c, Logger: &log, Ready: ready}).Handler(),
		"pool": metrics.NewPool(c, func() []metrics.PoolChild { return nil },
			metrics.ServerOptions{Logger: &log, Ready: func(context.Context) error { return ready() }}).Handler(),
	} {
		for _, r := range []string{"", "draining after QUIT", ""} {
			reason.Store(r)
			logged.Reset()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			want, body := http.StatusOK, "ready\n"
			if r != "" {
				want, body = http.StatusServiceUnavailable, "not ready\n"
			}
			if rec.Code != want || rec.Body.String() != body {
				t.Errorf("%s /readyz with reason %q: %d %q, want %d %q", name, r, rec.Code, rec.Body.String(), want, body)
			}
			if r != "" && !strings.Contains(logged.String(), r) {
				t.Errorf("%s: the log does not say why: %s", name, logged.String())
			}
			if rec.Header().Get(metrics.RecyclingHeader) != "" {
				t.Errorf("%s: %s set while not recycling", name, metrics.RecyclingHeader)
			}
		}
	}
	// the drain of a recycle is marked, for a pool manager
	rec := httptest.NewRecorder()
	metrics.New(metrics.Config{Client: c, Ready: func() error { return fmt.Errorf("%w: max_jobs", runtime.ErrRecycling) }}).Handler().
		ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get(metrics.RecyclingHeader) != "1" {
		t.Errorf("/readyz while recycling: %d, %s %q", rec.Code, metrics.RecyclingHeader, rec.Header().Get(metrics.RecyclingHeader))
	}
}

// The age of each queue's oldest job comes from its payload's queue_time;
// a queue whose head has none (Ruby's plain payloads) or that is empty has
// no age series. A scrape is plain reads: no write, no SCAN.
func TestQueueOldestJobAge(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := rdb.New(rdb.Options{URL: srv.URL(), Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for _, e := range []struct{ q, payload string }{
		{"php", `{"class":"X","args":[],"queue_time":1700000000.25}`}, // the oldest, at the head
		{"php", `{"class":"X","args":[],"queue_time":1700000090}`},
		{"ruby", `{"class":"X","args":[]}`},
		{"future", `{"class":"X","args":[],"queue_time":1700000500}`},
	} {
		if err := c.Enqueue(ctx, e.q, []byte(e.payload)); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Unix(1700000100, 0)
	m := metrics.New(metrics.Config{Client: c, Now: func() time.Time { return now },
		Queues: func(context.Context) ([]string, error) { return []string{"php", "ruby", "empty", "future"}, nil }})
	if _, err := c.Do(ctx, "CONFIG", "RESETSTAT"); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, m.Handler())
	for q, want := range map[string]float64{"php": 99.75, "future": 0} {
		if got, ok := value(fams, "resque_queue_oldest_job_age_seconds", map[string]string{"queue": q}); !ok || got != want {
			t.Errorf("resque_queue_oldest_job_age_seconds{queue=%q} = %v (present %v), want %v", q, got, ok, want)
		}
	}
	if f := fams["resque_queue_oldest_job_age_seconds"]; f == nil || len(f.Metric) != 2 || f.GetType() != dto.MetricType_GAUGE {
		t.Errorf("resque_queue_oldest_job_age_seconds: %v, want a gauge for php and future only", f)
	}
	if got, _ := value(fams, "resque_queue_length", map[string]string{"queue": "php"}); got != 2 {
		t.Errorf("resque_queue_length{queue=php} = %v, want 2", got)
	}
	info, err := c.Do(ctx, "INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(info.([]byte)), "\n") {
		cmd, _, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		switch cmd {
		case "llen", "lindex", "info", "config|resetstat":
		default:
			t.Errorf("a scrape ran %s; want only LLEN and LINDEX", cmd)
		}
	}
}
