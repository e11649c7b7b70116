// Package metrics serves Prometheus metrics of a worker process on
// /metrics, and /healthz, which fails while Redis is unreachable.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/runtime"
)

// Config configures Metrics. Client is required; the funcs may be nil.
type Config struct {
	Client *rdb.Client
	// Queues returns the queues whose lengths are exported.
	Queues func(ctx context.Context) ([]string, error)
	// Slots returns busy and total job slots.
	Slots  func() (busy, total int)
	Logger *zerolog.Logger
}

// Metrics holds the collectors of one process.
type Metrics struct {
	cfg      Config
	reg      *prometheus.Registry
	jobs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	wait     *prometheus.HistogramVec
	httpServer
}

// New builds the collectors.
func New(cfg Config) *Metrics {
	m := &Metrics{cfg: cfg, reg: prometheus.NewRegistry()}
	m.httpServer.log = cfg.Logger
	m.jobs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "resque_jobs_total", Help: "Jobs finished by this process, by queue, class and outcome (ok, fail, retry, reschedule, discard, requeued).",
	}, []string{"queue", "class", "outcome"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "resque_job_duration_seconds", Help: "Time jobs ran, by queue and class.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	}, []string{"queue", "class"})
	m.wait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "resque_job_queue_wait_seconds", Help: "Time jobs waited in their queue (payloads with queue_time only).",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 12),
	}, []string{"queue"})
	m.reg.MustRegister(m.jobs, m.duration, m.wait, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), &liveCollector{m: m})
	return m
}

// Observe records a finished job; use it as runtime.Config.OnFinish.
func (m *Metrics) Observe(f runtime.Finished) {
	class := f.Class
	if class == "" {
		class = "unknown"
	}
	m.jobs.WithLabelValues(f.Queue, class, f.Outcome).Inc()
	if f.Outcome != "requeued" {
		m.duration.WithLabelValues(f.Queue, class).Observe(f.Duration.Seconds())
	}
	if f.QueueWait > 0 {
		m.wait.WithLabelValues(f.Queue).Observe(f.QueueWait.Seconds())
	}
}

// Handler serves /metrics and /healthz.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", healthz(m.cfg.Client))
	return mux
}

// healthz answers 200 "ok" while Redis answers PING within 2 s, else 503.
func healthz(c *rdb.Client) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := c.Ping(ctx); err != nil {
			http.Error(w, "redis unreachable: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	}
}

// Serve listens on addr in the background; Close stops it. It returns the
// address it listens on (useful with port 0).
func (m *Metrics) Serve(addr string) (string, error) { return m.httpServer.serve(addr, m.Handler()) }

// Close stops the server started by Serve.
func (m *Metrics) Close() error { return m.httpServer.close() }

// httpServer is the HTTP side both Metrics and PoolServer share.
type httpServer struct {
	server *http.Server
	log    *zerolog.Logger
}

func (h *httpServer) serve(addr string, handler http.Handler) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	h.server = &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	srv := h.server
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) && h.log != nil {
			h.log.Error().Err(err).Msg("metrics server failed")
		}
	}()
	return l.Addr().String(), nil
}

func (h *httpServer) close() error {
	if h.server == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return h.server.Shutdown(ctx)
}

// liveCollector reads queue lengths and slot use at scrape time.
type liveCollector struct{ m *Metrics }

var (
	queueLenDesc = prometheus.NewDesc("resque_queue_length", "Jobs pending in each queue this process works.", []string{"queue"}, nil)
	inFlightDesc = prometheus.NewDesc("resque_jobs_in_flight", "Jobs running in this process.", nil, nil)
	slotsDesc    = prometheus.NewDesc("resque_worker_slots", "Job slots of this process.", nil, nil)
	redisUpDesc  = prometheus.NewDesc("resque_redis_up", "1 when the last queue-length read from Redis succeeded.", nil, nil)
)

func (c *liveCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueLenDesc
	ch <- inFlightDesc
	ch <- slotsDesc
	ch <- redisUpDesc
}

func (c *liveCollector) Collect(ch chan<- prometheus.Metric) {
	cfg := c.m.cfg
	if cfg.Slots != nil {
		busy, total := cfg.Slots()
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(busy))
		ch <- prometheus.MustNewConstMetric(slotsDesc, prometheus.GaugeValue, float64(total))
	}
	if cfg.Queues == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	up := 1.0
	queues, err := cfg.Queues(ctx)
	if err != nil {
		up = 0
	}
	for _, q := range queues {
		n, err := cfg.Client.Len(ctx, cfg.Client.Keys().Queue(q))
		if err != nil {
			up = 0
			break
		}
		ch <- prometheus.MustNewConstMetric(queueLenDesc, prometheus.GaugeValue, float64(n), q)
	}
	ch <- prometheus.MustNewConstMetric(redisUpDesc, prometheus.GaugeValue, up)
}
