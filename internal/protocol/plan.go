package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Plan is plan:<id>: the JSON of one recurring plan (docs/protocol.md#plans). The
// id is opaque: resque-v3's PHP producers made it from microtime(true)
// ("1506092109.1235"), so it is used exactly as the schedule lists hold it.
func (k Keys) Plan(id string) string { return k.key("plan", id) }

// PlanPrefix is "<ns>:plan:", what Plan(id) puts before id.
func (k Keys) PlanPrefix() string { return k.key("plan", "") }

// PlanPattern matches every plan:<id> key (SCAN MATCH); it does not match
// plan_schedule keys.
func (k Keys) PlanPattern() string { return k.key("plan", "*") }

// ParsePlan returns the id of a plan:<id> key.
func (k Keys) ParsePlan(key string) (string, bool) {
	id, ok := strings.CutPrefix(key, k.PlanPrefix())
	return id, ok && id != ""
}

// PlanSchedule is the zset of slot times (member = score = Unix seconds).
func (k Keys) PlanSchedule() string { return k.key("plan_schedule") }

// PlanSlot is the list of plan ids due at ts (Unix seconds).
func (k Keys) PlanSlot(ts int64) string {
	return k.key("plan_schedule", strconv.FormatInt(ts, 10))
}

// Plan misfire policies (what a plan does with slots missed while no
// scheduler ran). The PHP fork fired every missed slot (catch-up).
const (
	MisfireCoalesce = "coalesce"
	MisfireCatchUp  = "catch-up"
	MisfireSkip     = "skip"
)

// Plan fields that describe the recurrence rather than the job; a fired
// job carries none of them (its "id" is replaced by a fresh job id).
// recurrenceInterval and nextRun are resque-v3's; cron, timezone, misfire
// and start are resque-go's extensions (ignored by the PHP scheduler).
var planOnlyFields = map[string]bool{
	"nextRun": true, "recurrenceInterval": true,
	"cron": true, "timezone": true, "misfire": true, "start": true,
	"calendar": true, "group": true,
}

// PlanCalendars is resque-go's hash of plan calendars: name -> the
// calendar's JSON (dates and cron lines whose instants no plan naming it
// fires at). The PHP scheduler does not read it.
func (k Keys) PlanCalendars() string { return k.key("resque-go", "plan_calendars") }

// PausedPlans is resque-go's zset of paused plans: member = plan id, score
// = the slot (Unix seconds) the plan is filed in again when resumed. A
// paused plan's id is in no plan_schedule:<ts> list, so no scheduler (nor
// the PHP one) fires it.
func (k Keys) PausedPlans() string { return k.key("resque-go", "plans_paused") }

// PausedPlanGroups is resque-go's set of paused plan groups: a plan added
// to one of them starts paused.
func (k Keys) PausedPlanGroups() string { return k.key("resque-go", "plan_groups_paused") }

// Period is an ISO 8601 duration as PHP's DateInterval reads and writes it
// (years, months, days, hours, minutes, seconds; no fractions, no signs).
type Period struct {
	Years, Months, Days, Hours, Minutes, Seconds int
}

var periodRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)
})

// ParsePeriod reads an ISO 8601 duration: the long form resque-v3 writes
// (P0Y0M0DT0H5M0S) or any short one DateInterval accepts (P1M, PT5M, P1D,
// P2W, P1DT12H). A period of zero length is an error.
func ParsePeriod(s string) (Period, error) {
	m := periodRE().FindStringSubmatch(s)
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		return Period{}, fmt.Errorf("period %q: want ISO 8601 P[nY][nM][nW][nD][T[nH][nM][nS]], e.g. P1M, PT5M, P1D or P0Y0M0DT0H5M0S", s)
	}
	n := make([]int, 7)
	for i, v := range m[1:] {
		if v == "" {
			continue
		}
		x, err := strconv.Atoi(v)
		if err != nil || x > 1_000_000 {
			return Period{}, fmt.Errorf("period %q: %q is too large", s, v)
		}
		n[i] = x
	}
	p := Period{Years: n[0], Months: n[1], Days: n[2]*7 + n[3], Hours: n[4], Minutes: n[5], Seconds: n[6]}
	if p.Days > 1_000_000 {
		// weeks are stored as days (String), which must read back
		return Period{}, fmt.Errorf("period %q: %d days is too large", s, p.Days)
	}
	if p == (Period{}) {
		return Period{}, fmt.Errorf("period %q is zero", s)
	}
	return p, nil
}

