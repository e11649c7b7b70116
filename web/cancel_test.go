package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// The Workers page offers operators a Cancel button for a running job;
// the form stores and publishes the request for that claim, refuses
// viewers, cross-origin posts, an idle worker and a job that has ended
// since the page was shown, and is audited.
func TestWorkerCancelForm(t *testing.T) {
	e := newEnv(t)
	wid := "web1:42:mail"
	e.do("SADD", e.key("workers"), wid)
	e.do("SET", e.key("worker:"+wid), `{"queue":"mail","run_at":"2026-01-01T00:00:00Z","payload":{"class":"Report","args":[]}}`)
	e.do("HSET", e.key("resque-go:claim_seq"), wid, "5")
	// a Ruby worker's job cannot be cancelled: no button for it
	ruby := "rubyhost:7:mail"
	e.do("SADD", e.key("workers"), ruby)
	e.do("SET", e.key("worker:"+ruby), `{"queue":"mail","run_at":"2026-01-01 00:00:00 +0000","payload":{"class":"Report","args":[]}}`)
	e.do("SET", e.key("worker:"+ruby+":started"), "2026-01-01 00:00:00 +0000")
	if body := e.get("workers", operatorSecret).body; strings.Count(body, `action="/workers/cancel"`) != 0 {
		t.Errorf("Cancel offered before the worker is known as resque-go's:\n%.2000s", body)
	}
	e.do("HSET", e.key("resque-go:heartbeat_interval"), wid, "5") // as a resque-go worker registers
	if body := e.get("workers", operatorSecret).body; strings.Count(body, `action="/workers/cancel"`) != 1 || !strings.Contains(body, `value="`+wid+`"`) {
		t.Errorf("an operator's Workers page has not one Cancel form, for %s:\n%.2000s", wid, body)
	}
	if body := e.get("workers", viewerSecret).body; strings.Contains(body, `workers/cancel`) {
		t.Error("a viewer's Workers page offers Cancel")
	}
	shown := "1767225600" // 2026-01-01T00:00:00Z
	if r := e.postForm("workers/cancel", viewerSecret, "worker", wid, "run_at", shown); r.code != http.StatusForbidden {
		t.Errorf("viewer: %d", r.code)
	}
	if r := e.request("POST", "workers/cancel", operatorSecret, "application/x-www-form-urlencoded", "worker="+wid, "Origin", "http://evil.example"); r.code != http.StatusForbidden {
		t.Errorf("cross-origin: %d", r.code)
	}
	if r := e.postForm("workers/cancel", operatorSecret, "worker", wid, "run_at", "1767225599"); r.code != http.StatusConflict {
		t.Errorf("a job that ended since the page: %d %.300s", r.code, r.body)
	}
	if v := e.do("EXISTS", e.key("resque-go:cancel:"+wid)); v != int64(0) {
		t.Fatal("a refused cancel was stored")
	}
	if r := e.postForm("workers/cancel", operatorSecret, "worker", wid, "run_at", shown); r.code != http.StatusOK || !strings.Contains(r.body, "Cancel requested") {
		t.Errorf("cancel: %d %.300s", r.code, r.body)
	}
	if v, _ := e.do("GET", e.key("resque-go:cancel:"+wid)).([]byte); string(v) != "5 0" {
		t.Errorf("stored request = %q, want \"5 0\"", v)
	}
	if r := e.get("api/audit", adminSecret); !strings.Contains(r.body, "worker.cancel_job") || !strings.Contains(r.body, "worker "+wid) {
		t.Errorf("not audited: %.500s", r.body)
	}
	if r := e.postForm("workers/cancel", operatorSecret, "worker", "web1:43:mail"); r.code != http.StatusConflict || !strings.Contains(r.body, "no job running on") {
		t.Errorf("idle worker: %d %.300s", r.code, r.body)
	}
}
