package protocol_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

func TestPlanKeys(t *testing.T) {
	t.Parallel()
	k := protocol.NewKeys("resque-v3")
	for got, want := range map[string]string{
		k.Plan("1506092109.1235"): "resque-v3:plan:1506092109.1235",
		k.PlanSchedule():          "resque-v3:plan_schedule",
		k.PlanSlot(1506092400):    "resque-v3:plan_schedule:1506092400",
		k.PlanPattern():           "resque-v3:plan:*",
	} {
		if got != want {
			t.Errorf("%s, want %s", got, want)
		}
	}
	if id, ok := k.ParsePlan("resque-v3:plan:src_1.5:x"); !ok || id != "src_1.5:x" {
		t.Errorf("ParsePlan: %q %v", id, ok)
	}
	if _, ok := k.ParsePlan("resque-v3:plan_schedule"); ok {
		t.Error("plan_schedule parsed as a plan")
	}
}

func TestParsePeriod(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"P0Y0M0DT0H5M0S": "P0Y0M0DT0H5M0S",
		"PT5M":           "P0Y0M0DT0H5M0S",
		"P1M":            "P0Y1M0DT0H0M0S",
		"P1D":            "P0Y0M1DT0H0M0S",
		"P2W":            "P0Y0M14DT0H0M0S",
		"P1Y2M3DT4H5M6S": "P1Y2M3DT4H5M6S",
		"PT90M":          "P0Y0M0DT0H90M0S", // kept as written, as DateInterval does
		"P1DT12H":        "P0Y0M1DT12H0M0S",
	} {
		p, err := protocol.ParsePeriod(in)
		if err != nil || p.String() != want {
			t.Errorf("%s: %s %v, want %s", in, p, err, want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "P0D", "PT0S", "1M", "P1.5M", "P-1D", "P1H", "PT1D", "p1d", "P1M1Y", "P9999999Y"} {
		if p, err := protocol.ParsePeriod(bad); err == nil {
			t.Errorf("%q: %s, want an error", bad, p)
		}
	}
	if p, _ := protocol.ParsePeriod("P1DT1H"); !p.Calendar() || p.Clock() != time.Hour {
		t.Errorf("calendar/clock: %+v", p)
	}
	for d, want := range map[time.Duration]string{
		5 * time.Minute: "P0Y0M0DT0H5M0S", 90 * time.Minute: "P0Y0M0DT1H30M0S", 36*time.Hour + time.Second: "P0Y0M0DT36H0M1S",
	} {
		if p, err := protocol.PeriodOf(d); err != nil || p.String() != want {
			t.Errorf("%s: %s %v", d, p, err)
		}
	}
	for _, bad := range []time.Duration{0, -time.Second, 1500 * time.Millisecond} {
		if _, err := protocol.PeriodOf(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestEncodePlan(t *testing.T) {
	t.Parallel()
	raw, err := protocol.EncodePlan(protocol.PlanSpec{ID: "a<b", Class: "C", Queue: "q", Args: []byte(` { "k" : [1, 2] } `),
		UniqueID: "u1", NextRun: 1700000300, RecurrenceInterval: protocol.Period{Minutes: 5}, Misfire: "skip", Start: 1700000000})
	want := `{"class":"C","args":{"k":[1,2]},"queue":"q","unique":{"uid":"u1"},"id":"a<b","nextRun":1700000300,"recurrenceInterval":"P0Y0M0DT0H5M0S","misfire":"skip","start":1700000000}`
	if err != nil || string(raw) != want {
		t.Errorf("every:\n got %s %v\nwant %s", raw, err, want)
	}
	raw, err = protocol.EncodePlan(protocol.PlanSpec{ID: "x", Class: "C", Queue: "q", NextRun: 1, Cron: "0 3 * * *", Timezone: "Europe/Prague", Misfire: "coalesce"})
	want = `{"class":"C","args":[],"queue":"q","id":"x","nextRun":1,"cron":"0 3 * * *","timezone":"Europe/Prague","misfire":"coalesce"}`
	if err != nil || string(raw) != want {
		t.Errorf("cron:\n got %s %v\nwant %s", raw, err, want)
	}
	if _, err := protocol.EncodePlan(protocol.PlanSpec{ID: "x", Class: "C"}); err == nil {
		t.Error("no queue: no error")
	}
}

// A plan's calendar and group are resque-go fields of plan:<id>: read
// back, and left out of the job it pushes.
func TestPlanCalendarAndGroup(t *testing.T) {
	t.Parallel()
	raw, err := protocol.EncodePlan(protocol.PlanSpec{ID: "x", Class: "C", Queue: "q", NextRun: 1, Cron: "0 9 * * *",
		Calendar: "holidays", Group: "reports"})
	want := `{"class":"C","args":[],"queue":"q","id":"x","nextRun":1,"cron":"0 9 * * *","calendar":"holidays","group":"reports"}`
	if err != nil || string(raw) != want {
		t.Fatalf("encode:\n got %s %v\nwant %s", raw, err, want)
	}
	r, err := protocol.DecodePlan(raw)
	if err != nil || r.Calendar != "holidays" || r.Group != "reports" {
		t.Errorf("decode: %+v %v", r, err)
	}
	payload, err := protocol.PlanPayload(raw, "j", time.Unix(2, 0))
	if err != nil || string(payload) != `{"class":"C","args":[],"queue":"q","id":"j","queue_time":2.0000}` {
		t.Errorf("payload: %s %v", payload, err)
	}
}

const phpPlan = `{"class":"Reports_Job","args":{"report":"daily","path":"a\/b"},"queue":"reports","sourceId":"src1","unique":{"uid":"r1"},"isMonitored":true,"includePath":"app\/","environment":{"K":"V"},"id":1506092109.1235,"nextRun":1506092400,"recurrenceInterval":"P0Y0M0DT0H5M0S"}`

func TestDecodePHPPlan(t *testing.T) {
	t.Parallel()
	r, err := protocol.DecodePlan([]byte(phpPlan))
	if err != nil || r.ID != "1506092109.1235" || r.Class != "Reports_Job" || r.Queue != "reports" || r.NextRun != 1506092400 ||
		r.RecurrenceInterval != "P0Y0M0DT0H5M0S" || r.HasStart || r.Cron != "" || string(r.Args) != `{"report":"daily","path":"a\/b"}` {
		t.Errorf("%+v %v", r, err)
	}
	next, err := protocol.PlanWithNextRun([]byte(phpPlan), 1506092700)
	if err != nil || string(next) != strings.Replace(phpPlan, "1506092400", "1506092700", 1) {
		t.Errorf("with next run: %s %v", next, err)
	}
	payload, err := protocol.PlanPayload([]byte(phpPlan), "0123456789abcdef0123456789abcdef", time.Unix(1506092401, 500_000_000))
	want := `{"class":"Reports_Job","args":{"report":"daily","path":"a\/b"},"queue":"reports","sourceId":"src1","unique":{"uid":"r1"},"isMonitored":true,"includePath":"app\/","environment":{"K":"V"},"id":"0123456789abcdef0123456789abcdef","queue_time":1506092401.5000}`
	if err != nil || string(payload) != want {
		t.Errorf("payload:\n got %s %v\nwant %s", payload, err, want)
	}
	if p, err := protocol.DecodePayload(payload); err != nil || p.Class != "Reports_Job" || p.Queue != "reports" {
		t.Errorf("the payload does not decode as a job: %v", err)
	}
	for _, bad := range []string{`not json`, `[1]`, `{"class":5}`, `{"class":"C","nextRun":"soon"}`, `{"class":"C","start":-5}`, `null`} {
		if _, err := protocol.DecodePlan([]byte(bad)); !errors.Is(err, protocol.ErrBadPayload) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if r, err := protocol.DecodePlan([]byte(`{"class":"C","id":"s_1.5","nextRun":"1506092400","start":12.7}`)); err != nil || r.ID != "s_1.5" || r.NextRun != 1506092400 || r.Start != 12 || !r.HasStart {
		t.Errorf("string nextRun, float start: %+v %v", r, err)
	}
}
