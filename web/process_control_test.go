package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// The Workers page lists the resque-go processes with Quiet (or Resume)
// and Stop for operators; the forms and the API store and publish the
// request, refuse viewers, cross-origin posts, an unconfirmed stop and a
// Ruby worker's process, and are audited.
func TestProcessControlForms(t *testing.T) {
	e := newEnv(t)
	wid := "web1:42-1:mail"
	e.do("SADD", e.key("workers"), wid, "ruby1:7:mail")
	e.do("HSET", e.key("resque-go:heartbeat_interval"), wid, "5")
	e.do("SET", e.key("worker:ruby1:7:mail:started"), "2026-11-21 21:23:41 +0000")
	e.do("SET", e.key("resque-go:process:web1:42"), `{"pid":42,"host":"web1","started_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","worker_ids":["`+wid+`"],"slots_total":1}`)
	stored := func() string {
		v, _ := e.do("GET", e.key("resque-go:control:web1:42")).([]byte)
		action, _, _ := strings.Cut(string(v), " ")
		return action
	}

	page := e.get("workers", operatorSecret)
	checkPage(t, "workers", page)
	for _, want := range []string{`<table id="processes">`, `web1:42</td>`, `action="/workers/process/quiet"`, `href="/workers/process/stop?process=web1%3A42"`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("an operator's Workers page lacks %s:\n%.3000s", want, page.body)
		}
	}
	if body := e.get("workers", viewerSecret).body; !strings.Contains(body, "web1:42</td>") || strings.Contains(body, "workers/process/") {
		t.Error("a viewer's Workers page does not list the process, or offers its buttons")
	}
	if de := e.request("GET", "workers", operatorSecret, "", "", "Accept-Language", "de"); !strings.Contains(de.body, ">Ruhigstellen</button>") || !strings.Contains(de.body, ">Beenden</a>") {
		t.Errorf("German Workers page: %.3000s", de.body)
	}

	if r := e.postForm("workers/process/quiet", viewerSecret, "process", "web1:42"); r.code != http.StatusForbidden {
		t.Errorf("viewer: %d", r.code)
	}
	if r := e.request("POST", "workers/process/quiet", operatorSecret, "application/x-www-form-urlencoded", "process=web1:42", "Origin", "http://evil.example"); r.code != http.StatusForbidden {
		t.Errorf("cross-origin: %d", r.code)
	}
	if r := e.postForm("workers/process/stop", operatorSecret, "process", "web1:42"); r.code != http.StatusBadRequest {
		t.Errorf("unconfirmed stop: %d %.300s", r.code, r.body)
	}
	if stored() != "" {
		t.Fatal("a refused request was stored")
	}
	if r := e.postForm("workers/process/quiet", operatorSecret, "process", "web1:42"); r.code != http.StatusOK || !strings.Contains(r.body, "Requested quiet of process web1:42") {
		t.Errorf("quiet: %d %.300s", r.code, r.body)
	}
	if got := stored(); got != "quiet" {
		t.Errorf("stored request %q, want quiet", got)
	}
	confirm := e.get("workers/process/stop?process=web1:42", operatorSecret)
	checkPage(t, "stop confirmation", confirm)
	if !strings.Contains(confirm.body, `name="confirm" value="yes"`) || !strings.Contains(confirm.body, `value="web1:42"`) {
		t.Errorf("stop confirmation page: %.2000s", confirm.body)
	}
	if r := e.postForm("workers/process/stop", operatorSecret, "process", "web1:42", "confirm", "yes"); r.code != http.StatusOK {
		t.Errorf("stop: %d %.300s", r.code, r.body)
	}
	if got := stored(); got != "stop" {
		t.Errorf("stored request %q, want stop", got)
	}
	if r := e.request("POST", "api/processes/web1:42/resume", viewerSecret, "", ""); r.code != http.StatusForbidden {
		t.Errorf("API viewer: %d", r.code)
	}
	if r := e.request("POST", "api/processes/web1:42/resume", operatorSecret, "", ""); r.code != http.StatusOK || !strings.Contains(r.body, `"requested": true`) {
		t.Errorf("API resume: %d %.300s", r.code, r.body)
	}
	if got := stored(); got != "resume" {
		t.Errorf("stored request %q, want resume", got)
	}
	if r := e.request("POST", "api/processes/web1:42/pause", operatorSecret, "", ""); r.code != http.StatusNotFound {
		t.Errorf("API unknown action: %d", r.code)
	}
	if r := e.postForm("workers/process/quiet", operatorSecret, "process", "ruby1:7"); r.code != http.StatusConflict || !strings.Contains(r.body, "not a resque-go process") {
		t.Errorf("Ruby worker's process: %d %.300s", r.code, r.body)
	}
	if r := e.request("POST", "api/processes/ruby1:7/stop", operatorSecret, "", ""); r.code != http.StatusConflict {
		t.Errorf("API, Ruby worker's process: %d", r.code)
	}
	audit := e.get("api/audit", adminSecret).body
	for _, want := range []string{"process.quiet", "process.stop", "process.resume", "process web1:42"} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit lacks %s: %.800s", want, audit)
		}
	}
}
