package web

import (
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

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
	// Scan is set with a filter: what the page read.
	Scan *delayedScanView
}

// A filtered delayed page reads at most delayedScanDue due times and
// delayedScanItems items from ?from= (a due time, Unix seconds) and
// ?pos= (an item of its bucket) on, and shows the matches among them: a
// rare match costs several pages, not one request reading every bucket.
const (
	delayedScanDue   = 1000
	delayedScanItems = 10_000
)

// delayedScanView says what a filtered delayed page read, and where the
// next one starts (NextFrom, NextPos; NextFrom "" at the end).
type delayedScanView struct {
	DueTimes, Read    int
	First, Last       string
	MaxDue, MaxItems  int
	NextFrom, NextPos string
	NextAt            string
	Started           bool // the page did not start at the beginning
}

// delayedCursorOf reads ?from= and ?pos=.
func delayedCursorOf(r *http.Request) client.DelayedCursor {
	var c client.DelayedCursor
	q := r.URL.Query()
	if ts, err := strconv.ParseInt(q.Get("from"), 10, 64); err == nil && ts > 0 {
		c.At = time.Unix(ts, 0).UTC()
	}
	if pos, err := strconv.Atoi(q.Get("pos")); err == nil && pos > 0 {
		c.Pos = pos
	}
	return c
}

func newDelayedScanView(st client.DelayedStep, from client.DelayedCursor) *delayedScanView {
	v := &delayedScanView{DueTimes: st.DueTimes, Read: st.Read, MaxDue: delayedScanDue, MaxItems: delayedScanItems,
		Started: !from.At.IsZero() || from.Pos > 0}
	if st.DueTimes > 0 {
		v.First, v.Last = st.First.Format(time.DateTime+" UTC"), st.Last.Format(time.DateTime+" UTC")
	}
	if st.Next != nil {
		v.NextFrom, v.NextPos = strconv.FormatInt(st.Next.At.Unix(), 10), strconv.Itoa(st.Next.Pos)
		v.NextAt = st.Next.At.Format(time.DateTime + " UTC")
	}
	return v
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
	if !f.Empty() {
		from := delayedCursorOf(r)
		st, err := s.c.DelayedScanStep(r.Context(), f.filter(), from, delayedScanDue, delayedScanItems, pg.Size)
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		d.Scan = newDelayedScanView(st, from)
		for _, it := range st.Items {
			d.Items = append(d.Items, newDelayedView(it))
		}
		s.render(w, r, http.StatusOK, "delayed", "Delayed", "delayed", d)
		return
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

// delayedItemForm checks the operator's form naming one delayed item (at,
// the bucket's Unix time; digest) and reads it; it answers the request
// itself when not.
func (s *server) delayedItemForm(w http.ResponseWriter, r *http.Request) (at int64, digest string, ok bool) {
	if !s.mayPost(w, r, RoleOperator) {
		return 0, "", false
	}
	at, err := strconv.ParseInt(r.Form.Get("at"), 10, 64)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "at: want the bucket's Unix time")
		return 0, "", false
	}
	return at, r.Form.Get("digest"), true
}

