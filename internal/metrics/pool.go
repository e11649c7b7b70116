package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/rdb"
)

// PoolChild is what the pool metrics show of one child slot. (The pool's
// own type is not used: package pool depends on package node, which serves
// a child's metrics with this package.)
type PoolChild struct {
	State string
	// Queues names the child's worker set (its queue list).
	Queues string
	// Restarts counts the processes started after a crash or a stop;
	// Recycles those started after a recycle (max_jobs, max_rss, max_age).
	Restarts, Recycles int
	// SlotsBusy and SlotsTotal are the running process's job slots, from
	// its runtime record (refreshed every heartbeat); HasSlots is false
	// when there is none.
	SlotsBusy, SlotsTotal int
	HasSlots              bool
}

// PoolServer serves a pool manager's /metrics (its children by state,
// their restarts and recycles, their job slots per worker set), /healthz
// and /readyz. Each child serves its own job metrics on the ports after
// the manager's.
type PoolServer struct {
	client *rdb.Client
	status func() []PoolChild
	set    *vm.Set
	httpServer
}

// ServerOptions protect a server's endpoints and name its log.
type ServerOptions struct {
	// Token, when set, is the bearer token /metrics, /healthz and /readyz
	// require.
	Token string
	// Logger receives why /readyz failed; nil: nowhere.
	Logger *zerolog.Logger
	// Ready, when set, is /readyz's check once Redis answered PING: nil,
	// or why the process is not ready.
	Ready func(ctx context.Context) error
}

// NewPool builds the manager's metrics; status returns the children
// as they are at scrape time.
func NewPool(client *rdb.Client, status func() []PoolChild, opt ServerOptions) *PoolServer {
	p := &PoolServer{client: client, status: status, set: vm.NewSet(), httpServer: httpServer{log: opt.Logger, token: opt.Token, ready: opt.Ready}}
	p.set.RegisterMetricsWriter(p.write)
	return p
}

// write writes the children by state, their restarts and recycles, and
// the busy and idle job slots of each worker set.
func (p *PoolServer) write(w io.Writer) {
	byState := map[string]int{}
	restarts, recycles := 0, 0
	type slots struct{ busy, idle int }
	bySet := map[string]*slots{}
	var sets []string
	for _, child := range p.status() {
		byState[child.State]++
		restarts += child.Restarts
		recycles += child.Recycles
		if child.Queues == "" {
			continue
		}
		sl := bySet[child.Queues]
		if sl == nil {
			sl = &slots{}
			bySet[child.Queues] = sl
			sets = append(sets, child.Queues)
		}
		if child.HasSlots {
			sl.busy += child.SlotsBusy
			sl.idle += max(child.SlotsTotal-child.SlotsBusy, 0)
		}
	}
	states := make([]string, 0, len(byState))
	for state := range byState {
		states = append(states, state)
	}
	sort.Strings(states)
	for i, state := range states {
		if i == 0 {
			vm.WriteMetadataIfNeeded(w, "resque_pool_children", "gauge")
		}
		fmt.Fprintf(w, "resque_pool_children{state=\"%s\"} %d\n", labelValue(state), byState[state])
	}
	vm.WriteCounterUint64(w, "resque_pool_child_restarts_total", uint64(restarts))
	vm.WriteCounterUint64(w, "resque_pool_child_recycles_total", uint64(recycles))
	for _, name := range []string{"resque_pool_slots_busy", "resque_pool_slots_idle"} {
		for i, set := range sets {
			if i == 0 {
				vm.WriteMetadataIfNeeded(w, name, "gauge")
			}
			n := bySet[set].busy
			if name == "resque_pool_slots_idle" {
				n = bySet[set].idle
			}
			fmt.Fprintf(w, "%s{queues=\"%s\"} %d\n", name, labelValue(set), n)
		}
	}
}

// Handler serves /metrics, /healthz and /readyz.
func (p *PoolServer) Handler() http.Handler { return p.httpServer.handler(p.set, p.client) }

// Serve listens on addr in the background and returns the bound address.
func (p *PoolServer) Serve(addr string) (string, error) { return p.httpServer.serve(addr, p.Handler()) }

// Close stops the server.
func (p *PoolServer) Close() error { return p.httpServer.close() }
