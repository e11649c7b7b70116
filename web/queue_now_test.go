package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Queue now on the Delayed, Plans and Schedules pages and routes: an
// operator's request moves or enqueues one job and is audited; a viewer's
// and a cross-origin one are refused with nothing done.
func TestQueueNowRoutes(t *testing.T) {
	e := newEnv(t)
	seedScheduled(e)
	k := e.raw.Keys()
	d := firstDelayed(e, "NoArgsJob")
	n := func(key string) int64 { return e.do("LLEN", key).(int64) }
	goBefore, mailBefore := n(k.Queue("go")), n(k.Queue("mail")) // seeded jobs

	// refused: viewer (API and form), cross-origin admin
	for _, c := range []struct {
		path string
		body any
	}{
		{"api/delayed/queue_now", map[string]any{"at_unix": d.AtUnix, "digest": d.Digest}},
		{"api/plans/nightly/queue_now", nil},
		{"api/schedules/persisted_every_5m/queue_now", nil},
	} {
		if r := e.postJSON(c.path, viewerSecret, c.body); r.code != http.StatusForbidden {
			t.Errorf("viewer POST /%s: %d %s", c.path, r.code, r.body)
		}
	}
	for _, c := range [][]string{{"delayed/queue_now", "at", fmt.Sprint(d.AtUnix), "digest", d.Digest}, {"plans/nightly/queue_now"}, {"schedules/queue_now", "name", "persisted_every_5m"}} {
		if r := e.postForm(c[0], viewerSecret, c[1:]...); r.code != http.StatusForbidden {
			t.Errorf("viewer form POST /%s: %d", c[0], r.code)
		}
	}
	for _, c := range [][]string{{"delayed/queue_now", fmt.Sprintf("at=%d&digest=%s", d.AtUnix, d.Digest)}, {"plans/nightly/queue_now", ""}, {"schedules/queue_now", "name=persisted_every_5m"}} {
		if r := e.request("POST", c[0], adminSecret, "application/x-www-form-urlencoded", c[1], "Sec-Fetch-Site", "cross-site"); r.code != http.StatusForbidden {
			t.Errorf("cross-site POST /%s: %d", c[0], r.code)
		}
	}
	if m, g, b := n(k.Queue("mail")), n(k.Queue("go")), n(k.Delayed(d.AtUnix)); m != mailBefore || g != goBefore || b != 2 {
		t.Fatalf("a refused request changed something: mail %d, go %d, bucket %d", m, g, b)
	}
	for _, p := range []string{"delayed", "plans/nightly", "schedules"} {
		if body := e.get(p, viewerSecret).body; strings.Contains(body, `method="post"`) {
			t.Errorf("/%s offers a viewer an action", p)
		}
		if body := e.get(p, operatorSecret).body; !strings.Contains(body, "queue_now") {
			t.Errorf("/%s offers an operator no Queue now", p)
		}
	}

	// delayed: resque-scheduler's NoArgsJob, through the form, pushed as
	// Ruby Resque pushes it; its bucket keeps the MailJob
	r := e.postForm("delayed/queue_now", operatorSecret, "at", fmt.Sprint(d.AtUnix), "digest", d.Digest)
	checkPage(t, "queue now a delayed item", r)
	if q := e.do("LRANGE", k.Queue("mail"), 0, -1).([]any); int64(len(q)) != mailBefore+1 || string(q[len(q)-1].([]byte)) != `{"class":"NoArgsJob","args":[]}` {
		t.Errorf("queue:mail = %q", q)
	}
	if n(k.Delayed(d.AtUnix)) != 1 || e.do("ZSCORE", k.DelayedSchedule(), fmt.Sprint(d.AtUnix)) == nil {
		t.Error("the rest of the bucket, or its schedule entry, went")
	}
	if a := lastAudit(e); a.Action != "delayed.queue_now" || a.Who != "opal" || a.Count != 1 || !strings.Contains(a.Target, "NoArgsJob") {
		t.Errorf("audit: %+v", a)
	}
	// again: gone, nothing queued
	if r := e.postJSON("api/delayed/queue_now", operatorSecret, map[string]any{"at_unix": d.AtUnix, "digest": d.Digest}); r.code != http.StatusConflict {
		t.Errorf("again: %d %s", r.code, r.body)
	}
	if n(k.Queue("mail")) != mailBefore+1 {
		t.Error("queued twice")
	}
	// the last item of a bucket, through the API: the bucket leaves the schedule
	g := firstDelayed(e, "GoDelayed")
	r = e.postJSON("api/delayed/queue_now", operatorSecret, map[string]any{"at_unix": g.AtUnix, "digest": g.Digest})
	if r.code != http.StatusOK || !strings.Contains(r.body, `"unscheduled": true`) {
		t.Fatalf("queue now GoDelayed: %d %s", r.code, r.body)
	}
	if n(k.Queue("go")) != goBefore+1 {
		t.Error("GoDelayed not queued")
	}

	// plan: one job now, the plan as it was
	before := string(e.do("GET", k.Plan("nightly")).([]byte))
	r = e.postForm("plans/nightly/queue_now", operatorSecret)
	checkPage(t, "queue a plan now", r)
	if n(k.Queue("go")) != goBefore+2 || string(e.do("GET", k.Plan("nightly")).([]byte)) != before {
		t.Error("plan queue now: no job, or the plan changed")
	}
	if a := lastAudit(e); a.Action != "plan.queue_now" || a.Count != 1 {
		t.Errorf("audit: %+v", a)
	}
	if r := e.postJSON("api/plans/nope/queue_now", operatorSecret, nil); r.code != http.StatusNotFound {
		t.Errorf("no such plan: %d", r.code)
	}

	// schedule: resque-scheduler's persistent schedule, {"class","args"}
	r = e.postJSON("api/schedules/persisted_every_5m/queue_now", operatorSecret, nil)
	if r.code != http.StatusOK {
		t.Fatalf("schedule queue now: %d %s", r.code, r.body)
	}
	if q := e.do("LRANGE", k.Queue("mail"), 0, -1).([]any); int64(len(q)) != mailBefore+2 || string(q[len(q)-1].([]byte)) != `{"class":"MailJob","args":["dyn",3.5]}` {
		t.Errorf("queue:mail = %q", q)
	}
	if a := lastAudit(e); a.Action != "schedule.queue_now" || !strings.Contains(a.Target, "persisted_every_5m") {
		t.Errorf("audit: %+v", a)
	}
	if r := e.postForm("schedules/queue_now", operatorSecret, "name", "nope"); r.code != http.StatusNotFound {
		t.Errorf("no such schedule: %d", r.code)
	}
}