func (s *server) delayedRemoveOneForm(w http.ResponseWriter, r *http.Request) {
	at, digest, ok := s.delayedItemForm(w, r)
	if !ok {
		return
	}
	v, _, err := s.removeDelayedOne(r, at, digest)
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

// A page of plans reads at most planSlotsPage slots of the schedule (and
// as many paused plans); ?scan= pages through every plan key instead,
// keyScanCalls SCAN calls of COUNT keyScanCount a page, as the unique ids
// page does: a bounded part of the keyspace per request.
const (
	planSlotsPage = 200
	keyScanCalls  = 20
	keyScanCount  = 500
)

type plansPageData struct {
	Plans []planView
	// Scan: the page walks the keyspace (?scan=); else the schedule
	// (?from=). Next is the next page's cursor ("" at the end).
	Scan     bool
	Next     string
	Started  bool
	Paused   int64
	MaxSlots int
	// PausedCut: more plans are paused than a page shows.
	PausedCut bool
	Keys      int // the keys one page's SCAN calls look at, about
}

// readPlans reads the page of plans r asks for.
func (s *server) readPlans(r *http.Request) (plansPageData, error) {
	q := r.URL.Query()
	d := plansPageData{MaxSlots: planSlotsPage, Keys: keyScanCalls * keyScanCount}
	var pg client.PlanPage
	var err error
	if q.Has("scan") {
		cur := q.Get("scan")
		d.Scan, d.Started = true, cur != "" && cur != "0"
		pg, err = s.c.PlansScan(r.Context(), cur, keyScanCalls, keyScanCount)
	} else {
		d.Started = q.Get("from") != ""
		pg, err = s.c.PlansScheduled(r.Context(), q.Get("from"), planSlotsPage)
	}
	if err != nil {
		return d, err
	}
	d.Next, d.Paused, d.PausedCut = pg.Next, pg.Paused, pg.Paused > planSlotsPage
	d.Plans = make([]planView, len(pg.Plans))
	for i, p := range pg.Plans {
		d.Plans[i] = newPlanView(p)
	}
	return d, nil
}

func (s *server) plansPage(w http.ResponseWriter, r *http.Request) {
	d, err := s.readPlans(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "plans", "Plans", "plans", d)
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

type uniquePageData struct {
	IDs     []uniqueView
	Next    string // the next page's cursor; "" at the end of the keyspace
	Started bool
	Keys    int // the keys one page's SCAN calls look at, about
}

// readUnique reads the uids that keyScanCalls SCAN calls from ?cursor= on
// find: the state keys have no index (PHP's resque-v3 writes them with
// SETNX alone), so the page walks a bounded part of the keyspace.
func (s *server) readUnique(r *http.Request) (uniquePageData, error) {
	cur := r.URL.Query().Get("cursor")
	ins, next, err := s.c.UniqueIDsScan(r.Context(), cur, keyScanCalls, keyScanCount)
	if err != nil {
		return uniquePageData{}, err
	}
	d := uniquePageData{IDs: make([]uniqueView, len(ins)), Next: next, Started: cur != "" && cur != "0", Keys: keyScanCalls * keyScanCount}
	for i, in := range ins {
		d.IDs[i] = newUniqueView(in)
	}
	return d, nil
}

func (s *server) uniquePage(w http.ResponseWriter, r *http.Request) {
	d, err := s.readUnique(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "unique", "Unique ids", "unique", d)
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
	if q := r.URL.Query(); q.Has("from") || q.Has("pos") {
		// one bounded step, as the page reads it
		st, err := s.c.DelayedScanStep(r.Context(), f.filter(), delayedCursorOf(r), delayedScanDue, delayedScanItems, limit)
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		out := make([]delayedView, len(st.Items))
		for i, it := range st.Items {
			out[i] = newDelayedView(it)
		}
		var next any
		if st.Next != nil {
			next = map[string]int64{"from": st.Next.At.Unix(), "pos": int64(st.Next.Pos)}
		}
		writeJSON(w, http.StatusOK, map[string]any{"filter": f, "limit": limit, "items": out, "due_times_read": st.DueTimes,
			"items_read": st.Read, "next": next})
		return
	}
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

// delayedItemBody reads the body naming one delayed item, {"at_unix",
// "digest"}; it answers the request itself when the body is bad.
func (s *server) delayedItemBody(w http.ResponseWriter, r *http.Request) (at int64, digest string, ok bool) {
	var body struct {
		At     *int64 `json:"at_unix"`
		Digest string `json:"digest"`
	}
	if err := jsonBody(w, r, &body); err != nil {
		s.failErr(w, r, err)
		return 0, "", false
	}
	if body.At == nil {
		s.fail(w, r, http.StatusBadRequest, "at_unix is required")
		return 0, "", false
	}
	return *body.At, body.Digest, true
}

func (s *server) apiDelayedRemoveOne(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleOperator) {
		return
	}
	at, digest, ok := s.delayedItemBody(w, r)
	if !ok {
		return
	}
	v, res, err := s.removeDelayedOne(r, at, digest)
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
	d, err := s.readPlans(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	var next any
	if d.Next != "" {
		next = d.Next
	}
	writeJSON(w, http.StatusOK, map[string]any{"plans": d.Plans, "next": next, "scan": d.Scan})
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
	d, err := s.readUnique(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	var next any
	if d.Next != "" {
		next = d.Next
	}
	writeJSON(w, http.StatusOK, map[string]any{"unique_ids": d.IDs, "next": next})
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
