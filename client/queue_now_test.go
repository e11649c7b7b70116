package client_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/plan"
	"github.com/resque-go/resque-go/unique"
)

// QueueDelayedNow moves one item found by DelayedAt; its errors match
// this package's sentinels and the delayed package's.
func TestClientQueueDelayedNow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	c := e.c
	at := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := c.EnqueueAt(ctx(), at, "mail", "Digest", 1); err != nil {
		t.Fatal(err)
	}
	items, err := c.DelayedAt(ctx(), at)
	if err != nil || len(items) != 1 {
		t.Fatalf("DelayedAt: %v %v", items, err)
	}
	r, err := c.QueueDelayedNow(ctx(), items[0].At, items[0].Raw)
	if err != nil || r.Queue != "mail" || r.Left != 0 || !r.Unscheduled || string(r.Payload) != `{"class":"Digest","args":[1]}` {
		t.Fatalf("QueueDelayedNow = %+v (%s), %v", r, r.Payload, err)
	}
	if q := e.strs("LRANGE", e.key("queue:mail"), 0, -1); len(q) != 1 || q[0] != string(r.Payload) {
		t.Errorf("queue:mail = %q", q)
	}
	_, err = c.QueueDelayedNow(ctx(), items[0].At, items[0].Raw)
	if !errors.Is(err, client.ErrNoSuchDelayedItem) || !errors.Is(err, delayed.ErrNotFound) {
		t.Errorf("again: %v", err)
	}
	e.do("RPUSH", e.key("delayed:5"), "not json")
	if _, err := c.QueueDelayedNow(ctx(), time.Unix(5, 0), []byte("not json")); !errors.Is(err, client.ErrInvalid) || !errors.Is(err, delayed.ErrNotJob) {
		t.Errorf("a bad item: %v", err)
	}
}

// QueuePlanNow pushes the plan's job and leaves the plan; a unique plan's
// second job is refused while the first is queued.
func TestClientQueuePlanNow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	e := newEnv(t, client.Options{Now: fixedClock(now)})
	c := e.c
	if _, err := c.AddPlan(ctx(), plan.Plan{ID: "u", Queue: "reports", Class: "Report", Args: json.RawMessage(`[1]`), Cron: "0 3 * * *", UniqueID: "rep"}); err != nil {
		t.Fatal(err)
	}
	before, _ := c.Plan(ctx(), "u")
	info, err := c.QueuePlanNow(ctx(), "u")
	if err != nil || info.Queue != "reports" || info.Class != "Report" || info.ID == "" || info.Deferred {
		t.Fatalf("QueuePlanNow = %+v, %v", info, err)
	}
	if q := e.strs("LRANGE", e.key("queue:reports"), 0, -1); len(q) != 1 || q[0] != string(info.Payload) {
		t.Errorf("queue:reports = %q", q)
	}
	after, _ := c.Plan(ctx(), "u")
	if !after.NextRun.Equal(before.NextRun) || string(after.Raw) != string(before.Raw) {
		t.Errorf("the plan changed: %s -> %s", before.Raw, after.Raw)
	}
	if _, err := c.QueuePlanNow(ctx(), "u"); !errors.Is(err, unique.ErrDuplicate) {
		t.Errorf("second while queued: %v", err)
	}
	if _, err := c.QueuePlanNow(ctx(), "nope"); !errors.Is(err, client.ErrNoSuchPlan) || !errors.Is(err, plan.ErrNotFound) {
		t.Errorf("no plan: %v", err)
	}
}

// QueueScheduleNow enqueues a persistent schedule's job as resque-scheduler
// does, and leaves its records alone.
func TestClientQueueScheduleNow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	c := e.c
	e.load(fixtures.MustLoad("resque-scheduler-5.0.0", "set-schedule"))
	info, err := c.QueueScheduleNow(ctx(), client.ScheduleQuery{}, "persisted_every_5m")
	if err != nil || info.Queue != "mail" || info.Class != "MailJob" || string(info.Payload) != `{"class":"MailJob","args":["dyn",3.5]}` {
		t.Fatalf("QueueScheduleNow = %+v, %v", info, err)
	}
	if q := e.strs("LRANGE", e.key("queue:mail"), 0, -1); len(q) != 1 {
		t.Errorf("queue:mail = %q", q)
	}
	if n := e.do("EXISTS", e.key("delayed:last_enqueued_at")).(int64); n != 0 {
		t.Error("last_enqueued_at written")
	}
	if _, err := c.QueueScheduleNow(ctx(), client.ScheduleQuery{}, "nope"); !errors.Is(err, client.ErrNoSuchSchedule) {
		t.Errorf("no schedule: %v", err)
	}
}
