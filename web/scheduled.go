package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/plan"
	"github.com/resque-go/resque-go/schedule"
	"github.com/resque-go/resque-go/unique"
)

// The views of the delayed queue, plans, resque-scheduler's schedules and
// unique ids. Every text from Redis is valid UTF-8 here.

type delayedView struct {
	// At is the due time, and AtUnix the bucket (delayed:<AtUnix>).
	At     time.Time `json:"at"`
	AtUnix int64     `json:"at_unix"`
	Pos    int       `json:"pos"`
	Queue  string    `json:"queue"`
	Class  string    `json:"class"`
	// Args as stored (a JSON string when they are not JSON).
	Args json.RawMessage `json:"args"`
	// Digest identifies the item by its bytes: removing one gives it
	// with at_unix.
	Digest string `json:"digest"`
	// Invalid says why the item is not a job (a mover sets it aside in
	// failed when it is due); Raw is then the item as text.
	Invalid string          `json:"invalid,omitempty"`
	Raw     json.RawMessage `json:"raw"`
	Pretty  string          `json:"-"`
}

func newDelayedView(it delayed.Item) delayedView {
	v := delayedView{At: it.At.UTC(), AtUnix: it.At.Unix(), Pos: it.Pos, Queue: clean(it.Queue), Class: clean(it.Class),
		Args: rawJSON(it.Args), Digest: digestOf(it.Raw), Raw: rawJSON(it.Raw), Pretty: pretty(it.Raw, 16<<10)}
	if it.Args == nil {
		v.Args = json.RawMessage("null")
	}
	if it.Err != nil {
		v.Invalid = clean(it.Err.Error())
	}
	return v
}

// delayedFilter is the delayed list's filter as pages and the API give it.
type delayedFilter struct {
	Queue string `json:"queue"`
	Class string `json:"class"`
}

func delayedFilterOf(r *http.Request) delayedFilter {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		q = r.Form
	}
	return delayedFilter{Queue: strings.TrimSpace(q.Get("queue")), Class: strings.TrimSpace(q.Get("class"))}
}

func (f delayedFilter) filter() delayed.Filter { return delayed.Filter{Queue: f.Queue, Class: f.Class} }

func (f delayedFilter) Empty() bool { return f == delayedFilter{} }

func (f delayedFilter) String() string {
	if f.Empty() {
		return "every delayed item"
	}
	var parts []string
	for _, p := range [][2]string{{"queue", f.Queue}, {"class", f.Class}} {
		if p[1] != "" {
			parts = append(parts, p[0]+"="+strconv.Quote(p[1]))
		}
	}
	return strings.Join(parts, " ")
}

func (f delayedFilter) query() string {
	v := url.Values{}
	if f.Queue != "" {
		v.Set("queue", f.Queue)
	}
	if f.Class != "" {
		v.Set("class", f.Class)
	}
	if len(v) == 0 {
		return ""
	}
	return "&" + v.Encode()
}

// delayedRemoval is what removing delayed items did.
type delayedRemoval struct {
	Filter    *delayedFilter `json:"filter,omitempty"`
	Previewed int64          `json:"previewed,omitempty"`
	delayed.Removal
}

// removeDelayedOne removes the item of bucket at whose bytes have digest.
func (s *server) removeDelayedOne(r *http.Request, at int64, digest string) (delayedView, delayed.Removal, error) {
	if digest == "" {
		return delayedView{}, delayed.Removal{}, statusErr(http.StatusBadRequest, "the item's digest is required")
	}
	items, err := s.c.DelayedAt(r.Context(), time.Unix(at, 0))
	if err != nil {
		return delayedView{}, delayed.Removal{}, err
	}
	for _, it := range items {
		if digestOf(it.Raw) != digest {
			continue
		}
		v := newDelayedView(it)
		res, err := s.c.RemoveDelayedItem(r.Context(), it.At, it.Raw)
		if err != nil {
			return v, res, err
		}
		if res.Removed == 0 {
			break
		}
		target := fmt.Sprintf("delayed item due %s (%s on %s)", v.At.Format(time.RFC3339), clip(v.Class, 80), clip(v.Queue, 80))
		return v, res, s.audit(r, "delayed.remove", target, res.Removed, "")
	}
	return delayedView{}, delayed.Removal{}, statusErr(http.StatusConflict, "the delayed item was promoted or removed meanwhile; nothing was done")
}

