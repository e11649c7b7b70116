package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/plan"
)

// seedScheduled fills the namespace with delayed items written by
// resque-scheduler, node-resque, php-resque and resque-go, plans,
// schedules and unique ids, and odd entries of each: items that are not
// jobs, HTML in texts, a plan of broken JSON, a uid key of another type.
func seedScheduled(e *env) {
	e.t.Helper()
	for _, f := range [][2]string{
		{"resque-scheduler-5.0.0", "delayed-enqueue"}, {"node-resque-9.7.1", "delayed-enqueue"},
		{"php-resque-resque-master", "delayed-enqueue"}, {"resque-scheduler-5.0.0", "set-schedule"},
		{"resque-scheduler-5.0.0", "scheduler-running"},
	} {
		e.load(fixtures.MustLoad(f[0], f[1]))
	}
	at := time.Unix(1795300100, 0)
	if _, err := e.c.EnqueueAt(ctx(), at, "go", "GoDelayed", 1, "<b>not bold</b>"); err != nil {
		e.t.Fatal(err)
	}
	k := e.raw.Keys()
	odd := at.Unix() + 10
	for _, p := range oddPayloads {
		e.do("RPUSH", k.Delayed(odd), p)
	}
	e.do("ZADD", k.DelayedSchedule(), odd, odd)
	e.do("ZADD", k.DelayedSchedule(), 1795300200, "not-a-time<script>alert(8)</script>")
	e.do("HSET", k.Delayed(1795300300), "a", "b")
	e.do("ZADD", k.DelayedSchedule(), 1795300300, 1795300300)

	if _, err := e.c.AddPlan(ctx(), plan.Plan{ID: "nightly", Queue: "go", Class: "Nightly", Cron: "0 3 * * *", Group: "g1"}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.c.AddPlan(ctx(), plan.Plan{ID: "<i>html</i>", Queue: "go", Class: "<script>alert(9)</script>", Every: 5 * time.Minute}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.AddCalendar(ctx(), plan.Calendar{Name: "weekdays", Cron: []string{"* * * * 0,6"}}, false); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.c.AddPlan(ctx(), plan.Plan{ID: "workdays", Queue: "go", Class: "Daily", Cron: "0 9 * * *", Calendar: "weekdays", Misfire: plan.Skip}); err != nil {
		e.t.Fatal(err)
	}
	e.do("SET", k.Plan("broken"), `{"class": <script>alert(10)</script>`)

	e.do("SET", k.UniqueState("u-running"), "running")
	if info, err := e.c.EnqueueRaw(ctx(), "go", "Parked", []byte(`["<script>alert(11)</script>"]`),
		client.Unique("u-running"), client.DeferrableBy(time.Minute)); err != nil || !info.Deferred {
		e.t.Fatalf("parking a deferred job: %+v %v", info, err)
	}
	if _, err := e.c.EnqueueRaw(ctx(), "go", "Uniq", []byte(`[1]`), client.Unique("u-queued")); err != nil {
		e.t.Fatal(err)
	}
	e.do("HSET", k.UniqueState("u-hash"), "a", "b")
}

func TestScheduledPagesAndReadRoutes(t *testing.T) {
	e := newEnv(t)
	seedScheduled(e)
	pages := []string{"delayed", "delayed?queue=mail", "delayed?class=MailJob&queue=mail", "delayed?page=2", "delayed?queue=%3Cx%3E",
		"delayed/bulk", "delayed/bulk?queue=mail", "plans", "plans/nightly", "plans/" + url.PathEscape("<i>html</i>"), "plans/broken",
		"schedules", "unique"}
	for _, p := range pages {
		checkPage(t, "GET /"+p, e.get(p, viewerSecret))
	}
	for _, p := range []string{"api/delayed", "api/delayed?queue=mail&offset=1&limit=2", "api/delayed/count", "api/delayed/count?class=MailJob",
		"api/plans", "api/plans/nightly", "api/plans/broken", "api/schedules", "api/unique", "api/unique/u-running", "api/unique/u-queued"} {
		r := e.get(p, viewerSecret)
		var v any
		r.decode(t, &v)
		if r.code != http.StatusOK || !strings.HasPrefix(r.head.Get("Content-Type"), "application/json") {
			t.Errorf("GET /%s: %d %.300s", p, r.code, r.body)
		}
	}
	for _, p := range []string{"plans/nope", "api/plans/nope"} {
		if r := e.get(p, viewerSecret); r.code != http.StatusNotFound {
			t.Errorf("GET /%s: %d", p, r.code)
		}
	}

	// the delayed page: oldest first, every runtime's items, the odd ones
	// marked as not jobs
	var dl struct {
		Items []struct {
			AtUnix  int64  `json:"at_unix"`
			Queue   string `json:"queue"`
			Class   string `json:"class"`
			Digest  string `json:"digest"`
			Invalid string `json:"invalid"`
		} `json:"items"`
	}
	e.get("api/delayed?limit=1000", viewerSecret).decode(t, &dl)
	invalid, classes := 0, map[string]bool{}
	for i, it := range dl.Items {
		if i > 0 && it.AtUnix < dl.Items[i-1].AtUnix {
			t.Errorf("item %d due %d before item %d's %d", i, it.AtUnix, i-1, dl.Items[i-1].AtUnix)
		}
		if it.Invalid != "" {
			invalid++
		}
		classes[it.Class] = true
	}
	if invalid == 0 || !classes["MailJob"] || !classes["NoArgsJob"] || !classes["GoDelayed"] {
		t.Errorf("delayed items: %d invalid, classes %v", invalid, classes)
	}
	var cnt struct{ Count int64 }
	e.get("api/delayed/count?queue=mail", viewerSecret).decode(t, &cnt)
	if cnt.Count < 3 {
		t.Errorf("api/delayed/count?queue=mail: %d", cnt.Count)
	}
	body := e.get("delayed", viewerSecret).body
	for _, want := range []string{"MailJob", "NoArgsJob", "GoDelayed", "&lt;b&gt;not bold&lt;/b&gt;", "not a job", "unicode é ✓ &lt;tag&gt;&amp;"} {
		if !strings.Contains(body, want) {
			t.Errorf("delayed page lacks %q", want)
		}
	}

	// plans: next run, group, the broken one marked (it is on no schedule:
	// the pages that walk every plan key find it); a plan's upcoming slots
	body = e.get("plans", viewerSecret).body
	for _, want := range []string{"nightly", "cron 0 3 * * *", "g1", "&lt;i&gt;html&lt;/i&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("plans page lacks %q", want)
		}
	}
	body = e.allPages("plans?scan=0")
	for _, want := range []string{"nightly", "cron 0 3 * * *", "g1", "broken", "badge bad", "&lt;i&gt;html&lt;/i&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("plans pages of every plan key lack %q", want)
		}
	}
	var pv struct {
		NextRun  *time.Time  `json:"next_run"`
		Upcoming []time.Time `json:"upcoming"`
		Problem  string      `json:"problem"`
	}
	e.get("api/plans/nightly", viewerSecret).decode(t, &pv)
	if pv.NextRun == nil || len(pv.Upcoming) != 10 || pv.Upcoming[1].Sub(pv.Upcoming[0]) != 24*time.Hour {
		t.Errorf("plan nightly: %+v", pv)
	}
	e.get("api/plans/workdays", viewerSecret).decode(t, &pv)
	for _, slot := range pv.Upcoming {
		if d := slot.Weekday(); d == time.Saturday || d == time.Sunday {
			t.Errorf("plan workdays: a slot on %s, which its calendar excludes: %v", d, pv.Upcoming)
		}
	}
	if len(pv.Upcoming) != 10 {
		t.Errorf("plan workdays: %d slots", len(pv.Upcoming))
	}
	e.get("api/plans/broken", viewerSecret).decode(t, &pv)
	if pv.Problem == "" {
		t.Errorf("plan broken: no problem reported: %+v", pv)
	}

	// schedules: what resque-scheduler published and its master
	var sv struct {
		Master    string `json:"master"`
		Schedules []struct {
			Name string `json:"name"`
		} `json:"schedules"`
	}
	e.get("api/schedules", viewerSecret).decode(t, &sv)
	if len(sv.Schedules) == 0 {
		t.Errorf("schedules: none: %+v", sv)
	}
	if body := e.get("schedules", viewerSecret).body; sv.Master != "" && !strings.Contains(body, sv.Master) {
		t.Errorf("schedules page lacks the master %q", sv.Master)
	}

	// unique ids: states, the parked job, the key of another type marked
	type uniqueID struct {
		UID      string          `json:"uid"`
		State    string          `json:"state"`
		Deferred json.RawMessage `json:"deferred"`
		Problem  string          `json:"problem"`
	}
	var uids []uniqueID
	for next := ""; ; {
		var part struct {
			UniqueIDs []uniqueID `json:"unique_ids"`
			Next      *string    `json:"next"`
		}
		e.get("api/unique?cursor="+next, viewerSecret).decode(t, &part)
		uids = append(uids, part.UniqueIDs...)
		if part.Next == nil {
			break
		}
		next = *part.Next
	}
	got := map[string]string{}
	for _, u := range uids {
		got[u.UID] = u.State
		if u.Problem != "" {
			got[u.UID] = "problem"
		}
		if u.UID == "u-running" && string(u.Deferred) == "null" {
			t.Error("u-running: no parked job")
		}
	}
	if got["u-running"] != "running" || got["u-queued"] != "queued" || got["u-hash"] != "problem" {
		t.Errorf("unique ids: %v", got)
	}
	body = e.allPages("unique")
	for _, want := range []string{"u-running", "u-queued", "unreadable", "Parked"} {
		if !strings.Contains(body, want) {
			t.Errorf("unique page lacks %q", want)
		}
	}
}

