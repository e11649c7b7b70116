// Package metrics serves Prometheus metrics of a worker process on
// /metrics, and /healthz, which fails while Redis is unreachable.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/runtime"
)

// The exposition carries # HELP and # TYPE lines (VictoriaMetrics/metrics
// writes no help text: docs/operations.md#metrics says what each metric
// is). This library, unlike Prometheus's client, pulls in no protobuf: the
// binary is 3.4 MB smaller and a worker's resident set 2 MB smaller (most
// of it is the binary's mapped pages).
func init() { vm.ExposeMetadata(true) }

// Config configures Metrics. Client is required; the funcs may be nil.
type Config struct {
	Client *rdb.Client
	// Queues returns the queues whose lengths are exported.
	Queues func(ctx context.Context) ([]string, error)
	// Slots returns busy and total job slots.
	Slots  func() (busy, total int)
	Logger *zerolog.Logger
}

// Metrics holds the metrics of one process.
type Metrics struct {
	cfg Config
	set *vm.Set
	httpServer
}

var (
	// resque_job_duration_seconds: 1 ms to about 4.4 min, times 4
	durationBuckets = exponential(0.001, 4, 10)
	// resque_job_queue_wait_seconds: 1 ms to about 1.2 h, times 4
	waitBuckets = exponential(0.001, 4, 12)
)

func exponential(start, factor float64, n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = start
		start *= factor
	}
	return b
}

// New builds the metrics.
func New(cfg Config) *Metrics {
	m := &Metrics{cfg: cfg, set: vm.NewSet()}
	m.httpServer.log = cfg.Logger
	m.set.RegisterMetricsWriter(m.writeLive)
	return m
}

// Observe records a finished job; use it as runtime.Config.OnFinish.
func (m *Metrics) Observe(f runtime.Finished) {
	class := f.Class
	if class == "" {
		class = "unknown"
	}
	q, c := labelValue(f.Queue), labelValue(class)
	m.set.GetOrCreateCounter(`resque_jobs_total{queue="` + q + `",class="` + c + `",outcome="` + labelValue(f.Outcome) + `"}`).Inc()
	if f.Outcome != "requeued" {
		m.set.GetOrCreatePrometheusHistogramExt(`resque_job_duration_seconds{queue="`+q+`",class="`+c+`"}`, durationBuckets).
			Update(f.Duration.Seconds())
	}
	if f.QueueWait > 0 {
		m.set.GetOrCreatePrometheusHistogramExt(`resque_job_queue_wait_seconds{queue="`+q+`"}`, waitBuckets).
			Update(f.QueueWait.Seconds())
	}
}

// labelValue escapes a label value as the text exposition format wants:
// backslash, double quote and line feed (queue and class names come from
// payloads, so they can hold anything).
func labelValue(s string) string {
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// Handler serves /metrics and /healthz.
func (m *Metrics) Handler() http.Handler {
	return handler(m.set, m.cfg.Client)
}

// handler serves set and the process's go_* and process_* metrics on
// /metrics, and healthz on /healthz.
func handler(set *vm.Set, c *rdb.Client) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		set.WritePrometheus(w)
		vm.WriteProcessMetrics(w)
	})
	mux.HandleFunc("/healthz", healthz(c))
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

// writeLive writes the queue lengths and slot use, read at scrape time.
func (m *Metrics) writeLive(w io.Writer) {
	cfg := m.cfg
	if cfg.Slots != nil {
		busy, total := cfg.Slots()
		vm.WriteGaugeUint64(w, "resque_jobs_in_flight", uint64(busy))
		vm.WriteGaugeUint64(w, "resque_worker_slots", uint64(total))
	}
	if cfg.Queues == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	up := uint64(1)
	queues, err := cfg.Queues(ctx)
	if err != nil {
		up = 0
	}
	first := true
	for _, q := range queues {
		n, err := cfg.Client.Len(ctx, cfg.Client.Keys().Queue(q))
		if err != nil {
			up = 0
			break
		}
		if first {
			vm.WriteMetadataIfNeeded(w, "resque_queue_length", "gauge")
			first = false
		}
		fmt.Fprintf(w, "resque_queue_length{queue=\"%s\"} %d\n", labelValue(q), n)
	}
	vm.WriteGaugeUint64(w, "resque_redis_up", up)
}
