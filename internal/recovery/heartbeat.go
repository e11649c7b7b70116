package recovery

import (
	"context"
	"time"

	"github.com/resque-go/resque-go/internal/service"
)

// heartbeatLoop writes every id's heartbeat each HeartbeatInterval, in one
// step for the whole process, and registers again any id another runtime
// removed: a Ruby or PHP worker starting on the same host may unregister
// ids whose pid it cannot see.
func (s *Service) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		callCtx, cancel := context.WithTimeout(ctx, s.cfg.HeartbeatInterval)
		var again int
		var err error
		// After Redis restarted or the connections were cut, the pool's idle
		// connections fail one by one on first use: try again at once on a
		// fresh one rather than miss a beat (three missed beats and other
		// processes judge these ids dead and run their jobs again).
		for try := 0; try < 4; try++ {
			if _, again, _, err = s.client.Heartbeat(callCtx, s.cfg.IDs, s.cfg.Now(), s.cfg.HeartbeatInterval); err == nil || callCtx.Err() != nil {
				break
			}
			if !service.Sleep(callCtx, 50*time.Millisecond) {
				break
			}
		}
		cancel()
		if err == nil {
			s.lastBeat.Store(s.cfg.Now().UnixNano())
		}
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn().Err(err).Msg("heartbeat failed")
		case again > 0:
			s.log.Warn().Int("slots", again).Msg("another runtime had unregistered slots of this process; registered them again")
		}
	}
}