// removeDelayedWhere removes every item the filter selects; the empty
// filter clears the delayed queue.
func (s *server) removeDelayedWhere(r *http.Request, f delayedFilter, previewed int64) (delayedRemoval, error) {
	var res delayed.Removal
	var err error
	action := "delayed.remove_all"
	if f.Empty() {
		action = "delayed.clear"
		res, err = s.c.ClearDelayed(r.Context(), nil)
	} else {
		res, err = s.c.RemoveDelayed(r.Context(), f.filter(), nil)
	}
	detail := fmt.Sprintf("previewed %d", previewed)
	if err != nil {
		detail += "; stopped: " + err.Error()
	}
	if aerr := s.audit(r, action, f.String(), res.Removed, detail); aerr != nil && err == nil {
		err = aerr
	}
	return delayedRemoval{Filter: &f, Previewed: previewed, Removal: res}, err
}

type planView struct {
	ID       string          `json:"id"`
	Queue    string          `json:"queue"`
	Class    string          `json:"class"`
	Args     json.RawMessage `json:"args"`
	When     string          `json:"when"`
	Timezone string          `json:"timezone,omitempty"`
	Calendar string          `json:"calendar,omitempty"`
	Group    string          `json:"group,omitempty"`
	UniqueID string          `json:"unique_id,omitempty"`
	Misfire  string          `json:"misfire"`
	NextRun  *time.Time      `json:"next_run"`
	Paused   bool            `json:"paused"`
	// Problem says why the plan cannot be fired (a plan of broken JSON,
	// say); Raw is then the plan as stored.
	Problem string          `json:"problem,omitempty"`
	Raw     json.RawMessage `json:"raw"`
	// Upcoming are the next slots (on a plan's own page and route).
	Upcoming []time.Time `json:"upcoming,omitempty"`
}

func newPlanView(p plan.Plan) planView {
	v := planView{ID: clean(p.ID), Queue: clean(p.Queue), Class: clean(p.Class), Args: rawJSON(p.Args),
		Timezone: clean(p.Timezone), Calendar: clean(p.Calendar), Group: clean(p.Group), UniqueID: clean(p.UniqueID),
		Misfire: clean(fmt.Sprint(p.Misfire)), NextRun: timePtr(p.NextRun), Paused: p.Paused, Problem: clean(p.Problem),
		Raw: rawJSON(p.Raw)}
	if len(p.Args) == 0 {
		v.Args = json.RawMessage("[]")
	}
	switch {
	case p.Cron != "":
		v.When = "cron " + clean(p.Cron)
	case p.Period != "":
		v.When = "every " + clean(p.Period)
	case p.Every > 0:
		v.When = "every " + p.Every.String()
	}
	return v
}

type scheduleView struct {
	Name           string          `json:"name"`
	Class          string          `json:"class"`
	Queue          string          `json:"queue"`
	Args           json.RawMessage `json:"args"`
	Description    string          `json:"description,omitempty"`
	When           string          `json:"when"`
	Env            string          `json:"env,omitempty"`
	Source         string          `json:"source"`
	LastEnqueuedAt string          `json:"last_enqueued_at,omitempty"`
	LastSlot       *time.Time      `json:"last_slot"`
	Next           *time.Time      `json:"next"`
}

