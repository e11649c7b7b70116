package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// An admin adds a calendar from the Calendars page's form or the API (the
// same checks as calendar add: a bad date, cron line or zone is a 400, a
// taken name a 409 unless Replace is ticked); an operator cannot; each
// change is audited.
func TestCalendarAddForm(t *testing.T) {
	e := newEnv(t)
	if body := e.get("calendars", adminSecret).body; !strings.Contains(body, `action="/calendars"`) {
		t.Errorf("an admin's Calendars page has no form to add one:\n%.1500s", body)
	}
	if body := e.get("calendars", operatorSecret).body; strings.Contains(body, `action="/calendars"`) {
		t.Error("an operator's Calendars page offers to add a calendar")
	}
	if r := e.postForm("calendars", operatorSecret, "name", "h", "dates", "2026-12-25"); r.code != http.StatusForbidden {
		t.Errorf("operator's add: %d", r.code)
	}
	if r := e.request("POST", "calendars", adminSecret, "application/x-www-form-urlencoded", "name=h&dates=2026-12-25", "Origin", "http://evil.example"); r.code != http.StatusForbidden {
		t.Errorf("cross-origin add: %d", r.code)
	}
	r := e.postForm("calendars", adminSecret, "name", "holidays<b>", "dates", "2026-12-25, 2026-12-26\n2027-01-01",
		"cron", "* * * * 0,6\n* 0-7 * * *", "timezone", "Europe/Prague")
	if r.code != http.StatusOK || !strings.Contains(r.body, "Saved calendar holidays&lt;b&gt;.") {
		t.Fatalf("add: %d %.1500s", r.code, r.body)
	}
	var cv struct {
		Name     string   `json:"name"`
		Timezone string   `json:"timezone"`
		Dates    []string `json:"dates"`
		Cron     []string `json:"cron"`
	}
	e.get("api/calendars/holidays%3Cb%3E", viewerSecret).decode(t, &cv)
	if cv.Timezone != "Europe/Prague" || strings.Join(cv.Dates, " ") != "2026-12-25 2026-12-26 2027-01-01" || strings.Join(cv.Cron, "|") != "* * * * 0,6|* 0-7 * * *" {
		t.Errorf("stored %+v", cv)
	}
	for _, tc := range []struct {
		fields []string
		code   int
		says   string
	}{
		{[]string{"name", "holidays<b>", "dates", "2027-05-01"}, http.StatusConflict, "exists"},
		{[]string{"name", "bad", "dates", "2026-02-30"}, http.StatusBadRequest, "2026-02-30"},
		{[]string{"name", "bad", "cron", "* * *"}, http.StatusBadRequest, "* * *"},
		{[]string{"name", "bad", "dates", "2026-12-25", "timezone", "Mars/Olympus"}, http.StatusBadRequest, "Mars/Olympus"},
		{[]string{"name", "", "dates", "2026-12-25"}, http.StatusBadRequest, "name"},
	} {
		if r := e.postForm("calendars", adminSecret, tc.fields...); r.code != tc.code || !strings.Contains(r.body, tc.says) {
			t.Errorf("add %q: %d, want %d saying %q: %.600s", tc.fields, r.code, tc.code, tc.says, r.body)
		}
	}
	if r := e.postForm("calendars", adminSecret, "name", "holidays<b>", "dates", "2027-05-01", "replace", "1"); r.code != http.StatusOK {
		t.Errorf("replace: %d %.600s", r.code, r.body)
	}
	e.get("api/calendars/holidays%3Cb%3E", viewerSecret).decode(t, &cv)
	if strings.Join(cv.Dates, " ") != "2027-05-01" || len(cv.Cron) != 0 || cv.Timezone != "UTC" {
		t.Errorf("replaced %+v", cv)
	}
	// the API
	if r := e.postJSON("api/calendars", operatorSecret, map[string]any{"name": "w", "cron": []string{"* * * * 0,6"}}); r.code != http.StatusForbidden {
		t.Errorf("operator's API add: %d", r.code)
	}
	r = e.postJSON("api/calendars", adminSecret, map[string]any{"name": "weekends", "cron": []string{"* * * * 0,6"}, "timezone": "UTC"})
	if r.code != http.StatusOK || !strings.Contains(r.body, `"weekends"`) {
		t.Errorf("API add: %d %s", r.code, r.body)
	}
	if r := e.postJSON("api/calendars", adminSecret, map[string]any{"name": "x", "dates": []string{"soon"}}); r.code != http.StatusBadRequest {
		t.Errorf("API add of a bad date: %d %s", r.code, r.body)
	}
	audit := e.get("audit", adminSecret).body
	for _, want := range []string{"calendar.add", "calendar.replace"} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit log has no %s", want)
		}
	}
}
