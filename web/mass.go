package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/massqueue"
)

// The Mass queues page: static and batch pools with their units, the
// sources with their weight, limit and pause, the allocation failures, and
// what `resque-go mass` does to them: pause, resume, weight, limit,
// reallocate.

type massSourceView struct {
	Source string `json:"source"`
	Weight int    `json:"weight"`
	// Limit is 0 without a cap.
	Limit  int  `json:"limit"`
	Paused bool `json:"paused"`
	// Waiting are its static jobs queued in every static pool; Batches its
	// active and backlogged batches in every batch pool.
	Waiting int64 `json:"waiting"`
	Batches int   `json:"batches"`
}

type massFailureView struct {
	Kind   string     `json:"kind"`
	ID     string     `json:"id"`
	Source string     `json:"source,omitempty"`
	Job    string     `json:"job,omitempty"`
	Reason string     `json:"reason,omitempty"`
	At     *time.Time `json:"at"`
}

type massView struct {
	Status   massqueue.Status  `json:"status"`
	Sources  []massSourceView  `json:"sources"`
	Failures []massFailureView `json:"failures"`
}

func (s *server) mass(r *http.Request) (massView, error) {
	pools, err := s.live.pools.read(r.Context(), s.c, s.now())
	if err != nil {
		return massView{}, err
	}
	st, err := s.c.MassStatusOf(r.Context(), pools, nil, 0)
	if err != nil {
		return massView{}, err
	}
	set, err := s.c.MassSettings(r.Context())
	if err != nil {
		return massView{}, err
	}
	fs, err := s.c.MassFailures(r.Context())
	if err != nil {
		return massView{}, err
	}
	v := massView{Status: cleanStatus(st), Sources: []massSourceView{}, Failures: []massFailureView{}}
	bySource := map[string]*massSourceView{}
	source := func(id string) *massSourceView {
		if m, ok := bySource[id]; ok {
			return m
		}
		m := &massSourceView{Source: clean(id), Weight: 1}
		bySource[id] = m
		return m
	}
	for _, x := range set {
		m := source(x.Source)
		m.Weight, m.Limit, m.Paused = x.Weight, x.Limit, x.Paused
	}
	for _, p := range st.Paused {
		source(p).Paused = true
	}
	for _, p := range st.Static {
		for _, w := range p.Sources {
			source(w.Source).Waiting += w.Waiting
		}
	}
	for _, p := range st.Batch {
		for _, b := range p.Sources {
			m := source(b.Source)
			m.Batches += len(b.Backlog)
			if b.Active != "" {
				m.Batches++
			}
		}
	}
	for _, m := range bySource {
		v.Sources = append(v.Sources, *m)
	}
	slices.SortFunc(v.Sources, func(a, b massSourceView) int { return strings.Compare(a.Source, b.Source) })
	for _, f := range fs {
		v.Failures = append(v.Failures, massFailureView{Kind: clean(string(f.Kind)), ID: clean(f.ID), Source: clean(f.Source),
			Job: clean(f.Job), Reason: clean(f.Reason), At: timePtr(f.At)})
	}
	return v, nil
}

// cleanStatus is st with every name valid UTF-8.
func cleanStatus(st massqueue.Status) massqueue.Status {
	st.Paused = cleanAll(st.Paused)
	for i, p := range st.Static {
		p.Pool, p.Parked = clean(p.Pool), cleanAll(p.Parked)
		p.Sources = slices.Clone(p.Sources)
		for j := range p.Sources {
			p.Sources[j].Source = clean(p.Sources[j].Source)
		}
		st.Static[i] = p
	}
	for i, p := range st.Batch {
		p.Pool = clean(p.Pool)
		p.Units = slices.Clone(p.Units)
		for j, u := range p.Units {
			u.Unit = clean(u.Unit)
			u.Batches = slices.Clone(u.Batches)
			for k := range u.Batches {
				u.Batches[k].ID = clean(u.Batches[k].ID)
			}
			p.Units[j] = u
		}
		p.Sources = slices.Clone(p.Sources)
		for j, b := range p.Sources {
			b.Source, b.Unit, b.Active, b.Backlog = clean(b.Source), clean(b.Unit), clean(b.Active), cleanAll(b.Backlog)
			p.Sources[j] = b
		}
		st.Batch[i] = p
	}
	if st.Paused == nil {
		st.Paused = []string{}
	}
	return st
}