type schedulesView struct {
	LockKey          string                 `json:"lock_key"`
	Master           string                 `json:"master"`
	MasterTTLSeconds int64                  `json:"master_ttl_seconds"`
	Schedules        []scheduleView         `json:"schedules"`
	Errors           []schedule.BadSchedule `json:"errors"`
}

func newSchedulesView(o schedule.Overview) schedulesView {
	v := schedulesView{LockKey: clean(o.LockKey), Master: clean(o.Master), MasterTTLSeconds: int64(o.MasterTTL / time.Second),
		Schedules: []scheduleView{}, Errors: []schedule.BadSchedule{}}
	for _, in := range o.Schedules {
		v.Schedules = append(v.Schedules, scheduleView{Name: clean(in.Name), Class: clean(in.Class), Queue: clean(in.Queue),
			Args: rawJSON(in.Args), Description: clean(in.Description), When: clean(in.When()), Env: clean(in.Env),
			Source: clean(in.Source), LastEnqueuedAt: clean(in.LastEnqueuedAt), LastSlot: timePtr(in.LastSlot), Next: timePtr(in.Next)})
	}
	for _, b := range o.Errors {
		v.Errors = append(v.Errors, schedule.BadSchedule{Name: clean(b.Name), Error: clean(b.Error)})
	}
	return v
}

type uniqueView struct {
	UID   string `json:"uid"`
	State string `json:"state"`
	// Deferred is the parked job (a JSON string when it is not JSON),
	// null when none.
	Deferred json.RawMessage `json:"deferred"`
	Pretty   string          `json:"-"`
	// Problem says why the uid's keys cannot be read (another type).
	Problem string `json:"problem,omitempty"`
}

func newUniqueView(in unique.Info) uniqueView {
	v := uniqueView{UID: clean(in.UID), State: clean(in.State), Deferred: json.RawMessage("null"), Problem: clean(in.Problem)}
	if in.Deferred != nil {
		v.Deferred, v.Pretty = rawJSON(in.Deferred), pretty(in.Deferred, 16<<10)
	}
	return v
}

// clearUnique frees uid, releasing a parked job.
func (s *server) clearUnique(r *http.Request, uid string) (unique.ClearResult, error) {
	if strings.TrimSpace(uid) == "" {
		return "", statusErr(http.StatusBadRequest, "a uid is required")
	}
	res, err := s.c.ClearUnique(r.Context(), uid, "web:"+whoOf(r).Name)
	if err != nil {
		return res, err
	}
	var n int64
	if res != unique.ClearAbsent {
		n = 1
	}
	return res, s.audit(r, "unique.clear", "unique id "+uid, n, string(res))
}

// planAction pauses, resumes or removes plan id; changed is false when it
// was in that state already.
func (s *server) planAction(r *http.Request, id, op string) (changed bool, err error) {
	switch op {
	case "pause":
		changed, err = s.c.PausePlan(r.Context(), id)
	case "resume":
		changed, err = s.c.ResumePlan(r.Context(), id)
	case "remove":
		err = s.c.RemovePlan(r.Context(), id)
		changed = err == nil
	default:
		return false, statusErr(http.StatusNotFound, "no action %q: want pause, resume or remove", op)
	}
	if errors.Is(err, client.ErrNoSuchPlan) {
		return false, statusErr(http.StatusNotFound, "no plan %q", clip(id, 200))
	}
	if err != nil {
		return false, err
	}
	var n int64
	if changed {
		n = 1
	}
	return changed, s.audit(r, "plan."+op, "plan "+id, n, "")
}

// upcoming is the next n slots of p, with the exclusions of its calendar
// x (nil: none) applied; none for a plan that cannot fire.
func upcoming(p plan.Plan, x *plan.Exclusion, n int) []time.Time {
	if p.Problem != "" || p.NextRun.IsZero() {
		return nil
	}
	ts, err := plan.UpcomingExcluding(p, x, n)
	if err != nil {
		return nil
	}
	for i := range ts {
		ts[i] = ts[i].UTC()
	}
	return ts
}
