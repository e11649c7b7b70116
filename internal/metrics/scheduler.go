package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/resque-go/resque-go/internal/rdb"
)

// SchedulerCounts is what a scheduler's metrics show: totals since start
// and the master flag, read at scrape time.
type SchedulerCounts struct {
	Promoted, PlansFired, SchedulesFired int64
	DueBuckets                           int64
	Master                               bool
}

// SchedulerServer serves a `resque-go scheduler` process's /metrics and
// /healthz.
type SchedulerServer struct {
	client *rdb.Client
	counts func() SchedulerCounts
	reg    *prometheus.Registry
	httpServer
}

// NewScheduler builds the scheduler's collectors.
func NewScheduler(client *rdb.Client, counts func() SchedulerCounts) *SchedulerServer {
	s := &SchedulerServer{client: client, counts: counts, reg: prometheus.NewRegistry()}
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), schedulerCollector{s})
	return s
}

var (
	promotedDesc       = prometheus.NewDesc("resque_delayed_promoted_total", "Delayed items this process promoted to their queues (or recorded in failed).", nil, nil)
	plansFiredDesc     = prometheus.NewDesc("resque_plan_fires_total", "Plan slots this process fired (jobs pushed).", nil, nil)
	schedulesFiredDesc = prometheus.NewDesc("resque_schedule_fires_total", "Recurring schedule slots this process enqueued as master.", nil, nil)
	dueDesc            = prometheus.NewDesc("resque_delayed_due_buckets", "Delayed buckets due and not yet promoted, at the latest look.", nil, nil)
	masterDesc         = prometheus.NewDesc("resque_scheduler_master", "1 while this process holds resque-scheduler's master lock.", nil, nil)
)

type schedulerCollector struct{ s *SchedulerServer }

func (c schedulerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{promotedDesc, plansFiredDesc, schedulesFiredDesc, dueDesc, masterDesc} {
		ch <- d
	}
}

func (c schedulerCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.s.counts()
	master := 0.0
	if n.Master {
		master = 1
	}
	ch <- prometheus.MustNewConstMetric(promotedDesc, prometheus.CounterValue, float64(n.Promoted))
	ch <- prometheus.MustNewConstMetric(plansFiredDesc, prometheus.CounterValue, float64(n.PlansFired))
	ch <- prometheus.MustNewConstMetric(schedulesFiredDesc, prometheus.CounterValue, float64(n.SchedulesFired))
	ch <- prometheus.MustNewConstMetric(dueDesc, prometheus.GaugeValue, float64(n.DueBuckets))
	ch <- prometheus.MustNewConstMetric(masterDesc, prometheus.GaugeValue, master)
}

// Handler serves /metrics and /healthz.
func (s *SchedulerServer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", healthz(s.client))
	return mux
}

// Serve listens on addr in the background and returns the bound address.
func (s *SchedulerServer) Serve(addr string) (string, error) {
	return s.httpServer.serve(addr, s.Handler())
}

// Close stops the server.
func (s *SchedulerServer) Close() error { return s.httpServer.close() }
