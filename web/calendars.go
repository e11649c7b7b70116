package web

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/plan"
)

// The Calendars page: plan calendars, the dates and cron lines each
// excludes, the plans that name each, and removal of an unused one.

type calendarView struct {
	Name     string   `json:"name"`
	Timezone string   `json:"timezone"`
	Dates    []string `json:"dates"`
	Cron     []string `json:"cron"`
	// Plans are the ids of the plans naming the calendar.
	Plans []string `json:"plans"`
	// Problem says why the calendar cannot be used as stored (JSON that
	// cannot be read, a bad cron line or zone): plans naming it fire as
	// if it excluded nothing.
	Problem string `json:"problem,omitempty"`
}

func newCalendarView(c plan.Calendar, plans []plan.Plan) calendarView {
	v := calendarView{Name: clean(c.Name), Timezone: clean(c.Timezone), Dates: cleanAll(c.Dates), Cron: cleanAll(c.Cron), Plans: []string{}}
	if v.Timezone == "" {
		v.Timezone = "UTC"
	}
	if _, err := c.Compile(); err != nil {
		v.Problem = clean(err.Error())
	}
	for _, p := range plans {
		if p.Calendar == c.Name {
			v.Plans = append(v.Plans, clean(p.ID))
		}
	}
	slices.Sort(v.Plans)
	return v
}

func cleanAll(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = clean(s)
	}
	return out
}

// calendarsData is the list; Problem says why it cannot be read (the
// calendars' key holds another type).
type calendarsData struct {
	Calendars []calendarView `json:"calendars"`
	Problem   string         `json:"problem,omitempty"`
}

// wrongType reports whether err is Redis refusing a key of another type.
func wrongType(err error) bool { return err != nil && strings.Contains(err.Error(), "WRONGTYPE") }

func (s *server) calendars(r *http.Request) (calendarsData, error) {
	d := calendarsData{Calendars: []calendarView{}}
	cals, err := s.c.Calendars(r.Context())
	if wrongType(err) {
		d.Problem = "the calendars' key holds another type: " + clean(err.Error())
		return d, nil
	}
	if err != nil {
		return d, err
	}
	var ps []plan.Plan
	if len(cals) > 0 {
		if ps, err = s.c.Plans(r.Context()); err != nil {
			return d, err
		}
	}
	for _, c := range cals {
		d.Calendars = append(d.Calendars, newCalendarView(c, ps))
	}
	return d, nil
}

// calendar reads calendar name with the plans naming it; 404 when there is
// none. A calendar stored as JSON that cannot be read is shown with the
// reason.
func (s *server) calendar(r *http.Request, name string) (calendarView, error) {
	c, err := s.c.Calendar(r.Context(), name)
	problem := ""
	switch {
	case errors.Is(err, client.ErrNoSuchCalendar):
		return calendarView{}, statusErr(http.StatusNotFound, "no calendar %q", clip(name, 200))
	case wrongType(err):
		return calendarView{}, statusErr(http.StatusNotFound, "no calendar %q: the calendars' key holds another type", clip(name, 200))
	case err != nil && c.Name == name && name != "":
		problem = err.Error()
	case err != nil:
		return calendarView{}, err
	}
	ps, err := s.c.Plans(r.Context())
	if err != nil {
		return calendarView{}, err
	}
	v := newCalendarView(c, ps)
	if problem != "" {
		v.Problem = clean(problem)
	}
	return v, nil
}

// removeCalendar removes calendar name; refused (409) while plans name it.
func (s *server) removeCalendar(r *http.Request, name string) error {
	err := s.c.RemoveCalendar(r.Context(), name)
	switch {
	case errors.Is(err, client.ErrNoSuchCalendar):
		return statusErr(http.StatusNotFound, "no calendar %q", clip(name, 200))
	case errors.Is(err, client.ErrInvalid):
		return statusErr(http.StatusConflict, "%s", strings.TrimPrefix(err.Error(), "client: "))
	case err != nil:
		return err
	}
	return s.audit(r, "calendar.remove", "calendar "+name, 1, "")
}

// calendarInput is a calendar to add, as the form and the API give it.
type calendarInput struct {
	Name     string   `json:"name"`
	Dates    []string `json:"dates"`
	Cron     []string `json:"cron"`
	Timezone string   `json:"timezone"`
	Replace  bool     `json:"replace"`
}

// addCalendar stores in (calendar add): 400 when it is not a valid
// calendar, 409 when the name is taken and Replace is not set.
func (s *server) addCalendar(r *http.Request, in calendarInput) error {
	cal := plan.Calendar{Name: strings.TrimSpace(in.Name), Dates: in.Dates, Cron: in.Cron, Timezone: strings.TrimSpace(in.Timezone)}
	err := s.c.AddCalendar(r.Context(), cal, in.Replace)
	switch {
	case errors.Is(err, client.ErrCalendarExists):
		return statusErr(http.StatusConflict, "a calendar named %q exists: tick Replace to replace it", clip(cal.Name, 200))
	case errors.Is(err, client.ErrInvalid):
		return statusErr(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), "client: "))
	case err != nil:
		return err
	}
	what := "add"
	if in.Replace {
		what = "replace"
	}
	return s.audit(r, "calendar."+what, "calendar "+cal.Name, 1, "")
}

// formLines splits a form field into its non-empty lines; with commas,
// also at commas (dates; a cron line keeps its commas).
func formLines(v string, commas bool) []string {
	var out []string
	for _, l := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' || (commas && (r == ',' || r == ' ' || r == '\t')) }) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (s *server) calendarAddForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleAdmin) {
		return
	}
	in := calendarInput{Name: r.Form.Get("name"), Dates: formLines(r.Form.Get("dates"), true),
		Cron: formLines(r.Form.Get("cron"), false), Timezone: r.Form.Get("timezone"), Replace: r.Form.Get("replace") != ""}
	if err := s.addCalendar(r, in); err != nil {
		s.failErr(w, r, err)
		return
	}
	s.done(w, r, "calendars/"+pathEscape(strings.TrimSpace(in.Name)), s.tf(r, "Saved calendar %s.", strings.TrimSpace(in.Name)))
}

func (s *server) apiCalendarAdd(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleAdmin) {
		return
	}
	var in calendarInput
	if err := jsonBody(w, r, &in); err != nil {
		s.failErr(w, r, err)
		return
	}
	if err := s.addCalendar(r, in); err != nil {
		s.failErr(w, r, err)
		return
	}
	v, err := s.calendar(r, strings.TrimSpace(in.Name))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *server) calendarsPage(w http.ResponseWriter, r *http.Request) {
	d, err := s.calendars(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "calendars", "Calendars", "calendars", d)
}

func (s *server) calendarPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.calendar(r, r.PathValue("name"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "calendar", titled("Calendar %s", v.Name), "calendars", v)
}

func (s *server) calendarRemoveForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleAdmin) {
		return
	}
	name := r.PathValue("name")
	if err := s.removeCalendar(r, name); err != nil {
		s.failErr(w, r, err)
		return
	}
	s.done(w, r, "calendars", s.tf(r, "Removed calendar %s.", name))
}

func (s *server) apiCalendars(w http.ResponseWriter, r *http.Request) {
	d, err := s.calendars(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *server) apiCalendar(w http.ResponseWriter, r *http.Request) {
	v, err := s.calendar(r, r.PathValue("name"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *server) apiCalendarRemove(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleAdmin) {
		return
	}
	name := r.PathValue("name")
	if err := s.removeCalendar(r, name); err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"calendar": clean(name), "removed": true})
}
