package metrics

import (
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
	State    string
	Restarts int
}

// PoolServer serves a pool manager's /metrics (its children by state and
// their restarts) and /healthz. Each child serves its own job metrics on
// the ports after the manager's.
type PoolServer struct {
	client *rdb.Client
	status func() []PoolChild
	set    *vm.Set
	httpServer
}

// ServerOptions protect a server's endpoints and name its log.
type ServerOptions struct {
	// Token, when set, is the bearer token /metrics and /healthz require.
	Token string
	// Logger receives why /healthz failed; nil: nowhere.
	Logger *zerolog.Logger
}

// NewPool builds the manager's metrics; status returns the children
// as they are at scrape time.
func NewPool(client *rdb.Client, status func() []PoolChild, opt ServerOptions) *PoolServer {
	p := &PoolServer{client: client, status: status, set: vm.NewSet(), httpServer: httpServer{log: opt.Logger, token: opt.Token}}
	p.set.RegisterMetricsWriter(p.write)
	return p
}

// write writes the children by state and their restarts.
func (p *PoolServer) write(w io.Writer) {
	byState := map[string]int{}
	restarts := 0
	for _, child := range p.status() {
		byState[child.State]++
		restarts += child.Restarts
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
	vm.WriteGaugeUint64(w, "resque_pool_child_restarts", uint64(restarts))
}

// Handler serves /metrics and /healthz.
func (p *PoolServer) Handler() http.Handler { return p.httpServer.handler(p.set, p.client) }

// Serve listens on addr in the background and returns the bound address.
func (p *PoolServer) Serve(addr string) (string, error) { return p.httpServer.serve(addr, p.Handler()) }

// Close stops the server.
func (p *PoolServer) Close() error { return p.httpServer.close() }