// PeriodOf turns a duration of whole seconds into a Period of hours,
// minutes and seconds (90m is PT1H30M).
func PeriodOf(d time.Duration) (Period, error) {
	if d < time.Second || d%time.Second != 0 {
		return Period{}, fmt.Errorf("interval %s: want whole seconds, at least 1s", d)
	}
	s := int(d / time.Second)
	return Period{Hours: s / 3600, Minutes: s / 60 % 60, Seconds: s % 60}, nil
}

// String is the form resque-v3 writes: DateInterval::format with
// 'P%yY%mM%dDT%hH%iM%sS'.
func (p Period) String() string {
	return fmt.Sprintf("P%dY%dM%dDT%dH%dM%dS", p.Years, p.Months, p.Days, p.Hours, p.Minutes, p.Seconds)
}

// Calendar reports whether the period has a date part (years, months or
// days), which follows the calendar rather than elapsed time.
func (p Period) Calendar() bool { return p.Years != 0 || p.Months != 0 || p.Days != 0 }

// Clock is the period's time part as elapsed time.
func (p Period) Clock() time.Duration {
	return time.Duration(p.Hours)*time.Hour + time.Duration(p.Minutes)*time.Minute + time.Duration(p.Seconds)*time.Second
}

// PlanRecord is a read-only view of a plan:<id> value.
type PlanRecord struct {
	Raw []byte
	// ID is the "id" field as text (a number is kept as its literal); the
	// key and the schedule lists are what identify a plan.
	ID    string
	Class string
	Queue string
	Args  json.RawMessage
	// NextRun is the slot the plan is due at (Unix seconds).
	NextRun            int64
	RecurrenceInterval string
	Cron               string
	Timezone           string
	Misfire            string
	// Start (resque-go) is the slot every/period recurrences count from.
	Start    int64
	HasStart bool
	// Calendar and Group (resque-go): the calendar whose instants the
	// plan does not fire at, the group it is paused and resumed with.
	Calendar string
	Group    string
	Fields   map[string]json.RawMessage
}

// DecodePlan reads a plan:<id> value written by resque-go or resque-v3.
func DecodePlan(raw []byte) (PlanRecord, error) {
	r := PlanRecord{Raw: raw}
	if err := json.Unmarshal(raw, &r.Fields); err != nil || r.Fields == nil {
		return r, fmt.Errorf("%w: plan is not a JSON object: %s", ErrBadPayload, excerpt(raw))
	}
	str := func(name string) (string, error) {
		v, ok := r.Fields[name]
		if !ok || string(v) == "null" {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", fmt.Errorf("%w: plan %q is not a string", ErrBadPayload, name)
		}
		return s, nil
	}
	var err error
	for _, f := range []struct {
		name string
		to   *string
	}{{"class", &r.Class}, {"queue", &r.Queue}, {"recurrenceInterval", &r.RecurrenceInterval},
		{"cron", &r.Cron}, {"timezone", &r.Timezone}, {"misfire", &r.Misfire},
		{"calendar", &r.Calendar}, {"group", &r.Group}} {
		if *f.to, err = str(f.name); err != nil {
			return r, err
		}
	}
	r.ID = optString(r.Fields["id"])
	r.Args = r.Fields["args"]
	if v, ok := r.Fields["nextRun"]; ok {
		if r.NextRun, ok = unixSeconds(v); !ok {
			return r, fmt.Errorf("%w: plan nextRun %s is not Unix seconds", ErrBadPayload, excerpt(v))
		}
	}
	if v, ok := r.Fields["start"]; ok {
		if r.Start, ok = unixSeconds(v); !ok {
			return r, fmt.Errorf("%w: plan start %s is not Unix seconds", ErrBadPayload, excerpt(v))
		}
		r.HasStart = true
	}
	return r, nil
}

