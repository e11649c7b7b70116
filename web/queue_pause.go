package web

import (
	"net/http"
	"slices"
)

// Pausing and resuming a queue: workers stop taking its jobs within a
// second (resque-go's, and Ruby's with resque-pause or
// resque-queue-control); jobs can still be enqueued.

// withPaused returns a copy of qs with each queue's pause state (the
// overview's reading is shared, never changed): one EXISTS of every pause
// key, a second round trip only when some queue is paused.
func (s *server) withPaused(r *http.Request, qs []queueView) ([]queueView, error) {
	names := make([]string, len(qs))
	for i, q := range qs {
		names[i] = q.Name
	}
	paused, err := s.c.QueuesPaused(r.Context(), names)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(qs)
	for i := range out {
		out[i].Paused = paused[i]
	}
	return out, nil
}

// queuePause pauses or resumes queue; changed is false when it was in
// that state already (a pause is always reported as a change: Redis does
// not say).
func (s *server) queuePause(r *http.Request, queue, op string) (changed bool, err error) {
	if queue == "" {
		return false, statusErr(http.StatusBadRequest, "a queue is required")
	}
	switch op {
	case "pause":
		err, changed = s.c.PauseQueue(r.Context(), queue), true
	case "resume":
		changed, err = s.c.ResumeQueue(r.Context(), queue)
	default:
		return false, statusErr(http.StatusNotFound, "no action %q: want pause or resume", op)
	}
	if err != nil {
		return false, err
	}
	var n int64
	if changed {
		n = 1
	}
	return changed, s.audit(r, "queue."+op, "queue "+queue, n, "")
}

func (s *server) queuePauseForm(op string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.mayPost(w, r, RoleOperator) {
			return
		}
		q := r.PathValue("queue")
		changed, err := s.queuePause(r, q, op)
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		msg := s.tf(r, "Paused queue %s: workers take none of its jobs until it is resumed.", q)
		if op == "resume" {
			msg = s.tf(r, "Resumed queue %s.", q)
			if !changed {
				msg = s.tf(r, "Queue %s was not paused; nothing was done.", q)
			}
		}
		s.done(w, r, "queues", msg)
	}
}

func (s *server) apiQueuePause(op string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.may(w, r, RoleOperator) {
			return
		}
		q := r.PathValue("queue")
		changed, err := s.queuePause(r, q, op)
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"action": op, "queue": clean(q), "changed": changed})
	}
}
