package node

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/shirou/gopsutil/v3/process"

	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/internal/service"
)

// ExitRecycled is the exit status of resque-go work after a recycle
// (Config.MaxJobs, MaxRSS, MaxAge): a clean exit that asks the supervisor
// for a fresh process at once (EX_TEMPFAIL, "try again"). A pool manager
// neither backs off nor counts it as a crash.
const ExitRecycled = 75

// Limits Recycled names.
const (
	LimitMaxJobs = "max_jobs"
	LimitMaxRSS  = "max_rss"
	LimitMaxAge  = "max_age"
	// LimitStopRequested is no limit: a pool child asked to stop through
	// Redis (resque-go process stop) exits as a recycled one, so that its
	// manager starts a fresh process at once instead of counting a crash.
	LimitStopRequested = "stop_requested"
)

// Recycled reports whether the node stopped (or is stopping) because it
// reached a recycling limit, and which: LimitMaxJobs, LimitMaxRSS or
// LimitMaxAge.
func (n *Node) Recycled() (limit string, ok bool) {
	if n.w.MaxJobsReached() {
		return LimitMaxJobs, true
	}
	if n.recycler != nil {
		return n.recycler.reached()
	}
	return "", false
}

// ready is the node's readiness, as /readyz shows it: the worker's, or
// runtime.ErrRecycling once a recycling limit was reached.
func (n *Node) ready() error {
	if limit, ok := n.Recycled(); ok {
		return fmt.Errorf("%w: %s", runtime.ErrRecycling, limit)
	}
	return n.w.Ready()
}

// recycler checks the resident set and the age of the process once a
// second and drains the node once one is over its limit.
type recycler struct {
	maxRSS int64
	maxAge time.Duration
	log    *zerolog.Logger
	stop   func()
	runner service.Runner

	mu    sync.Mutex
	limit string
}

func (r *recycler) Start(ctx context.Context) { r.runner.Start(ctx, r.loop) }
func (r *recycler) Stop()                     { r.runner.Stop() }

func (r *recycler) reached() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.limit, r.limit != ""
}

func (r *recycler) loop(ctx context.Context) {
	started := time.Now()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if limit, ev := r.check(started); limit != "" {
			r.mu.Lock()
			r.limit = limit
			r.mu.Unlock()
			ev.Msg("recycling: limit reached, draining (running jobs finish)")
			r.stop()
			return
		}
	}
}

// check returns the limit the process is over ("" for none) and the log
// event that says so.
func (r *recycler) check(started time.Time) (string, *zerolog.Event) {
	if age := time.Since(started); r.maxAge > 0 && age >= r.maxAge {
		return LimitMaxAge, r.log.Info().Str("limit", LimitMaxAge).Dur("max_age", r.maxAge).Dur("age", age.Round(time.Second))
	}
	if r.maxRSS > 0 {
		rss, err := residentBytes()
		if err != nil {
			r.log.Debug().Err(err).Msg("recycling: cannot read the resident set")
			return "", nil
		}
		if int64(rss) > r.maxRSS {
			return LimitMaxRSS, r.log.Info().Str("limit", LimitMaxRSS).Int64("max_rss", r.maxRSS).Uint64("rss", rss)
		}
	}
	return "", nil
}

// residentBytes is this process's resident set: /proc/self/statm where
// there is one (a read of one small file), gopsutil elsewhere.
func residentBytes() (uint64, error) {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		f := bytes.Fields(b)
		if len(f) >= 2 {
			if pages, err := strconv.ParseUint(string(f[1]), 10, 64); err == nil {
				return pages * uint64(os.Getpagesize()), nil
			}
		}
	}
	p, err := process.NewProcess(int32(os.Getpid()))
	if err != nil {
		return 0, err
	}
	m, err := p.MemoryInfo()
	if err != nil {
		return 0, err
	}
	return m.RSS, nil
}
