package runtime

import (
	"context"
	"strconv"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/service"
)

// jobCancelled is the context cause of a job a cancel request stopped
// (resque-go job cancel): it ends in failed as ResqueGo::Cancelled, and is
// retried only when the request allows it.
type jobCancelled struct{ retry bool }

func (jobCancelled) Error() string { return "job cancelled by request (resque-go job cancel)" }

// cancelLoop keeps the process's one subscription to the cancel and
// process request channels until ctx is done, reconnecting with backoff.
// At each (re)subscription it reads the stored requests of its slots and
// of the process: one made while it was not subscribed is applied then.
func (w *Worker) cancelLoop(ctx context.Context) {
	var b backoff
	warned := false // one warning per outage, not one per attempt
	for ctx.Err() == nil {
		err := w.client.SubscribeRequests(ctx, func() {
			b.reset()
			if warned {
				w.log.Info().Msg("cancel subscription restored")
			}
			warned = false
			w.readStoredCancels(ctx)
			w.readStoredControl(ctx)
		}, w.applyCancel, w.applyControl)
		if ctx.Err() != nil {
			return
		}
		d := b.next()
		ev := w.log.Debug()
		if !warned {
			ev, warned = w.log.Warn(), true
		}
		ev.Err(err).Dur("retry_in", d).Msg("cancel subscription lost; reconnecting (cancel requests are read when it is back)")
		service.Sleep(ctx, d)
	}
}

// readStoredCancels applies the stored cancel requests of the slots.
func (w *Worker) readStoredCancels(ctx context.Context) {
	callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	reqs, err := w.client.StoredCancels(callCtx, w.IDs())
	if err != nil {
		w.log.Warn().Err(err).Msg("cannot read stored cancel requests")
		return
	}
	for _, req := range reqs {
		w.applyCancel(req)
	}
}

// applyCancel passes a cancel request to the slot it names, if it is one
// of this process's.
func (w *Worker) applyCancel(req protocol.Cancel) {
	for _, s := range w.slots {
		if s.id == req.WorkerID {
			s.requestCancel(req)
			return
		}
	}
}

// requestCancel cancels the running job if it is the claim req names. A
// request for a later claim (the push came before the slot started that
// job) is kept for it; one for an earlier claim does nothing.
func (s *slot) requestCancel(req protocol.Cancel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && s.cur.Seq == req.Seq {
		if s.cancel != nil && !s.cancelled {
			s.cancelled = true
			s.w.log.Info().Str("worker_id", s.id).Str("seq", req.Seq).Bool("retry", req.Retry).Msg("cancelling the running job on request")
			s.cancel(jobCancelled{retry: req.Retry})
		}
		return
	}
	if s.cur == nil || seqAfter(req.Seq, s.cur.Seq) {
		s.pending = &req
	}
}

// takePending applies, while s.mu is held by the caller and the slot has
// just set cur, a request that arrived before its job started.
func (s *slot) takePending() {
	req := s.pending
	if req == nil || s.cur == nil {
		return
	}
	if req.Seq == s.cur.Seq {
		s.pending = nil
		s.cancelled = true
		s.w.log.Info().Str("worker_id", s.id).Str("seq", req.Seq).Bool("retry", req.Retry).Msg("cancelling the running job on request")
		s.cancel(jobCancelled{retry: req.Retry})
		return
	}
	if !seqAfter(req.Seq, s.cur.Seq) {
		s.pending = nil // for an earlier claim: that job is over
	}
}

// seqAfter reports whether claim sequence a comes after b.
func seqAfter(a, b string) bool {
	x, err1 := strconv.ParseInt(a, 10, 64)
	y, err2 := strconv.ParseInt(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}
