package web

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/unique"
)

// "Queue now" on the Delayed, Plans and Schedules pages, as resque-web's
// Delayed and Schedule tabs have it: operator role, one audit entry each.

// queuedNow is what a queue now did, as the API answers it.
type queuedNow struct {
	Queue string `json:"queue"`
	// Unassigned: a mass-queue job, pushed to unassigned.
	Unassigned bool   `json:"unassigned,omitempty"`
	Class      string `json:"class"`
	ID         string `json:"id,omitempty"`
	// Deferred: a unique plan's job met its uid's job running and was
	// parked, as a fire parks it.
	Deferred bool `json:"deferred,omitempty"`
}

// queueDelayedNow moves the item of bucket at whose bytes have digest to
// its queue now.
func (s *server) queueDelayedNow(r *http.Request, at int64, digest string) (delayedView, delayed.QueuedNow, error) {
	if digest == "" {
		return delayedView{}, delayed.QueuedNow{}, statusErr(http.StatusBadRequest, "the item's digest is required")
	}
	items, err := s.c.DelayedAt(r.Context(), time.Unix(at, 0))
	if err != nil {
		return delayedView{}, delayed.QueuedNow{}, err
	}
	for _, it := range items {
		if digestOf(it.Raw) != digest {
			continue
		}
		v := newDelayedView(it)
		res, err := s.c.QueueDelayedNow(r.Context(), it.At, it.Raw)
		if errors.Is(err, client.ErrNoSuchDelayedItem) {
			break
		}
		if errors.Is(err, client.ErrInvalid) {
			return v, res, statusErr(http.StatusConflict, "the delayed item is not a job a scheduler can promote; remove it instead")
		}
		if err != nil {
			return v, res, err
		}
		dest := "queue " + clip(res.Queue, 80)
		if res.Unassigned {
			dest = "unassigned"
		}
		target := fmt.Sprintf("delayed item due %s (%s) to %s", v.At.Format(time.RFC3339), clip(v.Class, 80), dest)
		return v, res, s.audit(r, "delayed.queue_now", target, 1, "")
	}
	return delayedView{}, delayed.QueuedNow{}, statusErr(http.StatusConflict, "the delayed item was promoted or removed meanwhile; nothing was queued")
}

// queuePlanNow enqueues plan id's job once now.
func (s *server) queuePlanNow(r *http.Request, id string) (queuedNow, error) {
	info, err := s.c.QueuePlanNow(r.Context(), id)
	switch {
	case errors.Is(err, client.ErrNoSuchPlan):
		return queuedNow{}, statusErr(http.StatusNotFound, "no plan %q", clip(id, 200))
	case errors.Is(err, unique.ErrDuplicate):
		return queuedNow{}, statusErr(http.StatusConflict, "the plan's unique id is taken (its job is queued or running); nothing was queued")
	case err != nil:
		return queuedNow{}, err
	}
	q := queuedNow{Queue: clean(info.Queue), Class: clean(info.Class), ID: clean(info.ID), Deferred: info.Deferred}
	detail := ""
	if q.Deferred {
		detail = "deferred: its unique id's job is running"
	}
	return q, s.audit(r, "plan.queue_now", "plan "+id+" to queue "+info.Queue, 1, detail)
}

// queueScheduleNow enqueues the job of schedule name once now.
func (s *server) queueScheduleNow(r *http.Request, name string) (queuedNow, error) {
	if name == "" {
		return queuedNow{}, statusErr(http.StatusBadRequest, "a schedule name is required")
	}
	info, err := s.c.QueueScheduleNow(r.Context(), client.ScheduleQuery{}, name)
	switch {
	case errors.Is(err, client.ErrNoSuchSchedule):
		return queuedNow{}, statusErr(http.StatusNotFound, "no schedule %q", clip(name, 200))
	case err != nil:
		return queuedNow{}, err
	}
	q := queuedNow{Queue: clean(info.Queue), Class: clean(info.Class)}
	return q, s.audit(r, "schedule.queue_now", "schedule "+name+" to queue "+info.Queue, 1, "")
}

func (s *server) delayedQueueNowForm(w http.ResponseWriter, r *http.Request) {
	at, digest, ok := s.delayedItemForm(w, r)
	if !ok {
		return
	}
	v, res, err := s.queueDelayedNow(r, at, digest)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	queue := clean(res.Queue)
	if res.Unassigned {
		queue = "unassigned"
	}
	s.done(w, r, "delayed", s.tf(r, "Queued the delayed %s job due %s to queue %s now.", v.Class, v.At.Format("2006-01-02 15:04:05 UTC"), queue))
}

func (s *server) planQueueNowForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleOperator) {
		return
	}
	id := r.PathValue("id")
	q, err := s.queuePlanNow(r, id)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	msg := s.tf(r, "Queued the job of plan %s to queue %s now; its schedule is unchanged.", id, q.Queue)
	if q.Deferred {
		msg = s.tf(r, "The job of plan %s was parked: its unique id's job is running.", id)
	}
	s.done(w, r, "plans/"+pathEscape(id), msg)
}

func (s *server) scheduleQueueNowForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleOperator) {
		return
	}
	name := r.Form.Get("name")
	q, err := s.queueScheduleNow(r, name)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.done(w, r, "schedules", s.tf(r, "Queued the %s job of schedule %s to queue %s now; its schedule is unchanged.", q.Class, name, q.Queue))
}

func (s *server) apiDelayedQueueNow(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleOperator) {
		return
	}
	at, digest, ok := s.delayedItemBody(w, r)
	if !ok {
		return
	}
	v, res, err := s.queueDelayedNow(r, at, digest)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"item": v, "queued": queuedNow{Queue: clean(res.Queue), Unassigned: res.Unassigned, Class: v.Class},
		"left": res.Left, "unscheduled": res.Unscheduled})
}

func (s *server) apiPlanQueueNow(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleOperator) {
		return
	}
	id := r.PathValue("id")
	q, err := s.queuePlanNow(r, id)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"plan": clean(id), "queued": q})
}

func (s *server) apiScheduleQueueNow(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleOperator) {
		return
	}
	name := r.PathValue("name")
	q, err := s.queueScheduleNow(r, name)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedule": clean(name), "queued": q})
}
