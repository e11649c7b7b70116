// Package metrics serves Prometheus metrics of a worker process on
// /metrics, liveness on /healthz (the HTTP server answers: it never touches
// Redis) and readiness on /readyz (503 while Redis does not answer PING or
// the process does not take jobs: draining, paused, heartbeat stale).
//
// A bare port (":9292", "9292") listens on 127.0.0.1 only; an address
// with a host ("0.0.0.0:9292") listens there. With a token set, every
// endpoint answers 401 to a request without "Authorization: Bearer <token>".
package metrics

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
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
	// Token, when set, is the bearer token /metrics, /healthz and /readyz
	// require.
	Token string
	// Ready, when set, says whether the process takes jobs (nil) or why
	// not; /readyz fails with it (the reason goes to the log).
	Ready func() error
	// Now is the clock the ages of the oldest jobs are measured with;
	// default time.Now.
	Now func() time.Time
	// MaxLabelValues bounds the distinct values of each of the queue and
	// class labels of the job metrics; 0 means DefaultMaxLabelValues.
	MaxLabelValues int
}

// DefaultMaxLabelValues is how many distinct queue names, and how many
// distinct class names, the job metrics of one process show. Both come
// from payloads, so without a bound every new class would add series (and
// memory) for the life of the worker: the values seen after the first
// these many are counted under OtherLabel.
const DefaultMaxLabelValues = 200

// OtherLabel is the label value of the jobs whose queue or class came
// after the first MaxLabelValues.
const OtherLabel = "other"

// Metrics holds the metrics of one process.
type Metrics struct {
	cfg             Config
	set             *vm.Set
	queues, classes *boundedLabel
	httpServer
}

// boundedLabel hands out the values of one label: the first max distinct
// values as they are, any later one as OtherLabel.
type boundedLabel struct {
	name string
	log  *zerolog.Logger
	mu   sync.Mutex
	seen map[string]struct{}
	max  int
	full bool // the first value over max was logged
}

func newBoundedLabel(name string, max int, log *zerolog.Logger) *boundedLabel {
	return &boundedLabel{name: name, log: log, seen: map[string]struct{}{}, max: max}
}

// limit is the most distinct values the label takes.
func (b *boundedLabel) limit() int { return b.max }

// value is v, or OtherLabel once max other values have been seen (the
// first time, logged).
func (b *boundedLabel) value(v string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[v]; ok {
		return v
	}
	if len(b.seen) >= b.max {
		if !b.full && b.log != nil {
			b.log.Warn().Str("label", b.name).Int("max", b.max).Str("value", v).
				Msg("metrics: too many distinct label values; this one and later new ones are counted as \"other\"")
		}
		b.full = true
		return OtherLabel
	}
	b.seen[v] = struct{}{}
	return v
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
	limit := cfg.MaxLabelValues
	if limit <= 0 {
		limit = DefaultMaxLabelValues
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m := &Metrics{cfg: cfg, set: vm.NewSet(),
		queues: newBoundedLabel("queue", limit, cfg.Logger), classes: newBoundedLabel("class", limit, cfg.Logger)}
	m.httpServer = httpServer{log: cfg.Logger, token: cfg.Token}
	if cfg.Ready != nil {
		m.httpServer.ready = func(context.Context) error { return cfg.Ready() }
	}
	m.set.RegisterMetricsWriter(m.writeLive)
	return m
}

// Observe records a finished job; use it as runtime.Config.OnFinish.
func (m *Metrics) Observe(f runtime.Finished) {
	class := f.Class
	if class == "" {
		class = "unknown"
	}
	q, c := labelValue(m.queues.value(f.Queue)), labelValue(m.classes.value(class))
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

// Handler serves /metrics, /healthz and /readyz.
func (m *Metrics) Handler() http.Handler {
	return m.httpServer.handler(m.set, m.cfg.Client)
}

// handler serves set and the process's go_* and process_* metrics on
// /metrics, liveness on /healthz and readiness on /readyz, all behind the
// token when one is set.
func (h *httpServer) handler(set *vm.Set, c *rdb.Client) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		set.WritePrometheus(w)
		vm.WriteProcessMetrics(w)
	})
	mux.HandleFunc("/healthz", healthz)
	mux.HandleFunc("/readyz", readyz(c, h.ready, h.log))
	if h.token == "" {
		return mux
	}
	return requireToken(h.token, mux)
}

