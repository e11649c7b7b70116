package worker

import (
	"context"
	"time"
)

// heartbeatLoop re-asserts every slot's registration and heartbeat each
// HeartbeatInterval. Re-asserting (SADD, :started) matters: a Ruby or PHP
// worker starting on the same host may unregister ids whose pid it cannot see.
func (w *Worker) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, s := range w.slots {
			callCtx, cancel := context.WithTimeout(ctx, w.cfg.HeartbeatInterval)
			_, err := w.client.Register(callCtx, s.id, w.cfg.Now(), w.cfg.HeartbeatInterval, false)
			cancel()
			if err != nil && ctx.Err() == nil {
				w.log.Warn().Err(err).Str("worker_id", s.id).Msg("heartbeat failed")
				break
			}
		}
	}
}
