package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/plan"
)

// Adding a plan from the Plans page or the API, as resque-go plan add
// does.

// planInput is a plan to add, as the form and the API give it: one of
// Every (a Go duration of whole seconds: 90s, 5m), Period (ISO 8601) and
// Cron; Start is RFC 3339 or Unix seconds.
type planInput struct {
	ID       string `json:"id"`
	Queue    string `json:"queue"`
	Class    string `json:"class"`
	Args     string `json:"args"`
	Every    string `json:"every"`
	Period   string `json:"period"`
	Cron     string `json:"cron"`
	Timezone string `json:"timezone"`
	Start    string `json:"start"`
	Misfire  string `json:"misfire"`
	Calendar string `json:"exclude_calendar"`
	Group    string `json:"group"`
}

// plan is in as a plan.Plan; 400 for what plan add refuses as usage.
func (in planInput) plan() (plan.Plan, error) {
	t := strings.TrimSpace
	p := plan.Plan{ID: t(in.ID), Queue: t(in.Queue), Class: t(in.Class), Args: []byte(t(in.Args)), Period: t(in.Period),
		Cron: t(in.Cron), Timezone: t(in.Timezone), Misfire: plan.Misfire(t(in.Misfire)), Calendar: t(in.Calendar), Group: t(in.Group)}
	n := 0
	for _, v := range []string{in.Every, p.Period, p.Cron} {
		if t(v) != "" {
			n++
		}
	}
	if n != 1 {
		return p, statusErr(http.StatusBadRequest, "a plan needs one of every, period or cron")
	}
	if e := t(in.Every); e != "" {
		d, err := time.ParseDuration(e)
		if err != nil || d < time.Second || d%time.Second != 0 {
			return p, statusErr(http.StatusBadRequest, "every %q: want whole seconds, at least 1s, such as 90s, 5m or 2h", clip(e, 100))
		}
		p.Every = d
	}
	if s := t(in.Start); s != "" {
		if secs, err := strconv.ParseInt(s, 10, 64); err == nil {
			p.Start = time.Unix(secs, 0)
		} else if p.Start, err = time.Parse(time.RFC3339, s); err != nil {
			return p, statusErr(http.StatusBadRequest, "start %q: want RFC 3339 (2026-12-01T08:00:00Z) or Unix seconds", clip(s, 100))
		}
	}
	return p, nil
}

// addPlan stores in and returns its id: 400 when it is not a valid plan,
// 409 when its id is taken.
func (s *server) addPlan(r *http.Request, in planInput) (string, error) {
	p, err := in.plan()
	if err != nil {
		return "", err
	}
	id, err := s.c.AddPlan(r.Context(), p)
	switch {
	case errors.Is(err, client.ErrPlanExists):
		return "", statusErr(http.StatusConflict, "a plan with id %q exists", clip(p.ID, 200))
	case errors.Is(err, client.ErrInvalid):
		return "", statusErr(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), "client: "))
	case err != nil:
		return "", err
	}
	return id, s.audit(r, "plan.add", "plan "+id+" of "+p.Class+" on "+p.Queue, 1, "")
}

func (s *server) planAddForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleOperator) {
		return
	}
	f := r.Form.Get
	in := planInput{ID: f("id"), Queue: f("queue"), Class: f("class"), Args: f("args"), Timezone: f("timezone"),
		Start: f("start"), Misfire: f("misfire"), Calendar: f("exclude_calendar"), Group: f("group")}
	switch v := f("value"); f("recurrence") {
	case "every":
		in.Every = v
	case "period":
		in.Period = v
	case "cron":
		in.Cron = v
	default:
		s.failErr(w, r, statusErr(http.StatusBadRequest, "recurrence %q: want every, period or cron", clip(f("recurrence"), 50)))
		return
	}
	id, err := s.addPlan(r, in)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.done(w, r, "plans/"+pathEscape(id), s.tf(r, "Added plan %s.", id))
}

func (s *server) apiPlanAdd(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleOperator) {
		return
	}
	var in planInput
	if err := jsonBody(w, r, &in); err != nil {
		s.failErr(w, r, err)
		return
	}
	id, err := s.addPlan(r, in)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	v, err := s.plan(r, id)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
