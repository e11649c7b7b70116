package web

import (
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/plan"
)

type delayedPageData struct {
	Filter delayedFilter
	Query  template.URL
	// Counts is nil when a filter is given (counting reads every item) or
	// when there are more than delayedCountMax due times; DueTimes is then
	// their number (without a filter).
	Counts   *delayed.Counts
	DueTimes int64
	Items    []delayedView
	Pager    pager
}

// delayedCountMax is the most due times the delayed page reads the lengths
// of (one pipelined round trip) to count the items.
const delayedCountMax = 1000

func (s *server) delayedPage(w http.ResponseWriter, r *http.Request) {
	f := delayedFilterOf(r)
	pg := s.pager(r)
	d := delayedPageData{Filter: f, Query: template.URL(f.query()), Pager: pg}
	// without a filter the count reads bucket lengths only, and only while
	// they are few (beyond, the due times alone); with one it reads every
	// item, which the preview of a removal does
	if f.Empty() {
		due, err := s.c.DelayedDueTimes(r.Context())
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		d.DueTimes = due
		if due <= delayedCountMax {
			n, err := s.c.DelayedCount(r.Context(), f.filter())
			if err != nil {
				s.failErr(w, r, err)
				return
			}
			d.Counts = &n
		}
	}
	items, err := s.c.DelayedJobs(r.Context(), f.filter(), pg.offset(), pg.Size+1)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if len(items) > pg.Size {
		items, d.Pager.Next = items[:pg.Size], pg.Page+1
	}
	for _, it := range items {
		d.Items = append(d.Items, newDelayedView(it))
	}
	s.render(w, r, http.StatusOK, "delayed", "Delayed", "delayed", d)
}

func (s *server) delayedRemoveOneForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleOperator) {
		return
	}
	at, err := strconv.ParseInt(r.Form.Get("at"), 10, 64)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "at: want the bucket's Unix time")
		return
	}
	v, _, err := s.removeDelayedOne(r, at, r.Form.Get("digest"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.done(w, r, "delayed", s.tf(r, "Removed the delayed %s job of queue %s due %s.", v.Class, v.Queue, v.At.Format("2006-01-02 15:04:05 UTC")))
}

type delayedBulkData struct {
	Filter  delayedFilter
	Query   template.URL
	Count   int64
	Sample  []delayedView
	Allowed bool
}

func (s *server) delayedBulkPreview(w http.ResponseWriter, r *http.Request) {
	f := delayedFilterOf(r)
	n, err := s.c.DelayedCount(r.Context(), f.filter())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	sample, err := s.c.DelayedJobs(r.Context(), f.filter(), 0, 10)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	d := delayedBulkData{Filter: f, Query: template.URL(f.query()), Count: n.Items, Allowed: whoOf(r).Role >= RoleAdmin}
	for _, it := range sample {
		d.Sample = append(d.Sample, newDelayedView(it))
	}
	s.render(w, r, http.StatusOK, "delayedbulk", "Remove delayed jobs", "delayed", d)
}

func (s *server) delayedBulkForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleAdmin) {
		return
	}
	previewed, _ := strconv.ParseInt(r.Form.Get("previewed"), 10, 64)
	f := delayedFilterOf(r)
	res, err := s.removeDelayedWhere(r, f, previewed)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	filter := f.String()
	if f.Empty() {
		filter = s.tf(r, "every delayed item")
	}
	s.done(w, r, "delayed", s.tf(r, "Removed %s (%s; the preview showed %d).",
		s.count(r, res.Removed, "1 delayed item", "%d delayed items"), filter, previewed))
}

func (s *server) plansPage(w http.ResponseWriter, r *http.Request) {
	ps, err := s.c.Plans(r.Context())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	out := make([]planView, len(ps))
	for i, p := range ps {
		out[i] = newPlanView(p)
	}
	s.render(w, r, http.StatusOK, "plans", "Plans", "plans", out)
}

// plan reads plan id with its next slots; 404 when there is none.
func (s *server) plan(r *http.Request, id string) (planView, error) {
	p, err := s.c.Plan(r.Context(), id)
	if errors.Is(err, client.ErrNoSuchPlan) {
		return planView{}, statusErr(http.StatusNotFound, "no plan %q", clip(id, 200))
	}
	if err != nil {
		return planView{}, err
	}
	v := newPlanView(p)
	var x *plan.Exclusion
	if p.Calendar != "" {
		cals, err := s.c.Calendars(r.Context())
		if err != nil {
			return planView{}, err
		}
		for _, c := range cals {
			if c.Name == p.Calendar {
				// a calendar that cannot be compiled: the slots are
				// shown without its exclusions
				x, _ = c.Compile()
			}
		}
	}
	v.Upcoming = upcoming(p, x, 10)
	return v, nil
}

func (s *server) planPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.plan(r, r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "plan", titled("Plan %s", v.ID), "plans", v)
}

func (s *server) planForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleOperator) {
		return
	}
	id, op := r.PathValue("id"), r.PathValue("op")
	changed, err := s.planAction(r, id, op)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	msg := s.tf(r, map[string]string{"pause": "Paused plan %s.", "resume": "Resumed plan %s.", "remove": "Removed plan %s."}[op], id)
	if !changed {
		msg = s.tf(r, map[string]string{"pause": "Plan %s was paused already; nothing was done.",
			"resume": "Plan %s was not paused already; nothing was done."}[op], id)
	}
	back := "plans/" + pathEscape(id)
	if op == "remove" {
		back = "plans"
	}
	s.done(w, r, back, msg)
}

