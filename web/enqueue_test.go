package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// An operator enqueues a job from a queue's page or the API, at once or
// through the delayed queue, with enqueue's checks; a viewer cannot; the
// payload keeps the args as given (unicode and HTML included); audited.
func TestQueueEnqueueForm(t *testing.T) {
	e := newEnv(t)
	if body := e.get("queues/mail", operatorSecret).body; !strings.Contains(body, `action="/queues/mail/enqueue"`) {
		t.Errorf("an operator's queue page has no enqueue form:\n%.1500s", body)
	}
	if body := e.get("queues/mail", viewerSecret).body; strings.Contains(body, `/enqueue"`) {
		t.Error("a viewer's queue page offers to enqueue")
	}
	if r := e.postForm("queues/mail/enqueue", viewerSecret, "class", "Mail"); r.code != http.StatusForbidden {
		t.Errorf("viewer's enqueue: %d", r.code)
	}
	if r := e.request("POST", "queues/mail/enqueue", operatorSecret, "application/x-www-form-urlencoded", "class=Mail", "Origin", "http://evil.example"); r.code != http.StatusForbidden {
		t.Errorf("cross-origin enqueue: %d", r.code)
	}
	r := e.postForm("queues/mail/enqueue", operatorSecret, "class", "Mail<b>", "args", `["é", "<script>x</script>", 12345678901234567890]`)
	if r.code != http.StatusOK || !strings.Contains(r.body, "Enqueued a job of Mail&lt;b&gt; on queue mail.") {
		t.Fatalf("enqueue: %d %.1500s", r.code, r.body)
	}
	jobs := e.do("LRANGE", e.key("queue:mail"), 0, -1).([]any)
	if len(jobs) != 1 {
		t.Fatalf("queue holds %d jobs", len(jobs))
	}
	var p struct {
		Class string          `json:"class"`
		Args  json.RawMessage `json:"args"`
		ID    string          `json:"id"`
	}
	if err := json.Unmarshal(jobs[0].([]byte), &p); err != nil || p.Class != "Mail<b>" || string(p.Args) != `["é","<script>x</script>",12345678901234567890]` || p.ID == "" {
		t.Errorf("payload %s: %v", jobs[0], err)
	}
	if e.do("SISMEMBER", e.key("queues"), "mail").(int64) != 1 {
		t.Error("the queue is not in the queues set")
	}
	r = e.postForm("queues/mail/enqueue", operatorSecret, "class", "Later", "args", `[1]`, "at", "2030-01-02T03:04:05Z")
	if r.code != http.StatusOK || !strings.Contains(r.body, "until 2030-01-02T03:04:05Z") {
		t.Errorf("delayed enqueue: %d %.1500s", r.code, r.body)
	}
	if items := e.do("LRANGE", e.key("delayed:1893553445"), 0, -1).([]any); len(items) != 1 || string(items[0].([]byte)) != `{"class":"Later","args":[1],"queue":"mail"}` {
		t.Errorf("delayed item %q, want resque-scheduler's bytes", items)
	}
	for _, tc := range []struct {
		fields []string
		says   string
	}{
		{[]string{"class", ""}, "class"},
		{[]string{"class", "C", "args", "5"}, "args"},
		{[]string{"class", "C", "args", "[1"}, "args"},
		{[]string{"class", "C", "at", "tomorrow"}, "at"},
		{[]string{"class", "C", "in", "soon"}, "in"},
		{[]string{"class", "C", "at", "2030-01-02T03:04:05Z", "in", "5m"}, "not both"},
		{[]string{"class", "C", "in", "1000000h"}, "100 years"},
	} {
		if r := e.postForm("queues/mail/enqueue", operatorSecret, tc.fields...); r.code != http.StatusBadRequest || !strings.Contains(r.body, tc.says) {
			t.Errorf("enqueue %q: %d, want 400 saying %q: %.600s", tc.fields, r.code, tc.says, r.body)
		}
	}
	if n := e.do("LLEN", e.key("queue:mail")).(int64); n != 1 {
		t.Errorf("refused enqueues wrote jobs: %d in the queue", n)
	}
	// the API
	var res struct {
		Queue, Class, ID string
		DueAt            *string `json:"due_at"`
	}
	e.postJSON("api/queues/mail/enqueue", operatorSecret, map[string]any{"class": "Api", "args": `{"a":1}`}).decode(t, &res)
	if res.Queue != "mail" || res.Class != "Api" || res.ID == "" || res.DueAt != nil {
		t.Errorf("API enqueue %+v", res)
	}
	e.postJSON("api/queues/mail/enqueue", operatorSecret, map[string]any{"class": "Api", "in": "10m"}).decode(t, &res)
	if res.DueAt == nil {
		t.Errorf("API delayed enqueue %+v", res)
	}
	audit := e.get("audit", adminSecret).body
	for _, want := range []string{"queue.enqueue", "queue.enqueue_at"} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit log has no %s", want)
		}
	}
}
