package cli

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/schedule"
)

// oneLine checks a refusal: exit 1, one line on stderr, nothing on stdout.
func refusedOneLine(t *testing.T, what string, code int, out, errOut string) {
	t.Helper()
	if code != ExitFailure || out != "" || strings.Count(errOut, "\n") != 1 {
		t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and one line", what, code, out, errOut)
	}
}

func TestDelayedQueueNowCommand(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	k := e.client.Keys()
	e.delay("mail", `{"class":"Mail","args":[1,"two"]}`, 1795299965)
	e.delay("mail", `{"class":"Other","args":[]}`, 1795299965)
	e.delay("high", `{"class":"Mail","args":[3],"id":"abc"}`, 1795300025)

	// two different items match: refused, nothing queued
	if code, _, errOut := e.delayedCmd("queue-now", "1795299965"); code != ExitUsage || !strings.Contains(errOut, "--all") {
		t.Errorf("ambiguous: %d %q", code, errOut)
	}
	code, out, errOut := e.delayedCmd("queue-now", "--class", "Mail", "1795299965")
	if code != 0 || !strings.Contains(out, "queued Mail to queue mail now") || !strings.Contains(out, "1 item left") {
		t.Fatalf("queue-now --class Mail: %d %q %q", code, out, errOut)
	}
	if q := e.items("mail"); len(q) != 1 || q[0] != `{"class":"Mail","args":[1,"two"]}` {
		t.Errorf("queue:mail = %q", q)
	}
	if n, _ := redis.Int(e.client.Do(context.Background(), "LLEN", k.Delayed(1795299965))); n != 1 {
		t.Errorf("bucket holds %d, want 1", n)
	}
	code, out, errOut = e.delayedCmd("queue-now", "--class", "Mail", "2026-11-21T22:26:05Z")
	refusedOneLine(t, "queued already", code, out, errOut)
	if q := e.items("mail"); len(q) != 1 {
		t.Errorf("queue:mail holds %d after a refusal", len(q))
	}

	// by id, with --json
	code, out, errOut = e.delayedCmd("queue-now", "--json", "--id", "abc", "1795300025")
	if code != 0 || !strings.Contains(out, `"unscheduled": true`) || !strings.Contains(out, `"queue": "high"`) {
		t.Fatalf("queue-now --id: %d %q %q", code, out, errOut)
	}
	if n, _ := redis.Int(e.client.Do(context.Background(), "ZCARD", k.DelayedSchedule())); n != 1 {
		t.Errorf("schedule holds %d buckets, want 1", n)
	}
	if code, _, _ := e.delayedCmd("queue-now", "--args", "[1]", "1795300025"); code != ExitUsage {
		t.Errorf("--args without --class: exit %d", code)
	}
}

func TestPlanQueueNowCommand(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	k := e.client.Keys()
	if code, _, errOut := e.plan("add", "--queue", "q", "--class", "C", "--args", `[1]`, "--every", "5m", "--id", "p1"); code != 0 {
		t.Fatalf("plan add: %d %s", code, errOut)
	}
	ctx := context.Background()
	before, _ := redis.String(e.client.Do(ctx, "GET", k.Plan("p1")))
	sched, _ := redis.Strings(e.client.Do(ctx, "ZRANGE", k.PlanSchedule(), 0, -1, "WITHSCORES"))
	code, out, errOut := e.plan("queue-now", "p1")
	if code != 0 || !strings.Contains(out, "queued the job of plan p1 to queue q") {
		t.Fatalf("queue-now: %d %q %q", code, out, errOut)
	}
	q := e.items("q")
	if len(q) != 1 || !strings.HasPrefix(q[0], `{"class":"C","args":[1],"queue":"q","id":"`) || !strings.Contains(q[0], `"queue_time":`) {
		t.Errorf("queue:q = %q", q)
	}
	after, _ := redis.String(e.client.Do(ctx, "GET", k.Plan("p1")))
	sched2, _ := redis.Strings(e.client.Do(ctx, "ZRANGE", k.PlanSchedule(), 0, -1, "WITHSCORES"))
	if after != before || strings.Join(sched, " ") != strings.Join(sched2, " ") {
		t.Errorf("the plan or its schedule changed: %q -> %q, %v -> %v", before, after, sched, sched2)
	}
	code, out, errOut = e.plan("queue-now", "nope")
	refusedOneLine(t, "no plan", code, out, errOut)
}

func TestScheduleQueueNowCommand(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	k := e.client.Keys()
	e.loadDumps([2]string{"resque-scheduler-5.0.0", "set-schedule"})
	ctx := context.Background()
	code, out, errOut := e.schedule("queue-now", "--schedule", goodScheduleFile, "every_thirty")
	if code != 0 || !strings.Contains(out, "queued Ping (schedule every_thirty) to queue default") {
		t.Fatalf("queue-now every_thirty: %d %q %q", code, out, errOut)
	}
	// resque-scheduler's enqueue_from_config: an object args is wrapped in
	// an array, the bytes a scheduler's fire pushes
	entries, err := schedule.LoadFile(goodScheduleFile, "")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(entries, func(en schedule.Entry) bool { return en.Name == "every_thirty" })
	want, err := entries[i].Payload()
	if err != nil {
		t.Fatal(err)
	}
	if q := e.items("default"); len(q) != 1 || q[0] != string(want) || !strings.HasPrefix(q[0], `{"class":"Ping","args":[{"host":"db1",`) {
		t.Errorf("queue:default = %q, want %s", q, want)
	}
	// a persistent schedule (Resque.set_schedule), without --schedule
	if code, out, errOut = e.schedule("queue-now", "persisted_every_5m"); code != 0 {
		t.Fatalf("queue-now persisted_every_5m: %d %q %q", code, out, errOut)
	}
	if q := e.items("mail"); len(q) != 1 || q[0] != `{"class":"MailJob","args":["dyn",3.5]}` {
		t.Errorf("queue:mail = %q", q)
	}
	// the records are left alone: schedulers fire the next slot as before
	for _, key := range []string{k.LastEnqueuedAt(), k.ScheduleSlots()} {
		if n, _ := redis.Int(e.client.Do(ctx, "EXISTS", key)); n != 0 {
			t.Errorf("%s written", key)
		}
	}
	code, out, errOut = e.schedule("queue-now", "nope")
	refusedOneLine(t, "no schedule", code, out, errOut)
}
