package worker

import (
	"context"
	"time"
)

// heartbeatLoop writes every slot's heartbeat each HeartbeatInterval, in
// one step for the whole process, and registers again any slot another
// runtime removed: a Ruby or PHP worker starting on the same host may
// unregister ids whose pid it cannot see.
func (w *Worker) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.HeartbeatInterval)
	defer t.Stop()
	ids := w.IDs()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		callCtx, cancel := context.WithTimeout(ctx, w.cfg.HeartbeatInterval)
		_, again, _, err := w.client.Heartbeat(callCtx, ids, w.cfg.Now(), w.cfg.HeartbeatInterval)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			w.log.Warn().Err(err).Msg("heartbeat failed")
		case again > 0:
			w.log.Warn().Int("slots", again).Msg("another runtime had unregistered slots of this process; registered them again")
		}
	}
}
