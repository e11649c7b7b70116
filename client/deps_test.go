package client_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/client"
)

// rubyReads decodes a payload as Ruby Resque's Job.decode and a
// php-resque or node-resque worker read it: a JSON object with a string
// class and an array of args; other fields are ignored.
func rubyReads(t *testing.T, where, raw string) (class string, args json.RawMessage) {
	t.Helper()
	var p struct {
		Class *string
		Args  json.RawMessage
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil || p.Class == nil || len(p.Args) == 0 || p.Args[0] != '[' {
		t.Fatalf("%s: %s is no Resque job as Ruby reads it: %v", where, raw, err)
	}
	return *p.Class, p.Args
}

// Every payload dependencies and groups write (a held job, a released one,
// one failed for its parent, a group's job and its callback) is a Resque
// job whose class and args Ruby reads as the fixtures' producer wrote them.
func TestClientDepsPayloadsReadAsRubyJobs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	argsText, args := rubyArgs(t)
	parent, err := e.c.EnqueueRaw(ctx(), "mail", "MailJob", []byte(argsText), client.Group("g"))
	if err != nil {
		t.Fatal(err)
	}
	child, err := e.c.EnqueueRaw(ctx(), "mail", "MailJob", []byte(argsText), client.After(parent.ID), client.OnParentFailure("run"))
	if err != nil || child.DepState != "held" || child.Waiting != 1 {
		t.Fatalf("child %+v %v", child, err)
	}
	if _, err := e.c.EnqueueRaw(ctx(), "mail", "MailJob", []byte(argsText), client.AfterGroup("g")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.OnGroupComplete(ctx(), "g", "done", "Done", args...); err != nil {
		t.Fatal(err)
	}
	deps, err := e.c.JobDependencies(ctx(), child.ID)
	if err != nil || deps.State != "held" || len(deps.Parents) != 1 || deps.Parents[0].State != "pending" {
		t.Fatalf("job deps %+v %v", deps, err)
	}
	payloads := map[string]string{"held": string(deps.Payload)}
	for i, p := range e.strs("LRANGE", e.key("queue:mail"), 0, -1) {
		payloads["queued "+string(rune('0'+i))] = p
	}
	for where, raw := range payloads {
		class, got := rubyReads(t, where, raw)
		if class != "MailJob" || string(got) != argsText {
			t.Errorf("%s: Ruby reads %s %s, want MailJob %s", where, class, got, argsText)
		}
	}
	if !strings.Contains(payloads["held"], `"after":["`+parent.ID+`"]`) || !strings.Contains(payloads["queued 0"], `"group":"g"`) {
		t.Errorf("fields: %v", payloads)
	}
	if _, err := e.c.EnqueueRaw(ctx(), "mail", "MailJob", nil, client.Group("g"), client.Plain()); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("Plain with Group: %v", err)
	}
	st, err := e.c.GroupInfo(ctx(), "g")
	if err != nil || st.Total != 1 || st.Pending != 1 || !st.Sealed || st.Fired || len(st.Callbacks) != 1 {
		t.Fatalf("group %+v %v", st, err)
	}
}
