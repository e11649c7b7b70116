package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// An operator adds a plan from the Plans page's form or the API, with plan
// add's checks: one of every, period and cron, whole seconds, JSON args,
// a known misfire policy; a taken id is a 409; a viewer cannot; audited.
func TestPlanAddForm(t *testing.T) {
	e := newEnv(t)
	if body := e.get("plans", operatorSecret).body; !strings.Contains(body, `id="plan-add"`) {
		t.Errorf("an operator's Plans page has no form to add one:\n%.1500s", body)
	}
	if body := e.get("plans", viewerSecret).body; strings.Contains(body, `id="plan-add"`) {
		t.Error("a viewer's Plans page offers to add a plan")
	}
	if r := e.postForm("plans", viewerSecret, "queue", "q", "class", "C", "recurrence", "every", "value", "5m"); r.code != http.StatusForbidden {
		t.Errorf("viewer's add: %d", r.code)
	}
	r := e.postForm("plans", operatorSecret, "id", "nightly-<b>", "queue", "reports", "class", "Report", "args", `[1,"<script>"]`,
		"recurrence", "cron", "value", "0 3 * * *", "timezone", "Europe/Prague", "misfire", "skip")
	if r.code != http.StatusOK || !strings.Contains(r.body, "Added plan nightly-&lt;b&gt;.") {
		t.Fatalf("add: %d %.1500s", r.code, r.body)
	}
	var pv struct {
		ID      string `json:"id"`
		Queue   string `json:"queue"`
		Class   string `json:"class"`
		NextRun string `json:"next_run"`
	}
	e.get("api/plans/nightly-%3Cb%3E", viewerSecret).decode(t, &pv)
	if pv.ID != "nightly-<b>" || pv.Queue != "reports" || pv.Class != "Report" {
		t.Errorf("stored %+v", pv)
	}
	for _, tc := range []struct {
		fields []string
		code   int
		says   string
	}{
		{[]string{"id", "nightly-<b>", "queue", "q", "class", "C", "recurrence", "every", "value", "5m"}, http.StatusConflict, "exists"},
		{[]string{"queue", "q", "class", "C", "recurrence", "every", "value", "1.5s"}, http.StatusBadRequest, "whole seconds"},
		{[]string{"queue", "q", "class", "C", "recurrence", "cron", "value", "* * *"}, http.StatusBadRequest, "* * *"},
		{[]string{"queue", "q", "class", "C", "recurrence", "period", "value", "P1X"}, http.StatusBadRequest, "P1X"},
		{[]string{"queue", "q", "class", "C", "recurrence", "every", "value", "5m", "args", "{nope"}, http.StatusBadRequest, "args"},
		{[]string{"queue", "q", "class", "C", "recurrence", "every", "value", "5m", "misfire", "never"}, http.StatusBadRequest, "misfire"},
		{[]string{"queue", "q", "class", "C", "recurrence", "hourly", "value", "5m"}, http.StatusBadRequest, "recurrence"},
		{[]string{"queue", "", "class", "C", "recurrence", "every", "value", "5m"}, http.StatusBadRequest, "queue"},
		{[]string{"queue", "q", "class", "C", "recurrence", "every", "value", "5m", "start", "soon"}, http.StatusBadRequest, "start"},
	} {
		if r := e.postForm("plans", operatorSecret, tc.fields...); r.code != tc.code || !strings.Contains(r.body, tc.says) {
			t.Errorf("add %q: %d, want %d saying %q: %.600s", tc.fields, r.code, tc.code, tc.says, r.body)
		}
	}
	// the API
	r = e.postJSON("api/plans", operatorSecret, map[string]any{"queue": "mail", "class": "Digest", "every": "15m", "group": "digests"})
	if r.code != http.StatusOK || !strings.Contains(r.body, "Digest") {
		t.Errorf("API add: %d %s", r.code, r.body)
	}
	if r := e.postJSON("api/plans", operatorSecret, map[string]any{"queue": "mail", "class": "Digest", "every": "15m", "cron": "* * * * *"}); r.code != http.StatusBadRequest {
		t.Errorf("API add with two recurrences: %d %s", r.code, r.body)
	}
	if !strings.Contains(e.get("audit", adminSecret).body, "plan.add") {
		t.Error("audit log has no plan.add")
	}
}
