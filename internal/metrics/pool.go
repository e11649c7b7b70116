package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/resque-go/resque-go/internal/rdb"
)

// PoolChild is what the pool metrics show of one child slot. (The pool's
// own type is not used: package pool depends on package node, which serves
// a child's metrics with this package.)
type PoolChild struct {
	State    string
	Restarts int
}

// PoolServer serves a pool manager's /metrics (its children by state and
// their restarts) and /healthz. Each child serves its own job metrics on
// the ports after the manager's.
type PoolServer struct {
	client *rdb.Client
	status func() []PoolChild
	reg    *prometheus.Registry
	httpServer
}

// NewPool builds the manager's collectors; status returns the children
// as they are at scrape time.
func NewPool(client *rdb.Client, status func() []PoolChild) *PoolServer {
	p := &PoolServer{client: client, status: status, reg: prometheus.NewRegistry()}
	p.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), poolCollector{p})
	return p
}

var (
	childrenDesc = prometheus.NewDesc("resque_pool_children", "Child worker processes of this pool by state (running, backoff, crashloop, stopping ...).", []string{"state"}, nil)
	restartsDesc = prometheus.NewDesc("resque_pool_child_restarts", "Restarts of the current child slots, summed.", nil, nil)
)

type poolCollector struct{ p *PoolServer }

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- childrenDesc
	ch <- restartsDesc
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	byState := map[string]int{}
	restarts := 0
	for _, child := range c.p.status() {
		byState[child.State]++
		restarts += child.Restarts
	}
	for state, n := range byState {
		ch <- prometheus.MustNewConstMetric(childrenDesc, prometheus.GaugeValue, float64(n), state)
	}
	ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.GaugeValue, float64(restarts))
}

// Handler serves /metrics and /healthz.
func (p *PoolServer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(p.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", healthz(p.client))
	return mux
}

// Serve listens on addr in the background and returns the bound address.
func (p *PoolServer) Serve(addr string) (string, error) { return p.httpServer.serve(addr, p.Handler()) }

// Close stops the server.
func (p *PoolServer) Close() error { return p.httpServer.close() }