func (s *server) schedulesPage(w http.ResponseWriter, r *http.Request) {
	o, err := s.c.Schedules(r.Context(), client.ScheduleQuery{})
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "schedules", "Schedules", "schedules", newSchedulesView(o))
}

func (s *server) uniquePage(w http.ResponseWriter, r *http.Request) {
	ins, err := s.c.UniqueIDs(r.Context())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	out := make([]uniqueView, len(ins))
	for i, in := range ins {
		out[i] = newUniqueView(in)
	}
	s.render(w, r, http.StatusOK, "unique", "Unique ids", "unique", out)
}

func (s *server) uniqueClearForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleAdmin) {
		return
	}
	uid := r.Form.Get("uid")
	res, err := s.clearUnique(r, uid)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	var msg string
	switch string(res) {
	case "absent":
		msg = s.tf(r, "Unique id %s had no state; nothing was done.", uid)
	case "cleared":
		msg = s.tf(r, "Cleared unique id %s.", uid)
	case "released":
		msg = s.tf(r, "Cleared unique id %s and released its parked job.", uid)
	default:
		msg = s.tf(r, "Unique id %s: %s.", uid, string(res))
	}
	s.done(w, r, "unique", strings.TrimSpace(msg))
}

// The API.

func (s *server) apiDelayed(w http.ResponseWriter, r *http.Request) {
	off, limit, err := s.offsetLimit(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	f := delayedFilterOf(r)
	items, err := s.c.DelayedJobs(r.Context(), f.filter(), off, limit)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	out := make([]delayedView, len(items))
	for i, it := range items {
		out[i] = newDelayedView(it)
	}
	writeJSON(w, http.StatusOK, map[string]any{"filter": f, "offset": off, "limit": limit, "items": out})
}

func (s *server) apiDelayedCount(w http.ResponseWriter, r *http.Request) {
	f := delayedFilterOf(r)
	n, err := s.c.DelayedCount(r.Context(), f.filter())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"filter": f, "count": n.Items, "buckets": n.Buckets})
}

func (s *server) apiDelayedRemoveOne(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleOperator) {
		return
	}
	var body struct {
		At     *int64 `json:"at_unix"`
		Digest string `json:"digest"`
	}
	if err := jsonBody(w, r, &body); err != nil {
		s.failErr(w, r, err)
		return
	}
	if body.At == nil {
		s.fail(w, r, http.StatusBadRequest, "at_unix is required")
		return
	}
	v, res, err := s.removeDelayedOne(r, *body.At, body.Digest)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"item": v, "removed": res.Removed, "unindexed": res.Unindexed, "unscheduled": res.Unscheduled})
}

func (s *server) apiDelayedRemoveAll(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleAdmin) {
		return
	}
	var body struct {
		delayedFilter
		// Expect, when set, is the count a preview showed: refused (409)
		// when the filter now selects another number.
		Expect *int64 `json:"expect"`
	}
	if err := jsonBody(w, r, &body); err != nil {
		s.failErr(w, r, err)
		return
	}
	previewed, ok := s.expected(w, r, body.Expect, "items", func() (int64, error) {
		n, err := s.c.DelayedCount(r.Context(), body.filter())
		return n.Items, err
	})
	if !ok {
		return
	}
	res, err := s.removeDelayedWhere(r, body.delayedFilter, previewed)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *server) apiPlans(w http.ResponseWriter, r *http.Request) {
	ps, err := s.c.Plans(r.Context())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	out := make([]planView, len(ps))
	for i, p := range ps {
		out[i] = newPlanView(p)
	}
	writeJSON(w, http.StatusOK, map[string]any{"plans": out})
}

func (s *server) apiPlan(w http.ResponseWriter, r *http.Request) {
	v, err := s.plan(r, r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *server) apiPlanAction(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleOperator) {
		return
	}
	id, op := r.PathValue("id"), r.PathValue("op")
	changed, err := s.planAction(r, id, op)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"action": op, "plan": clean(id), "changed": changed})
}

func (s *server) apiSchedules(w http.ResponseWriter, r *http.Request) {
	o, err := s.c.Schedules(r.Context(), client.ScheduleQuery{})
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newSchedulesView(o))
}

func (s *server) apiUnique(w http.ResponseWriter, r *http.Request) {
	ins, err := s.c.UniqueIDs(r.Context())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	out := make([]uniqueView, len(ins))
	for i, in := range ins {
		out[i] = newUniqueView(in)
	}
	writeJSON(w, http.StatusOK, map[string]any{"unique_ids": out})
}

func (s *server) apiUniqueOne(w http.ResponseWriter, r *http.Request) {
	in, err := s.c.UniqueID(r.Context(), r.PathValue("uid"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newUniqueView(in))
}

func (s *server) apiUniqueClear(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleAdmin) {
		return
	}
	uid := r.PathValue("uid")
	res, err := s.clearUnique(r, uid)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"uid": clean(uid), "result": string(res)})
}
