package metrics

import (
	"io"
	"net/http"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/resque-go/resque-go/internal/rdb"
)

// SchedulerCounts is what a scheduler's metrics show: totals since start
// and the master flag, read at scrape time.
type SchedulerCounts struct {
	Promoted, PlansFired, SchedulesFired int64
	DueBuckets                           int64
	Master                               bool
}

// SchedulerServer serves a `resque-go scheduler` process's /metrics,
// /healthz and /readyz (Redis answers PING).
type SchedulerServer struct {
	client *rdb.Client
	counts func() SchedulerCounts
	set    *vm.Set
	httpServer
}

// NewScheduler builds the scheduler's metrics.
func NewScheduler(client *rdb.Client, counts func() SchedulerCounts, opt ServerOptions) *SchedulerServer {
	s := &SchedulerServer{client: client, counts: counts, set: vm.NewSet(), httpServer: httpServer{log: opt.Logger, token: opt.Token}}
	s.set.RegisterMetricsWriter(s.write)
	return s
}

// write writes the counts as they are at scrape time.
func (s *SchedulerServer) write(w io.Writer) {
	n := s.counts()
	master := uint64(0)
	if n.Master {
		master = 1
	}
	vm.WriteCounterUint64(w, "resque_delayed_promoted_total", uint64(n.Promoted))
	vm.WriteCounterUint64(w, "resque_plan_fires_total", uint64(n.PlansFired))
	vm.WriteCounterUint64(w, "resque_schedule_fires_total", uint64(n.SchedulesFired))
	vm.WriteGaugeUint64(w, "resque_delayed_due_buckets", uint64(n.DueBuckets))
	vm.WriteGaugeUint64(w, "resque_scheduler_master", master)
}

// Handler serves /metrics, /healthz and /readyz.
func (s *SchedulerServer) Handler() http.Handler { return s.httpServer.handler(s.set, s.client) }

// Serve listens on addr in the background and returns the bound address.
func (s *SchedulerServer) Serve(addr string) (string, error) {
	return s.httpServer.serve(addr, s.Handler())
}

// Close stops the server.
func (s *SchedulerServer) Close() error { return s.httpServer.close() }
