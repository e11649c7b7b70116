package runtime

import (
	"context"
	"sync"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
)

// limitSweepEvery is how often a worker with limits renews its jobs'
// holds and sweeps its limits: expired holds dropped, parked jobs moved
// back where a cap has room, due waiting jobs of a rate moved back.
const limitSweepEvery = time.Second

// limitHolds are the caps' slots the worker's running jobs hold, by
// worker id, for the sweep to renew.
type limitHolds struct {
	mu   sync.Mutex
	held map[string][]rdb.HeldSlot
}

func (h *limitHolds) set(wid string, slots []rdb.HeldSlot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = map[string][]rdb.HeldSlot{}
	}
	if len(slots) == 0 {
		delete(h.held, wid)
		return
	}
	h.held[wid] = slots
}

func (h *limitHolds) all() []rdb.HeldSlot {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []rdb.HeldSlot
	for _, s := range h.held {
		out = append(out, s...)
	}
	return out
}

// limitHoldsOf are the caps' slots a job claimed as res holds: the claim
// script took them by the same rules (protocol.Limit.LimitHeld).
func limitHoldsOf(l *rdb.ClaimLimits, res rdb.ClaimResult, class string) []rdb.LimitHold {
	if l == nil {
		return nil
	}
	return rdb.LimitHoldsOf(l.Rules(), res.Source, res.Queue, class, res.Payload)
}

// hold notes the slots of the job the slot has just claimed.
func (s *slot) hold(res rdb.ClaimResult, class string) {
	w := s.w
	if w.limits == nil {
		return
	}
	if w.gate != nil {
		s.holds = w.gate.claimed(s, res, class)
	} else {
		s.holds = limitHoldsOf(w.limits, res, class)
	}
	var slots []rdb.HeldSlot
	for _, h := range s.holds {
		slots = append(slots, rdb.HeldSlot{Name: h.Name, Member: rdb.LimitMember(s.id, res.Seq)})
	}
	w.held.set(s.id, slots)
}

// unhold forgets the slot's holds once its job's end is recorded.
func (s *slot) unhold() {
	if s.w.limits == nil {
		return
	}
	s.holds = nil
	s.w.held.set(s.id, nil)
	if s.w.gate != nil {
		s.w.gate.ended(s)
	}
}

// limitLoop renews the holds and the caps' leases and sweeps the limits
// every limitSweepEvery.
func (w *Worker) limitLoop(ctx context.Context) {
	t := time.NewTicker(limitSweepEvery)
	defer t.Stop()
	for {
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if w.gate != nil {
			if err := w.gate.step(callCtx, w, false); err != nil && ctx.Err() == nil {
				w.log.Warn().Err(err).Msg("cannot take or renew the caps' leases; trying again")
			}
		}
		swept, err := w.client.SweepLimits(callCtx, w.limits, w.held.all(), w.cfg.Now(), w.slots[0].id)
		cancel()
		for _, e := range swept.SetAside {
			w.log.Warn().Str("key", e.List).Str("entry", clip(e.Entry, 200)).
				Msg("limits: an entry that is not a job's set aside into failed")
		}
		if err != nil && ctx.Err() == nil {
			w.log.Warn().Err(err).Msg("cannot sweep the limits; trying again")
		} else if swept.Moved > 0 {
			w.log.Debug().Int("moved", swept.Moved).Msg("limits: jobs moved back to their queues")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// clip is s cut to at most n bytes, for a log line.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