// unixSeconds reads a number of seconds (a JSON number or numeric string;
// a fraction is dropped).
func unixSeconds(v json.RawMessage) (int64, bool) {
	f, ok := parseUnixSeconds(v)
	if !ok || f < 0 || f > 1e11 {
		return 0, false
	}
	return int64(f), true
}

// PlanSpec is what resque-go writes for a new plan.
type PlanSpec struct {
	ID    string
	Class string
	Queue string
	// Args is JSON (array or object); empty means [].
	Args []byte
	// UniqueID, when set, gives the job "unique":{"uid":UniqueID}.
	UniqueID string
	NextRun  int64
	// Exactly one of RecurrenceInterval and Cron.
	RecurrenceInterval Period
	Cron               string
	Timezone           string
	Misfire            string
	// Start (every/period plans) is the slot the recurrence counts from.
	Start int64
	// Calendar and Group, when set, are written as "calendar" and "group".
	Calendar string
	Group    string
}

// EncodePlan writes a plan the way resque-v3 lays it out: the job's fields
// (class, args, queue, unique), then id, nextRun and recurrenceInterval;
// resque-go's fields (cron, timezone, misfire, start, calendar, group)
// follow.
func EncodePlan(s PlanSpec) ([]byte, error) {
	if s.Class == "" || s.Queue == "" || s.ID == "" {
		return nil, fmt.Errorf("protocol: a plan needs an id, a class and a queue")
	}
	args, err := normalizeArgs(s.Args)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	field := func(name string, raw []byte) {
		if b.Len() == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		b.Write(MarshalString(name))
		b.WriteByte(':')
		b.Write(raw)
	}
	field("class", MarshalString(s.Class))
	field("args", args)
	field("queue", MarshalString(s.Queue))
	if s.UniqueID != "" {
		field("unique", []byte(`{"uid":`+string(MarshalString(s.UniqueID))+`}`))
	}
	field("id", MarshalString(s.ID))
	field("nextRun", []byte(strconv.FormatInt(s.NextRun, 10)))
	if s.Cron != "" {
		field("cron", MarshalString(s.Cron))
	} else {
		field("recurrenceInterval", MarshalString(s.RecurrenceInterval.String()))
	}
	if s.Timezone != "" {
		field("timezone", MarshalString(s.Timezone))
	}
	if s.Misfire != "" {
		field("misfire", MarshalString(s.Misfire))
	}
	if s.Cron == "" {
		field("start", []byte(strconv.FormatInt(s.Start, 10)))
	}
	if s.Calendar != "" {
		field("calendar", MarshalString(s.Calendar))
	}
	if s.Group != "" {
		field("group", MarshalString(s.Group))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// PlanWithNextRun returns the plan with nextRun set to ts; every other
// field keeps its bytes (a PHP float id stays a float).
func PlanWithNextRun(raw []byte, ts int64) ([]byte, error) {
	return WithFields(raw, [2]string{"nextRun", strconv.FormatInt(ts, 10)})
}

// PlanPayload is the job a plan enqueues: the plan's job fields as they
// are (class, args, queue, unique, sourceId...), the plan's "id" replaced
// by a fresh job id, and queue_time; the recurrence fields are left out.
func PlanPayload(raw []byte, jobID string, now time.Time) ([]byte, error) {
	return rewriteObject(raw, []field{
		{"id", MarshalString(jobID)},
		{"queue_time", []byte(FormatQueueTime(now))},
	}, planOnlyFields)
}
