package runtime

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resque-go/resque-go/internal/service"
)

// queuePausePoll is how often a worker reads the pause keys of its queues
// (<ns>:pause:queue:<q>, as resque-pause and resque-queue-control write
// them): just under a second, so that a queue paused anywhere gets no new
// claim from this process 1 s later, the read's round trip and a claim in
// flight included. One pipelined EXISTS per queue of the list, whatever the
// slot count; the per-job path reads only the last answer, in memory.
const queuePausePoll = 900 * time.Millisecond

// queuePauses is what the last poll found: the worker's queues that are
// paused. Slots leave them out of the list they claim from; a job already
// claimed runs and finishes as usual.
type queuePauses struct {
	set atomic.Pointer[map[string]bool] // nil while none of the queues is paused

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when the set changes
}

// filter returns queues without the paused ones; queues itself (no copy)
// while none is paused.
func (p *queuePauses) filter(queues []string) []string {
	set := p.set.Load()
	if set == nil {
		return queues
	}
	out := make([]string, 0, len(queues))
	for _, q := range queues {
		if !(*set)[q] {
			out = append(out, q)
		}
	}
	return out
}

// wait returns a channel closed at the next change of the paused set.
func (p *queuePauses) wait() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.changed == nil {
		p.changed = make(chan struct{})
	}
	return p.changed
}

// names returns the paused queues, sorted.
func (p *queuePauses) names() []string {
	set := p.set.Load()
	if set == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(*set))
}

// store makes set (nil or empty: none) the paused set and returns the
// queues paused and resumed since the last one.
func (p *queuePauses) store(set map[string]bool) (paused, resumed []string) {
	old := p.set.Load()
	was := map[string]bool{}
	if old != nil {
		was = *old
	}
	for q := range set {
		if !was[q] {
			paused = append(paused, q)
		}
	}
	for q := range was {
		if !set[q] {
			resumed = append(resumed, q)
		}
	}
	if len(paused) == 0 && len(resumed) == 0 {
		return nil, nil
	}
	if len(set) == 0 {
		p.set.Store(nil)
	} else {
		p.set.Store(&set)
	}
	p.mu.Lock()
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
	p.mu.Unlock()
	slices.Sort(paused)
	slices.Sort(resumed)
	return paused, resumed
}

// pauseLoop reads the pause keys of the worker's queues every
// queuePausePoll until ctx is done.
func (w *Worker) pauseLoop(ctx context.Context) {
	for service.Sleep(ctx, queuePausePoll) {
		w.readQueuePauses(ctx)
	}
}

// readQueuePauses reads the pause keys of the worker's queues once and
// logs each queue paused or resumed since the last read. On a Redis error
// the last answer stands (the claims report Redis errors themselves).
func (w *Worker) readQueuePauses(ctx context.Context) {
	callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	queues, err := w.queues.current(callCtx)
	if err != nil {
		return
	}
	paused, err := w.client.QueuesPaused(callCtx, queues)
	if err != nil {
		w.log.Debug().Err(err).Msg("cannot read queue pause keys")
		return
	}
	var set map[string]bool
	for i, p := range paused {
		if p {
			if set == nil {
				set = map[string]bool{}
			}
			set[queues[i]] = true
		}
	}
	on, off := w.pauses.store(set)
	for _, q := range on {
		w.log.Info().Str("queue", q).Msg("queue paused")
	}
	for _, q := range off {
		w.log.Info().Str("queue", q).Msg("queue resumed")
	}
}

// PausedQueues returns the worker's queues it found paused at its last
// read of their pause keys, sorted.
func (w *Worker) PausedQueues() []string { return w.pauses.names() }
