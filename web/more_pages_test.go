package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/plan"
)

// seedMore fills the namespace with serial locks, mass-queue sources and
// pools, calendars and a paused queue, and odd entries of each: a lock key
// of another type, names holding HTML, allocation failures that are not
// JSON, a calendar of broken JSON.
func seedMore(e *env) {
	e.t.Helper()
	k := e.raw.Keys()
	// serial locks: one held by a running worker, one stale, one of
	// another type, one without an expiry, one of a queue named in HTML
	e.do("SADD", k.Queues(), "ser", "stale", "odd", "forever", "<b>not bold</b>", "plain")
	e.do("SET", k.SerialLock("ser"), "0123456789abcdef0123456789abcdef", "PX", 30000)
	e.do("SET", k.SerialLock("stale"), "feedfacefeedfacefeedfacefeedface", "PX", 30000)
	e.do("HSET", k.SerialLock("odd"), "a", "<script>alert(20)</script>")
	e.do("SET", k.SerialLock("forever"), "<script>alert(21)</script>")
	e.do("SET", k.SerialLock("<b>not bold</b>"), "\xff\xfe", "PX", 30000)
	id := "host1:4242-0:ser,plain"
	e.do("SADD", k.Workers(), id)
	e.do("SET", k.Worker(id), `{"queue":"ser","run_at":"2026-11-28T10:00:00Z","payload":{"class":"SerialJob","args":[1]}}`)

	// mass queues: static jobs, a committed batch, settings, a pause
	for _, src := range []string{"s1", "s2"} {
		if _, err := e.c.MassEnqueue(ctx(), client.MassJob{Source: src, Name: "import", Class: "Import", Args: json.RawMessage(`[1]`)}); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := e.c.SetMassWeight(ctx(), "s1", 3); err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.SetMassLimit(ctx(), "s1", 2); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.c.PauseMassSource(ctx(), "s2"); err != nil {
		e.t.Fatal(err)
	}
	b, err := e.c.NewBatch("s3", "export")
	if err != nil {
		e.t.Fatal(err)
	}
	if err := b.Push(ctx(), client.MassJob{Class: "Export", Args: json.RawMessage(`["<script>alert(22)</script>"]`)}); err != nil {
		e.t.Fatal(err)
	}
	if err := b.Commit(ctx()); err != nil {
		e.t.Fatal(err)
	}
	e.do("RPUSH", k.AllocationFailures(), "not json <script>alert(23)</script>", "\xff\xfe")
	// a batch pool as the released server leaves it: one unit with a
	// batch (and its heartbeat), one named in HTML without one
	e.do("ZADD", k.PoolUnitQueues("imports"), 1, "pool:imports:n1-0:queues", 0, "pool:imports:<b>u</b>:queues")
	e.do("RPUSH", k.UnitQueues("imports", "n1-0"), "s4:load:0000abcd")
	e.do("RPUSH", k.Committed("s4:load:0000abcd"), `{"class":"Load","args":[]}`)
	e.do("HSET", k.PoolSources("imports"), "s4", "n1-0")
	e.do("ZADD", k.UnitHeartbeats("imports"), time.Now().UnixMilli(), "n1-0")

	// calendars: one used by a plan, one unused, one of broken JSON, one
	// named in HTML
	for _, c := range []plan.Calendar{
		{Name: "weekdays", Cron: []string{"* * * * 0,6"}},
		{Name: "holidays", Dates: []string{"2026-12-25", "2027-01-01"}, Timezone: "Europe/Paris"},
		{Name: "<i>html</i>", Dates: []string{"2026-12-24"}},
	} {
		if err := e.c.AddCalendar(ctx(), c, false); err != nil {
			e.t.Fatal(err)
		}
	}
	e.do("HSET", k.PlanCalendars(), "broken", `{"dates": <script>alert(24)</script>`)
	if _, err := e.c.AddPlan(ctx(), plan.Plan{ID: "workdays", Queue: "go", Class: "Daily", Cron: "0 9 * * *", Calendar: "weekdays", Misfire: plan.Skip}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.PauseQueue(ctx(), "plain"); err != nil {
		e.t.Fatal(err)
	}
}

func TestMorePagesAndReadRoutes(t *testing.T) {
	e := newEnv(t)
	seedMore(e)
	for _, p := range []string{"serial", "mass", "calendars", "calendars/weekdays", "calendars/holidays", "calendars/broken",
		"calendars/" + url.PathEscape("<i>html</i>"), "queues", "queues/plain", "queues/ser"} {
		for _, tok := range []string{viewerSecret, adminSecret} {
			checkPage(t, "GET /"+p, e.get(p, tok))
		}
	}
	for _, p := range []string{"api/serial", "api/mass", "api/calendars", "api/calendars/weekdays", "api/calendars/broken", "api/queues"} {
		r := e.get(p, viewerSecret)
		var v any
		r.decode(t, &v)
		if r.code != http.StatusOK || !strings.HasPrefix(r.head.Get("Content-Type"), "application/json") {
			t.Errorf("GET /%s: %d %.300s", p, r.code, r.body)
		}
	}
	for _, p := range []string{"calendars/nope", "api/calendars/nope"} {
		if r := e.get(p, viewerSecret); r.code != http.StatusNotFound {
			t.Errorf("GET /%s: %d", p, r.code)
		}
	}

	// serial locks: the holder of ser, stale, unreadable and never-expiring ones
	var sl struct {
		Locks []struct {
			Queue      string   `json:"queue"`
			Token      string   `json:"token"`
			TTLSeconds *float64 `json:"ttl_seconds"`
			Stale      bool     `json:"stale"`
			Problem    string   `json:"problem"`
			Holders    []struct {
				Worker string     `json:"worker"`
				Class  string     `json:"class"`
				Since  *time.Time `json:"since"`
			} `json:"holders"`
		} `json:"locks"`
	}
	e.get("api/serial", viewerSecret).decode(t, &sl)
	got := map[string]string{}
	for _, l := range sl.Locks {
		switch {
		case l.Problem != "":
			got[l.Queue] = "problem"
		case l.TTLSeconds == nil:
			got[l.Queue] = "forever"
		case l.Stale:
			got[l.Queue] = "stale"
		case len(l.Holders) == 1 && l.Holders[0].Class == "SerialJob" && l.Holders[0].Since != nil:
			got[l.Queue] = l.Holders[0].Worker
		}
	}
	if got["ser"] != "host1:4242-0:ser,plain" || got["stale"] != "stale" || got["odd"] != "problem" || got["forever"] != "forever" ||
		got["<b>not bold</b>"] != "stale" || len(sl.Locks) != 5 {
		t.Errorf("serial locks: %v (%d)", got, len(sl.Locks))
	}
	body := e.get("serial", viewerSecret).body
	for _, want := range []string{"host1:4242-0:ser,plain", "SerialJob", "stale: no worker", "unreadable", "&lt;b&gt;not bold&lt;/b&gt;", "never"} {
		if !strings.Contains(body, want) {
			t.Errorf("serial page lacks %q", want)
		}
	}

	// mass: sources with their settings, the batch, the failures
	var mv struct {
		Status struct {
			Unassigned int64 `json:"unassigned"`
			Committed  int64 `json:"committed"`
		} `json:"status"`
		Sources []struct {
			Source string `json:"source"`
			Weight int    `json:"weight"`
			Limit  int    `json:"limit"`
			Paused bool   `json:"paused"`
		} `json:"sources"`
		Failures []struct {
			ID string `json:"id"`
		} `json:"failures"`
	}
	e.get("api/mass", viewerSecret).decode(t, &mv)
	src := map[string]string{}
	for _, s := range mv.Sources {
		src[s.Source] = strings.Join([]string{strconv.Itoa(s.Weight), strconv.Itoa(s.Limit), map[bool]string{true: "paused", false: "active"}[s.Paused]}, " ")
	}
	if src["s1"] != "3 2 active" || src["s2"] != "1 0 paused" || mv.Status.Unassigned != 2 || mv.Status.Committed != 1 || len(mv.Failures) != 2 {
		t.Errorf("mass: %v %+v", src, mv)
	}
	body = e.get("mass", operatorSecret).body
	for _, want := range []string{"s1", "s2", "paused", "Set weight", "Set limit", "Resume", "Reallocate every failure",
		"imports", "n1-0", "s4:load:0000abcd", "&lt;b&gt;u&lt;/b&gt;", "alive"} {
		if !strings.Contains(body, want) {
			t.Errorf("mass page lacks %q", want)
		}
	}

	// calendars: dates, cron lines, the plans naming each, the broken one
	var cv struct {
		Calendars []struct {
			Name     string   `json:"name"`
			Timezone string   `json:"timezone"`
			Dates    []string `json:"dates"`
			Cron     []string `json:"cron"`
			Plans    []string `json:"plans"`
		} `json:"calendars"`
	}
	e.get("api/calendars", viewerSecret).decode(t, &cv)
	names := map[string]string{}
	for _, c := range cv.Calendars {
		names[c.Name] = c.Timezone + " " + strings.Join(c.Dates, ",") + " " + strings.Join(c.Cron, ",") + " " + strings.Join(c.Plans, ",")
	}
	if names["weekdays"] != "UTC  * * * * 0,6 workdays" || names["holidays"] != "Europe/Paris 2026-12-25,2027-01-01  " || len(cv.Calendars) != 4 {
		t.Errorf("calendars: %q", names)
	}
	var broken struct{ Problem string }
	e.get("api/calendars/broken", viewerSecret).decode(t, &broken)
	if broken.Problem == "" {
		t.Error("calendar broken: no problem reported")
	}
	body = e.get("calendars/weekdays", adminSecret).body
	if !strings.Contains(body, "workdays") || strings.Contains(body, `method="post"`) {
		t.Errorf("a used calendar's page: plan listed %v, removal offered %v", strings.Contains(body, "workdays"), strings.Contains(body, `method="post"`))
	}

	// queues: the paused one shown paused
	var qv struct {
		Queues []struct {
			Name   string `json:"name"`
			Paused bool   `json:"paused"`
		} `json:"queues"`
	}
	e.get("api/queues", viewerSecret).decode(t, &qv)
	for _, q := range qv.Queues {
		if q.Paused != (q.Name == "plain") {
			t.Errorf("queue %q paused: %v", q.Name, q.Paused)
		}
	}
	if body := e.get("queues/plain", viewerSecret).body; !strings.Contains(body, `<span class="badge">paused</span>`) {
		t.Error("the paused queue's page does not say paused")
	}
}

// Keys of another type where a page reads a whole key: the page still
// answers, saying so.
func TestMorePagesWithKeysOfAnotherType(t *testing.T) {
	e := newEnv(t)
	k := e.raw.Keys()
	e.do("SET", k.PlanCalendars(), "<script>alert(25)</script>")
	e.do("SADD", k.Queues(), "q")
	e.do("SADD", k.SerialLock("q"), "x")
	for _, p := range []string{"calendars", "serial", "mass", "queues"} {
		checkPage(t, "GET /"+p, e.get(p, viewerSecret))
	}
	if body := e.get("calendars", viewerSecret).body; !strings.Contains(body, "holds another type") {
		t.Errorf("calendars page: %.1000s", body)
	}
}

func TestMoreRoles(t *testing.T) {
	e := newEnv(t)
	seedMore(e)
	for _, c := range []struct {
		path string
		need string
		body any
	}{
		{"api/serial/stale/release", "admin", map[string]any{"token": "feedfacefeedfacefeedfacefeedface"}},
		{"api/mass/pause", "operator", map[string]any{"source": "s1"}},
		{"api/mass/resume", "operator", map[string]any{"source": "s2"}},
		{"api/mass/weight", "operator", map[string]any{"source": "s1", "weight": 5}},
		{"api/mass/limit", "operator", map[string]any{"source": "s1", "limit": 0}},
		{"api/mass/reallocate", "operator", map[string]any{"all": true}},
		{"api/calendars/holidays/remove", "admin", nil},
		{"api/queues/ser/pause", "operator", nil},
		{"api/queues/plain/resume", "operator", nil},
	} {
		if r := e.postJSON(c.path, viewerSecret, c.body); r.code != http.StatusForbidden {
			t.Errorf("viewer POST /%s: %d %s", c.path, r.code, r.body)
		}
		if c.need == "admin" {
			if r := e.postJSON(c.path, operatorSecret, c.body); r.code != http.StatusForbidden {
				t.Errorf("operator POST /%s: %d %s", c.path, r.code, r.body)
			}
		}
	}
	for _, c := range [][]string{{"serial/release", "queue", "stale", "token", "feedfacefeedfacefeedfacefeedface"}, {"mass/pause", "source", "s1"},
		{"mass/weight", "source", "s1", "weight", "4"}, {"calendars/holidays/remove"}, {"queues/ser/pause"}} {
		if r := e.postForm(c[0], viewerSecret, c[1:]...); r.code != http.StatusForbidden {
			t.Errorf("viewer form POST /%s: %d", c[0], r.code)
		}
	}
	for _, c := range [][]string{{"serial/release", "queue", "stale", "token", "feedfacefeedfacefeedfacefeedface"}, {"calendars/holidays/remove"}} {
		if r := e.postForm(c[0], operatorSecret, c[1:]...); r.code != http.StatusForbidden {
			t.Errorf("operator form POST /%s: %d", c[0], r.code)
		}
	}
	for _, c := range [][]string{{"serial/release", "queue=stale&token=feedfacefeedfacefeedfacefeedface"}, {"mass/pause", "source=s1"},
		{"calendars/holidays/remove", ""}, {"queues/ser/pause", ""}} {
		if r := e.request("POST", c[0], adminSecret, "application/x-www-form-urlencoded", c[1], "Sec-Fetch-Site", "cross-site"); r.code != http.StatusForbidden {
			t.Errorf("cross-site POST /%s: %d", c[0], r.code)
		}
	}
	// nothing changed, nothing audited
	if n := e.do("EXISTS", e.raw.Keys().SerialLock("stale")).(int64); n != 1 {
		t.Error("the stale lock was released")
	}
	if p, _ := e.c.QueuesPaused(ctx(), []string{"ser", "plain"}); p[0] || !p[1] {
		t.Errorf("queues paused: %v", p)
	}
	var audit struct{ Entries []any }
	e.get("api/audit", viewerSecret).decode(t, &audit)
	if len(audit.Entries) != 0 {
		t.Errorf("audit log: %v", audit.Entries)
	}
	for _, p := range []string{"serial", "mass", "calendars/holidays", "queues", "queues/ser"} {
		if body := e.get(p, viewerSecret).body; strings.Contains(body, `method="post"`) {
			t.Errorf("/%s offers a viewer an action", p)
		}
	}
}

func TestSerialLockRelease(t *testing.T) {
	e := newEnv(t)
	seedMore(e)
	k := e.raw.Keys()
	// a token that no longer holds the lock: nothing done
	if r := e.postJSON("api/serial/stale/release", adminSecret, map[string]any{"token": "another"}); r.code != http.StatusConflict {
		t.Errorf("another token: %d %s", r.code, r.body)
	}
	if r := e.postJSON("api/serial/odd/release", adminSecret, map[string]any{"token": "x"}); r.code != http.StatusConflict {
		t.Errorf("a key of another type: %d %s", r.code, r.body)
	}
	if r := e.postJSON("api/serial/stale/release", adminSecret, map[string]any{"token_hex": "xyz"}); r.code != http.StatusBadRequest {
		t.Errorf("bad token_hex: %d %s", r.code, r.body)
	}
	if r := e.postJSON("api/serial/stale/release", adminSecret, map[string]any{}); r.code != http.StatusBadRequest {
		t.Errorf("no token: %d %s", r.code, r.body)
	}
	r := e.postJSON("api/serial/stale/release", adminSecret, map[string]any{"token": "feedfacefeedfacefeedfacefeedface"})
	if r.code != http.StatusOK || e.do("EXISTS", k.SerialLock("stale")).(int64) != 0 {
		t.Fatalf("release: %d %s", r.code, r.body)
	}
	if a := lastAudit(e); a.Action != "serial.release" || a.Who != "ada" || a.Target != "serial lock of queue stale" || a.Count != 1 {
		t.Errorf("audit: %+v", a)
	}
	// through the form, a queue named in HTML
	r = e.postForm("serial/release", adminSecret, "queue", "<b>not bold</b>", "token_hex", "fffe")
	checkPage(t, "release by form", r)
	if e.do("EXISTS", k.SerialLock("<b>not bold</b>")).(int64) != 0 {
		t.Error("the lock of <b>not bold</b> is still there")
	}
	if r := e.postForm("serial/release", adminSecret, "queue", "ser", "token", "nope"); r.code != http.StatusConflict {
		t.Errorf("form with another token: %d", r.code)
	}
}

func TestMassActions(t *testing.T) {
	e := newEnv(t)
	seedMore(e)
	settings := func() map[string][3]any {
		set, err := e.c.MassSettings(ctx())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][3]any{}
		for _, s := range set {
			out[s.Source] = [3]any{s.Weight, s.Limit, s.Paused}
		}
		return out
	}
	r := e.postForm("mass/weight", operatorSecret, "source", "s1", "weight", "5")
	checkPage(t, "weight", r)
	r = e.postForm("mass/limit", operatorSecret, "source", "s1", "limit", "0")
	checkPage(t, "limit", r)
	r = e.postForm("mass/pause", operatorSecret, "source", "s1")
	checkPage(t, "pause", r)
	if got := settings()["s1"]; got != [3]any{5, 0, true} {
		t.Errorf("s1 after weight, limit, pause: %v", got)
	}
	if a := lastAudit(e); a.Action != "mass.pause" || a.Target != "source s1" || a.Who != "opal" {
		t.Errorf("audit: %+v", a)
	}
	if r := e.postJSON("api/mass/resume", operatorSecret, map[string]any{"source": "s2"}); r.code != http.StatusOK || !strings.Contains(r.body, `"was_paused": true`) {
		t.Errorf("resume s2: %d %s", r.code, r.body)
	}
	if got := settings()["s2"]; got[2] == true {
		t.Errorf("s2 still paused: %v", got)
	}
	for _, c := range []struct {
		path string
		body any
		code int
	}{
		{"api/mass/weight", map[string]any{"source": "s1", "weight": 0}, http.StatusBadRequest},
		{"api/mass/weight", map[string]any{"source": "s1"}, http.StatusBadRequest},
		{"api/mass/limit", map[string]any{"source": "s1", "limit": -1}, http.StatusBadRequest},
		{"api/mass/pause", map[string]any{}, http.StatusBadRequest},
		{"api/mass/reallocate", map[string]any{}, http.StatusBadRequest},
		{"api/mass/explode", map[string]any{"source": "s1"}, http.StatusNotFound},
	} {
		if r := e.postJSON(c.path, operatorSecret, c.body); r.code != c.code {
			t.Errorf("POST /%s %v: %d %s", c.path, c.body, r.code, r.body)
		}
	}
	if r := e.postForm("mass/weight", operatorSecret, "source", "s1", "weight", "many"); r.code != http.StatusBadRequest {
		t.Errorf("weight many: %d", r.code)
	}
	// every allocation failure goes back (the two that are not JSON included)
	r = e.postForm("mass/reallocate", operatorSecret, "all", "1")
	checkPage(t, "reallocate", r)
	if a := lastAudit(e); a.Action != "mass.reallocate" || a.Target != "every allocation failure" {
		t.Errorf("audit: %+v", a)
	}
}

func TestCalendarRemove(t *testing.T) {
	e := newEnv(t)
	seedMore(e)
	// a calendar a plan names is kept
	if r := e.postJSON("api/calendars/weekdays/remove", adminSecret, nil); r.code != http.StatusConflict || !strings.Contains(r.body, "workdays") {
		t.Errorf("remove a used calendar: %d %s", r.code, r.body)
	}
	r := e.postForm("calendars/holidays/remove", adminSecret)
	checkPage(t, "remove", r)
	if _, err := e.c.Calendar(ctx(), "holidays"); err == nil {
		t.Error("holidays still there")
	}
	if a := lastAudit(e); a.Action != "calendar.remove" || a.Target != "calendar holidays" || a.Who != "ada" {
		t.Errorf("audit: %+v", a)
	}
	for _, name := range []string{"broken", "<i>html</i>"} {
		if r := e.postJSON("api/calendars/"+url.PathEscape(name)+"/remove", adminSecret, nil); r.code != http.StatusOK {
			t.Errorf("remove %s: %d %s", name, r.code, r.body)
		}
	}
	if r := e.postJSON("api/calendars/holidays/remove", adminSecret, nil); r.code != http.StatusNotFound {
		t.Errorf("remove again: %d %s", r.code, r.body)
	}
}

func TestQueuePauseResume(t *testing.T) {
	e := newEnv(t)
	seedMore(e)
	r := e.postForm("queues/ser/pause", operatorSecret)
	checkPage(t, "pause", r)
	if p, _ := e.c.QueuesPaused(ctx(), []string{"ser"}); !p[0] {
		t.Fatal("ser not paused")
	}
	if a := lastAudit(e); a.Action != "queue.pause" || a.Target != "queue ser" || a.Who != "opal" {
		t.Errorf("audit: %+v", a)
	}
	if body := e.get("queues", operatorSecret).body; !strings.Contains(body, `action="/queues/ser/resume"`) {
		t.Error("the queues page offers no resume for ser")
	}
	if r := e.postJSON("api/queues/ser/resume", operatorSecret, nil); r.code != http.StatusOK || !strings.Contains(r.body, `"changed": true`) {
		t.Errorf("resume: %d %s", r.code, r.body)
	}
	if r := e.postJSON("api/queues/ser/resume", operatorSecret, nil); r.code != http.StatusOK || !strings.Contains(r.body, `"changed": false`) {
		t.Errorf("resume again: %d %s", r.code, r.body)
	}
	if r := e.postJSON("api/queues/ser/explode", operatorSecret, nil); r.code != http.StatusNotFound {
		t.Errorf("unknown action: %d", r.code)
	}
	// the existing actions keep their routes
	if r := e.postJSON("api/queues/ser/clear", adminSecret, nil); r.code != http.StatusOK || !strings.Contains(r.body, "cleared") {
		t.Errorf("clear: %d %s", r.code, r.body)
	}
}