// requireToken answers 401 to a request without "Authorization: Bearer
// <token>"; the comparison takes the same time whatever the header holds.
func requireToken(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte("Bearer " + token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := sha256.Sum256([]byte(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="resque-go"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// healthz is liveness: 200 "ok" whenever the process serves HTTP. It
// never touches Redis, so that an orchestrator does not restart every
// worker while Redis is down (readiness says that).
func healthz(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) }

// RecyclingHeader is set (to "1") on a 503 of /readyz while the process
// drains for a recycle (runtime.ErrRecycling): a pool manager does not
// count such a child against its own readiness, as a fresh one follows.
const RecyclingHeader = "Resque-Go-Recycling"

// readyTimeout bounds one readiness check (Redis PING, the pool's children).
const readyTimeout = 2 * time.Second

// readyz answers 200 "ready" while Redis answers PING within 2 s and ready
// (when set) returns nil, else 503 "not ready"; why goes to the log, not
// to whoever asks: at warn when the reason changes (or a minute later),
// at debug for the probes that repeat it in between.
func readyz(c *rdb.Client, ready func(context.Context) error, log *zerolog.Logger) http.HandlerFunc {
	var said reasonLog
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		err := c.Ping(ctx)
		if err != nil {
			err = fmt.Errorf("redis does not answer: %w", err)
		} else if ready != nil {
			err = ready(ctx)
		}
		if err != nil {
			if log != nil {
				ev := log.Debug()
				if said.changed(err.Error()) {
					ev = log.Warn()
				}
				ev.Err(err).Msg("readyz: not ready")
			}
			if errors.Is(err, runtime.ErrRecycling) {
				w.Header().Set(RecyclingHeader, "1")
			}
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		said.changed("")
		_, _ = w.Write([]byte("ready\n"))
	}
}

// reasonLog remembers the last reason /readyz logged, so that a probe
// every few seconds does not repeat it at warn.
type reasonLog struct {
	mu     sync.Mutex
	reason string
	at     time.Time
}

// changed records reason ("" for ready) and reports whether it differs
// from the last one, or that one is a minute old.
func (l *reasonLog) changed(reason string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if reason == l.reason && now.Sub(l.at) < time.Minute {
		return false
	}
	l.reason, l.at = reason, now
	return true
}

// ListenAddr is the address a metrics endpoint given as addr listens on: a
// bare port (":9292" or "9292") means 127.0.0.1 only, so that metrics are
// not served to every network by default; a host ("0.0.0.0:9292",
// "[::]:9292", "10.0.0.5:9292") is used as given.
func ListenAddr(addr string) (string, error) {
	a := strings.TrimSpace(addr)
	if _, err := strconv.ParseUint(a, 10, 16); err == nil {
		a = ":" + a
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return "", fmt.Errorf("want [host]:port or a port (e.g. 127.0.0.1:9292 or 9292): %w", err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("port %q: want 0 to 65535", port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Serve listens on addr in the background; Close stops it. It returns the
// address it listens on (useful with port 0).
func (m *Metrics) Serve(addr string) (string, error) { return m.httpServer.serve(addr, m.Handler()) }

// Close stops the server started by Serve.
func (m *Metrics) Close() error { return m.httpServer.close() }

// httpServer is the HTTP side Metrics, PoolServer and SchedulerServer
// share.
type httpServer struct {
	server *http.Server
	log    *zerolog.Logger
	token  string // required as a bearer token when set
	// ready, when set, is /readyz's check after Redis answered PING.
	ready func(ctx context.Context) error
}

func (h *httpServer) serve(addr string, handler http.Handler) (string, error) {
	addr, err := ListenAddr(addr)
	if err != nil {
		return "", err
	}
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

// writeLive writes the slots' use and the queues' lengths and oldest jobs'
// ages, read at scrape time: one pipeline of plain reads (LLEN, LINDEX 0)
// over the queues this process works, no write and no SCAN.
func (m *Metrics) writeLive(w io.Writer) {
	cfg := m.cfg
	if cfg.Slots != nil {
		busy, total := cfg.Slots()
		vm.WriteGaugeUint64(w, "resque_jobs_in_flight", uint64(busy))
		vm.WriteGaugeUint64(w, "resque_worker_slots", uint64(total))
		vm.WriteGaugeUint64(w, "resque_worker_slots_busy", uint64(busy))
		vm.WriteGaugeUint64(w, "resque_worker_slots_idle", uint64(max(total-busy, 0)))
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
	// the queues after the first MaxLabelValues are shown as one, "other"
	shown, rest := queues, []string(nil)
	if len(queues) > m.queues.limit() {
		shown, rest = queues[:m.queues.limit()], queues[m.queues.limit():]
	}
	lens, heads, err := cfg.Client.QueueHeads(ctx, shown)
	if _, bad := rdb.BadKeys(err); err != nil && !bad {
		up, lens, heads = 0, nil, nil
	}
	var other int64
	if len(rest) > 0 && up == 1 {
		keys := make([]string, len(rest))
		for i, q := range rest {
			keys[i] = cfg.Client.Keys().Queue(q)
		}
		n, _, err := cfg.Client.BatchRead(ctx, keys, nil)
		if _, bad := rdb.BadKeys(err); err != nil && !bad {
			up = 0
		}
		for _, x := range n {
			other += x
		}
	}
	for i, n := range lens {
		if i == 0 {
			vm.WriteMetadataIfNeeded(w, "resque_queue_length", "gauge")
		}
		fmt.Fprintf(w, "resque_queue_length{queue=\"%s\"} %d\n", labelValue(shown[i]), n)
	}
	if len(rest) > 0 && up == 1 {
		fmt.Fprintf(w, "resque_queue_length{queue=\"%s\"} %d\n", OtherLabel, other)
	}
	now, first := cfg.Now(), true
	for i, head := range heads {
		age, ok := headAge(head, now)
		if !ok {
			continue
		}
		if first {
			vm.WriteMetadataIfNeeded(w, "resque_queue_oldest_job_age_seconds", "gauge")
			first = false
		}
		fmt.Fprintf(w, "resque_queue_oldest_job_age_seconds{queue=\"%s\"} %g\n", labelValue(shown[i]), age)
	}
	vm.WriteGaugeUint64(w, "resque_redis_up", up)
}

// headAge is how long the job at the head of a queue has waited, from its
// payload's queue_time (php-resque, node-resque, resque-go and the
// scheduler's promotions write one; Ruby Resque's plain payloads do not:
// then ok is false). A queue_time in the future reads as 0.
func headAge(head []byte, now time.Time) (float64, bool) {
	if head == nil {
		return 0, false
	}
	p, err := protocol.DecodePayload(head)
	if err != nil || !p.HasQueueTime {
		return 0, false
	}
	age := float64(now.UnixNano())/1e9 - p.QueueTime
	return max(math.Round(age*1000)/1000, 0), true
}