func TestScheduledRoles(t *testing.T) {
	e := newEnv(t)
	seedScheduled(e)
	d := firstDelayed(e, "NoArgsJob")
	for _, c := range []struct {
		path string
		need string // the lowest role allowed
		body any
	}{
		{"api/delayed/remove", "operator", map[string]any{"at_unix": d.AtUnix, "digest": d.Digest}},
		{"api/delayed/remove_all", "admin", map[string]any{"class": "MailJob"}},
		{"api/plans/nightly/pause", "operator", nil},
		{"api/plans/nightly/resume", "operator", nil},
		{"api/plans/nightly/remove", "operator", nil},
		{"api/unique/u-queued/clear", "admin", nil},
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
	for _, c := range [][]string{{"delayed/remove", "at", "1", "digest", "x"}, {"plans/nightly/pause"}, {"delayed/bulk", "class", "MailJob"}, {"unique/clear", "uid", "u-queued"}} {
		if r := e.postForm(c[0], viewerSecret, c[1:]...); r.code != http.StatusForbidden {
			t.Errorf("viewer form POST /%s: %d", c[0], r.code)
		}
	}
	for _, c := range [][]string{{"delayed/bulk", "class", "MailJob"}, {"unique/clear", "uid", "u-queued"}} {
		if r := e.postForm(c[0], operatorSecret, c[1:]...); r.code != http.StatusForbidden {
			t.Errorf("operator form POST /%s: %d", c[0], r.code)
		}
	}
	// an admin's request from another origin is refused too
	for _, c := range [][]string{{"delayed/bulk", "class=MailJob"}, {"unique/clear", "uid=u-queued"}, {"plans/nightly/remove", ""}} {
		if r := e.request("POST", c[0], adminSecret, "application/x-www-form-urlencoded", c[1], "Sec-Fetch-Site", "cross-site"); r.code != http.StatusForbidden {
			t.Errorf("cross-site POST /%s: %d", c[0], r.code)
		}
	}
	// nothing changed, nothing audited
	if n := e.do("LLEN", e.raw.Keys().Delayed(d.AtUnix)).(int64); n != 2 {
		t.Errorf("bucket %d holds %d items", d.AtUnix, n)
	}
	var audit struct{ Entries []any }
	e.get("api/audit", viewerSecret).decode(t, &audit)
	if len(audit.Entries) != 0 {
		t.Errorf("audit log: %v", audit.Entries)
	}
	// a viewer's pages offer no action
	for _, p := range []string{"delayed", "plans/nightly", "unique"} {
		if body := e.get(p, viewerSecret).body; strings.Contains(body, `method="post"`) {
			t.Errorf("/%s offers a viewer an action", p)
		}
	}
}

type delayedItem struct {
	AtUnix  int64  `json:"at_unix"`
	Queue   string `json:"queue"`
	Class   string `json:"class"`
	Digest  string `json:"digest"`
	Invalid string `json:"invalid"`
}

func delayedItems(e *env, query string) []delayedItem {
	e.t.Helper()
	var l struct{ Items []delayedItem }
	r := e.get("api/delayed?limit=1000&"+query, viewerSecret)
	if r.code != http.StatusOK {
		e.t.Fatalf("api/delayed: %d %s", r.code, r.body)
	}
	r.decode(e.t, &l)
	return l.Items
}

func firstDelayed(e *env, class string) delayedItem {
	e.t.Helper()
	for _, it := range delayedItems(e, "") {
		if it.Class == class {
			return it
		}
	}
	e.t.Fatalf("no delayed %s", class)
	return delayedItem{}
}

func lastAudit(e *env) client.AuditEntry {
	e.t.Helper()
	es, err := e.c.Audit(ctx(), 0, 1)
	if err != nil || len(es) == 0 {
		e.t.Fatalf("audit: %v %v", es, err)
	}
	return es[0]
}

func TestDelayedRemoveOneByContent(t *testing.T) {
	e := newEnv(t)
	seedScheduled(e)
	k := e.raw.Keys()
	// resque-scheduler's NoArgsJob shares its bucket with a MailJob
	d := firstDelayed(e, "NoArgsJob")
	r := e.postJSON("api/delayed/remove", operatorSecret, map[string]any{"at_unix": d.AtUnix, "digest": d.Digest})
	if r.code != http.StatusOK || !strings.Contains(r.body, `"removed": 1`) {
		t.Fatalf("remove: %d %s", r.code, r.body)
	}
	if items := e.do("LRANGE", k.Delayed(d.AtUnix), 0, -1).([]any); len(items) != 1 || !strings.Contains(string(items[0].([]byte)), "MailJob") {
		t.Errorf("bucket left: %q", items)
	}
	if a := lastAudit(e); a.Action != "delayed.remove" || a.Who != "opal" || a.Count != 1 || !strings.Contains(a.Target, "NoArgsJob") {
		t.Errorf("audit: %+v", a)
	}
	// again: gone, nothing done
	if r := e.postJSON("api/delayed/remove", operatorSecret, map[string]any{"at_unix": d.AtUnix, "digest": d.Digest}); r.code != http.StatusConflict {
		t.Errorf("again: %d %s", r.code, r.body)
	}
	// an item that is not a job goes by its content too, through the form
	var bad delayedItem
	for _, it := range delayedItems(e, "") {
		if it.Invalid != "" {
			bad = it
			break
		}
	}
	before := e.do("LLEN", k.Delayed(bad.AtUnix)).(int64)
	r = e.postForm("delayed/remove", operatorSecret, "at", fmt.Sprint(bad.AtUnix), "digest", bad.Digest)
	checkPage(t, "remove a bad item", r)
	if after := e.do("LLEN", k.Delayed(bad.AtUnix)).(int64); after != before-1 {
		t.Errorf("bucket of bad items: %d, then %d", before, after)
	}
	// the last item of a bucket takes the bucket off the schedule
	g := firstDelayed(e, "GoDelayed")
	if r := e.postJSON("api/delayed/remove", operatorSecret, map[string]any{"at_unix": g.AtUnix, "digest": g.Digest}); r.code != http.StatusOK {
		t.Fatalf("remove GoDelayed: %d %s", r.code, r.body)
	}
	if v := e.do("ZSCORE", k.DelayedSchedule(), fmt.Sprint(g.AtUnix)); v != nil {
		t.Errorf("bucket %d still scheduled", g.AtUnix)
	}
}

func TestDelayedRemoveAllAfterPreview(t *testing.T) {
	e := newEnv(t)
	seedScheduled(e)
	var cnt struct{ Count int64 }
	e.get("api/delayed/count?class=MailJob&queue=mail", viewerSecret).decode(t, &cnt)
	if cnt.Count < 2 {
		t.Fatalf("MailJob on mail: %d", cnt.Count)
	}
	pv := e.get("delayed/bulk?class=MailJob&queue=mail", adminSecret)
	checkPage(t, "preview", pv)
	if !strings.Contains(pv.body, fmt.Sprintf("%d delayed items match", cnt.Count)) {
		t.Errorf("preview does not state %d: %.2000s", cnt.Count, pv.body)
	}
	// a count that changed since the preview is refused
	if r := e.postJSON("api/delayed/remove_all", adminSecret, map[string]any{"class": "MailJob", "queue": "mail", "expect": cnt.Count + 1}); r.code != http.StatusConflict {
		t.Errorf("stale expect: %d %s", r.code, r.body)
	}
	r := e.postForm("delayed/bulk", adminSecret, "class", "MailJob", "queue", "mail", "previewed", fmt.Sprint(cnt.Count))
	checkPage(t, "remove all", r)
	if !strings.Contains(r.body, fmt.Sprintf("Removed %d delayed items", cnt.Count)) {
		t.Errorf("result: %.2000s", r.body)
	}
	for _, it := range delayedItems(e, "") {
		if it.Class == "MailJob" && it.Queue == "mail" {
			t.Errorf("left: %+v", it)
		}
	}
	if firstDelayed(e, "GoDelayed").Class == "" {
		t.Error("GoDelayed removed too")
	}
	if a := lastAudit(e); a.Action != "delayed.remove_all" || a.Who != "ada" || a.Count != cnt.Count || !strings.Contains(a.Detail, fmt.Sprintf("previewed %d", cnt.Count)) {
		t.Errorf("audit: %+v", a)
	}
	// no filter clears the delayed queue
	r = e.postJSON("api/delayed/remove_all", adminSecret, map[string]any{})
	if r.code != http.StatusOK || len(delayedItems(e, "")) != 0 {
		t.Errorf("clear: %d %s; %d left", r.code, r.body, len(delayedItems(e, "")))
	}
	if a := lastAudit(e); a.Action != "delayed.clear" {
		t.Errorf("audit: %+v", a)
	}
}

func TestPlanPauseResumeRemove(t *testing.T) {
	e := newEnv(t)
	seedScheduled(e)
	paused := func() bool {
		var v struct{ Paused bool }
		e.get("api/plans/nightly", viewerSecret).decode(t, &v)
		return v.Paused
	}
	r := e.postForm("plans/nightly/pause", operatorSecret)
	checkPage(t, "pause", r)
	if !paused() || !strings.Contains(r.body, "Paused plan nightly") {
		t.Fatalf("not paused: %.1000s", r.body)
	}
	if a := lastAudit(e); a.Action != "plan.pause" || a.Target != "plan nightly" || a.Count != 1 {
		t.Errorf("audit: %+v", a)
	}
	if !strings.Contains(e.get("plans/nightly", viewerSecret).body, `<dd id="plan-state">paused</dd>`) {
		t.Error("the plan's page does not say paused")
	}
	if r := e.postJSON("api/plans/nightly/pause", operatorSecret, nil); r.code != http.StatusOK || !strings.Contains(r.body, `"changed": false`) {
		t.Errorf("pause again: %d %s", r.code, r.body)
	}
	if r := e.postJSON("api/plans/nightly/resume", operatorSecret, nil); r.code != http.StatusOK || paused() {
		t.Errorf("resume: %d %s", r.code, r.body)
	}
	if r := e.postJSON("api/plans/nightly/explode", operatorSecret, nil); r.code != http.StatusNotFound {
		t.Errorf("unknown action: %d", r.code)
	}
	if r := e.postJSON("api/plans/nope/pause", operatorSecret, nil); r.code != http.StatusNotFound {
		t.Errorf("no such plan: %d", r.code)
	}
	// the broken plan can be removed
	for _, id := range []string{"nightly", "broken"} {
		if r := e.postJSON("api/plans/"+id+"/remove", operatorSecret, nil); r.code != http.StatusOK {
			t.Errorf("remove %s: %d %s", id, r.code, r.body)
		}
		if r := e.get("api/plans/"+id, viewerSecret); r.code != http.StatusNotFound {
			t.Errorf("plan %s after remove: %d", id, r.code)
		}
	}
	if a := lastAudit(e); a.Action != "plan.remove" || a.Target != "plan broken" {
		t.Errorf("audit: %+v", a)
	}
}

func TestUniqueClearReleasesParkedJob(t *testing.T) {
	e := newEnv(t)
	seedScheduled(e)
	r := e.postForm("unique/clear", adminSecret, "uid", "u-running")
	checkPage(t, "clear", r)
	if !strings.Contains(r.body, "released its parked job") {
		t.Errorf("result: %.1000s", r.body)
	}
	// released with its deferrableBy: delayed by a minute
	if p := firstDelayed(e, "Parked"); p.Queue != "go" {
		t.Errorf("the released job: %+v", p)
	}
	if a := lastAudit(e); a.Action != "unique.clear" || a.Who != "ada" || a.Detail != "released" {
		t.Errorf("audit: %+v", a)
	}
	var st struct{ State string }
	e.get("api/unique/u-running", viewerSecret).decode(t, &st)
	if st.State == "running" {
		t.Errorf("u-running after clear: %q", st.State)
	}
	if r := e.postJSON("api/unique/u-queued/clear", adminSecret, nil); r.code != http.StatusOK || !strings.Contains(r.body, `"cleared"`) {
		t.Errorf("clear u-queued: %d %s", r.code, r.body)
	}
	if r := e.postJSON("api/unique/u-none/clear", adminSecret, nil); r.code != http.StatusOK || !strings.Contains(r.body, `"absent"`) {
		t.Errorf("clear u-none: %d %s", r.code, r.body)
	}
}
