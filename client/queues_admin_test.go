package client_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/fixtures"
)

func TestQueueRemoveJobsAndClear(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	e.load(fixtures.MustLoad("php-resque-chrisboulton", "enqueue"))
	e.do("RPUSH", e.key("queue:mail"), `{"class":"Task","args":{"k":"v","n":1},"id":"v3"}`, "garbage")
	var steps []client.RemoveProgress
	n, err := e.c.RemoveJobs(ctx(), "mail", client.JobFilter{Class: "Mail_Job", Args: json.RawMessage(`{"k":"v"}`)},
		func(p client.RemoveProgress) { steps = append(steps, p) })
	if err != nil || n != 1 {
		t.Fatalf("remove php wrapped args: %d %v", n, err)
	}
	if len(steps) != 1 || steps[0] != (client.RemoveProgress{Total: 5, Examined: 5, Removed: 1}) {
		t.Errorf("progress %+v", steps)
	}
	if n, err = e.c.RemoveJobs(ctx(), "mail", client.JobFilter{Class: "Task", Args: json.RawMessage(`{"k":"v"}`)}, nil); err != nil || n != 1 {
		t.Fatalf("remove v3 args: %d %v", n, err)
	}
	left := e.strs("LRANGE", e.key("queue:mail"), 0, -1)
	if len(left) != 3 || !strings.Contains(left[0], `"args":[[1,`) || left[2] != "garbage" {
		t.Fatalf("queue after removes: %q", left)
	}
	for _, f := range []client.JobFilter{{}, {Class: "A", ID: "x", Args: json.RawMessage(`[]`)}, {Class: "A", Args: json.RawMessage(`7`)}} {
		if _, err := e.c.RemoveJobs(ctx(), "mail", f, nil); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", f, err)
		}
	}
	if n, err := e.c.ClearQueue(ctx(), "mail"); err != nil || n != 3 {
		t.Fatalf("clear: %d %v", n, err)
	}
	if qs, err := e.c.Queues(ctx()); err != nil || !slices.Equal(qs, []client.QueueInfo{{Name: "mail", Size: 0}}) {
		t.Errorf("queues after clear: %v %v", qs, err)
	}
}
