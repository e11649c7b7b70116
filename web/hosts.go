package web

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/stats"
)

// schedulerReadEvery is how often the overview looks for scheduler
// records: finding them takes a SCAN, whose cost grows with the keyspace,
// so it is not done with every reading.
const schedulerReadEvery = time.Minute

// processView is one resque-go process, from its runtime record.
type processView struct {
	Host       string     `json:"host"`
	PID        int        `json:"pid"`
	SlotsBusy  int        `json:"slots_busy"`
	SlotsTotal int        `json:"slots_total"`
	RSSBytes   uint64     `json:"rss_bytes"`
	CPUPercent float64    `json:"cpu_percent"`
	Goroutines int        `json:"goroutines"`
	StartedAt  *time.Time `json:"started_at"`
	UpdatedAt  *time.Time `json:"updated_at"`
	UpSeconds  *int64     `json:"up_seconds"`
	HostCPU    float64    `json:"host_cpu_percent"`
	HostMem    float64    `json:"host_mem_used_percent"`
	Load1      float64    `json:"load1"`
	// Paused: the process takes no new job (resque-go process quiet, or
	// USR2), as of its record's last refresh.
	Paused bool `json:"paused"`
}

type schedulerView struct {
	Host     string     `json:"host"`
	PID      int        `json:"pid"`
	Runtime  string     `json:"runtime"`
	Master   bool       `json:"master"`
	Started  *time.Time `json:"started"`
	LastPass *time.Time `json:"last_pass"`
	Promoted int64      `json:"promoted"`
	Fired    int64      `json:"fired"`
}

// schedulerCache holds the last reading of the schedulers.
type schedulerCache struct {
	mu   sync.Mutex
	at   time.Time
	last client.Schedulers
	err  error
}

// massPoolsReadEvery is how often the Mass queues page looks for pools:
// finding them takes SCANs of the keyspace (client.MassPoolNames), so it
// is not done with every request; the pools found are read afresh each
// time.
const massPoolsReadEvery = time.Minute

// poolCache holds the pools last found.
type poolCache struct {
	mu   sync.Mutex
	at   time.Time
	last client.MassPools
}

func (p *poolCache) read(ctx context.Context, c *client.Client, now time.Time) (client.MassPools, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.at.IsZero() || now.Sub(p.at) >= massPoolsReadEvery || now.Before(p.at) {
		found, err := c.MassPoolNames(ctx)
		if err != nil {
			return found, err
		}
		p.last, p.at = found, now
	}
	return p.last, nil
}

func (s *schedulerCache) read(ctx context.Context, c *client.Client, now time.Time) (client.Schedulers, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at.IsZero() || now.Sub(s.at) >= schedulerReadEvery || now.Before(s.at) {
		s.last, s.err = c.Schedulers(ctx)
		s.at = now
	}
	return s.last, s.err
}

// readHosts adds the resque-go processes (found by the workers already
// read: one pipelined GET per process) and the schedulers to v.
func (h *hub) readHosts(ctx context.Context, v *overviewView, ws []client.WorkerInfo) {
	v.Processes, v.Schedulers = []processView{}, []schedulerView{}
	if v.Error != "" && len(ws) == 0 {
		return
	}
	recs, err := h.c.Processes(ctx, ws)
	if err != nil && v.Error == "" {
		v.Error = clean(err.Error())
	}
	busy := map[string]int{}
	for _, w := range ws {
		if w.Job != nil {
			busy[w.Host+":"+strconv.Itoa(w.PID)]++
		}
	}
	for _, r := range recs {
		v.Processes = append(v.Processes, newProcessView(v.Time, r, busy))
	}
	sc, err := h.sched.read(ctx, h.c, v.Time)
	if err != nil && v.Error == "" {
		v.Error = clean(err.Error())
	}
	master := false
	for _, r := range sc.Records {
		m := r.Master || sc.Master == r.Host+":"+strconv.Itoa(r.PID)
		master = master || m
		v.Schedulers = append(v.Schedulers, schedulerView{Host: clean(r.Host), PID: r.PID, Runtime: "resque-go", Master: m,
			Started: timePtr(r.Started), LastPass: timePtr(r.LastPass), Promoted: r.Promoted, Fired: r.PlansFired + r.SchedulesFired})
	}
	if !master && sc.Master != "" {
		// the lock is held by a scheduler without a record: resque-scheduler
		host, pid := splitHostPID(sc.Master)
		v.Schedulers = append(v.Schedulers, schedulerView{Host: clean(host), PID: pid, Runtime: "resque-scheduler", Master: true})
	}
}

func newProcessView(now time.Time, r stats.Record, busy map[string]int) processView {
	p := processView{Host: clean(r.Host), PID: r.PID, SlotsTotal: r.SlotsTotal, RSSBytes: r.RSSBytes, CPUPercent: r.CPUPercent,
		Goroutines: r.Goroutines, StartedAt: timePtr(r.StartedAt), UpdatedAt: timePtr(r.UpdatedAt), UpSeconds: agePtr(now, r.StartedAt),
		HostCPU: r.HostCPUPercent, HostMem: r.MemUsedPercent, Load1: r.Load1, Paused: r.Paused}
	// busy slots as the workers' records say now, not as of the record's
	// last refresh
	p.SlotsBusy = busy[r.Host+":"+strconv.Itoa(r.PID)]
	return p
}

// splitHostPID reads resque-scheduler's "host:pid" lock value.
func splitHostPID(s string) (string, int) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			if pid, err := strconv.Atoi(s[i+1:]); err == nil {
				return s[:i], pid
			}
			break
		}
	}
	return s, 0
}