// massAction is one of pause, resume, weight, limit on a source, or
// reallocate (id, or every failure with all).
type massAction struct {
	Source string `json:"source"`
	Weight *int   `json:"weight,omitempty"`
	Limit  *int   `json:"limit,omitempty"`
	ID     string `json:"id,omitempty"`
	All    bool   `json:"all,omitempty"`
}

// massDo does op; msg says what was done.
func (s *server) massDo(r *http.Request, op string, a massAction) (result any, msg string, err error) {
	ctx := r.Context()
	if op != "reallocate" && strings.TrimSpace(a.Source) == "" {
		return nil, "", statusErr(http.StatusBadRequest, "a source is required")
	}
	target := "source " + a.Source
	var n int64 = 1
	detail := ""
	switch op {
	case "pause":
		res, err := s.c.PauseMassSource(ctx, a.Source)
		if err != nil {
			return nil, "", err
		}
		result, msg, detail = res, s.tf(r, "Paused source %s.", a.Source), fmt.Sprintf("parked %d batches", len(res.Batches))
		if res.Already {
			n, msg = 0, s.tf(r, "Source %s was paused already.", a.Source)
		}
	case "resume":
		res, err := s.c.ResumeMassSource(ctx, a.Source, massqueue.ResumeOptions{})
		if err != nil {
			return nil, "", err
		}
		result, msg, detail = res, s.tf(r, "Resumed source %s.", a.Source), fmt.Sprintf("%d batches back to work", len(res.Batches))
		if !res.WasPaused {
			n, msg = 0, s.tf(r, "Source %s was not paused.", a.Source)
		}
	case "weight":
		if a.Weight == nil {
			return nil, "", statusErr(http.StatusBadRequest, "weight is required")
		}
		if err := s.c.SetMassWeight(ctx, a.Source, *a.Weight); err != nil {
			return nil, "", err
		}
		result = map[string]any{"source": clean(a.Source), "weight": *a.Weight}
		msg, detail = s.tf(r, "Set the weight of source %s to %d.", a.Source, *a.Weight), fmt.Sprintf("weight %d", *a.Weight)
	case "limit":
		if a.Limit == nil {
			return nil, "", statusErr(http.StatusBadRequest, "limit is required")
		}
		if err := s.c.SetMassLimit(ctx, a.Source, *a.Limit); err != nil {
			return nil, "", err
		}
		result = map[string]any{"source": clean(a.Source), "limit": *a.Limit}
		msg, detail = s.tf(r, "Set the limit of source %s to %d.", a.Source, *a.Limit), fmt.Sprintf("limit %d", *a.Limit)
		if *a.Limit == 0 {
			msg = s.tf(r, "Removed the limit of source %s.", a.Source)
		}
	case "reallocate":
		if a.ID == "" && !a.All {
			return nil, "", statusErr(http.StatusBadRequest, "an allocation failure's id, or all, is required")
		}
		id := a.ID
		if a.All {
			id, target = "", "every allocation failure"
		} else {
			target = "allocation failure " + id
		}
		k, err := s.c.ReallocateMass(ctx, id)
		if err != nil {
			return nil, "", err
		}
		n, result = int64(k), map[string]any{"reallocated": k}
		msg = s.count(r, n, "Gave 1 allocation failure another try.", "Gave %d allocation failures another try.")
	default:
		return nil, "", statusErr(http.StatusNotFound, "no action %q: want pause, resume, weight, limit or reallocate", op)
	}
	return result, msg, s.audit(r, "mass."+op, target, n, detail)
}

func (s *server) massPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.mass(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "mass", "Mass queues", "mass", v)
}

func (s *server) massForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleOperator) {
		return
	}
	a := massAction{Source: r.Form.Get("source"), ID: r.Form.Get("id"), All: r.Form.Get("all") != ""}
	for _, f := range []struct {
		name string
		to   **int
	}{{"weight", &a.Weight}, {"limit", &a.Limit}} {
		if v := strings.TrimSpace(r.Form.Get(f.name)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				s.fail(w, r, http.StatusBadRequest, f.name+": want a whole number")
				return
			}
			*f.to = &n
		}
	}
	_, msg, err := s.massDo(r, r.PathValue("op"), a)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.done(w, r, "mass", msg)
}

func (s *server) apiMass(w http.ResponseWriter, r *http.Request) {
	v, err := s.mass(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *server) apiMassAction(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleOperator) {
		return
	}
	var a massAction
	if err := jsonBody(w, r, &a); err != nil {
		s.failErr(w, r, err)
		return
	}
	op := r.PathValue("op")
	res, _, err := s.massDo(r, op, a)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"action": op, "result": res})
}
