package runtime

import (
	"context"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// counterFlush is how often the batched queue statistics are written.
const counterFlush = 250 * time.Millisecond

// countClaim counts a claimed job in the per-host queue statistics
// (queuestat:<host>:dequeued and :queue_time, docs/protocol.md#statistics). They are
// batched: written once per counterFlush for all slots, in one round trip,
// instead of costing Redis commands with every job.
func (w *Worker) countClaim(res rdb.ClaimResult, p *protocol.Payload, now time.Time) {
	w.counters.AddQueueStat(w.cfg.Hostname, protocol.QueueStatDequeued, res.StatName(), 1)
	if p != nil && p.HasQueueTime {
		waited := int64(float64(now.UnixNano())/1e6 - p.QueueTime*1000)
		w.counters.AddQueueStat(w.cfg.Hostname, protocol.QueueStatQueueTime, res.StatName(), max(waited, 0))
	}
}

// countFinish counts a finished job's processing time and, for a success,
// the processed counter of its queue (batched like countClaim; Ruby's
// stat:processed counters are written with the job's end).
func (w *Worker) countFinish(queue string, kind rdb.OutcomeKind, took time.Duration) {
	w.counters.AddQueueStat(w.cfg.Hostname, protocol.QueueStatProcessingTime, queue, max(took.Milliseconds(), 0))
	if kind == rdb.OutcomeOK || kind == rdb.OutcomeReschedule || kind == rdb.OutcomeDiscard {
		w.counters.AddQueueStat(w.cfg.Hostname, protocol.QueueStatProcessed, queue, 1)
	}
}

// counterLoop writes the batched statistics every counterFlush while there
// are any; a failed write keeps them for the next try.
func (w *Worker) counterLoop(ctx context.Context) {
	t := time.NewTicker(counterFlush)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.flushCounters(ctx)
		if tick%depsReadTicks == 0 {
			w.readDepsOn(ctx)
		}
	}
}

func (w *Worker) flushCounters(ctx context.Context) {
	if w.counters.Pending() == 0 {
		return
	}
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := w.client.FlushCounters(callCtx, &w.counters); err != nil {
		w.log.Warn().Err(err).Msg("cannot write queue statistics; keeping them for the next try")
	}
}
