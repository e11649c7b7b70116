package runtime_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// A worker with events on: a tagged job that fails once, is rescheduled
// once and then succeeds has one event a state change, in order, and
// leaves its tag's index at its end.
func TestWorkerWritesEventsOfOneJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: e.ns, ReadTimeout: 5 * time.Second, Events: rdb.EventsConfig{On: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e.client = c
	var calls atomic.Int32
	e.reg.Register("Flaky", func(ctx context.Context, j *worker.Job) error {
		switch calls.Add(1) {
		case 1:
			return errors.New("once")
		case 2:
			return worker.Reschedule(0)
		}
		return nil
	})
	const id = "0123456789abcdef0123456789abcdef"
	payload := []byte(`{"class":"Flaky","args":[],"id":"` + id + `","tags":["t"]}`)
	if err := c.EnqueueTracked(context.Background(), rdb.TrackedJob{Queue: "q", Class: "Flaky", ID: id, Payload: payload, Tags: []string{"t"}, Event: true}); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	e.start(runtime.Config{Queues: "q", Retry: worker.RetryPolicy{MaxAttempts: 3}, OnFinish: rec.add})
	rec.waitN(t, 3)
	evs, err := c.JobEvents(e.ctx(), id)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ev := range evs {
		names = append(names, ev.Fields["event"])
	}
	want := []string{"enqueued", "started", "retried", "started", "rescheduled", "started", "succeeded"}
	if !slices.Equal(names, want) {
		t.Fatalf("events %v, want %v", names, want)
	}
	if a := evs[2].Fields["attempt"]; a != "1" {
		t.Errorf("retried: attempt %s, want 1", a)
	}
	if a := evs[3].Fields["attempt"]; a != "2" {
		t.Errorf("the second start: attempt %s, want 2", a)
	}
	if _, n, err := c.TagJobs(e.ctx(), "t", 0, 0); err != nil || n != 0 {
		t.Errorf("tag t after the job's end: %d %v", n, err)
	}
}

// eventsEnv is an env whose client (the workers') has events on.
func eventsEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	c, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: e.ns, ReadTimeout: 5 * time.Second, Events: rdb.EventsConfig{On: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e.client = c
	return e
}

// eventNames are the event fields of job id's events, in order.
func eventNames(t *testing.T, e *env, id string) []string {
	t.Helper()
	evs, err := e.client.JobEvents(e.ctx(), id)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ev := range evs {
		names = append(names, ev.Fields["event"])
	}
	return names
}

// A cancelled job's attempt ends with one event: "cancelled" instead of
// "failed" when the cancel ends the job; with retry, "retried" while the
// job has attempts left (its retries entry says ResqueGo::Cancelled), and
// "cancelled" for the attempt that has none.
func TestCancelledJobEvents(t *testing.T) {
	t.Parallel()
	t.Run("ends", func(t *testing.T) {
		t.Parallel()
		e := eventsEnv(t)
		e.reg.Register("Blocks", blocks)
		var rec recorder
		e.push("q", `{"class":"Blocks","args":[],"id":"job-c1"}`)
		w := e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: worker.RetryPolicy{MaxAttempts: 3}})
		wid := e.runningOn(t, w)
		if _, err := e.client.CancelJob(e.ctx(), wid, nil, false); err != nil {
			t.Fatal(err)
		}
		rec.waitN(t, 1)
		if got, want := eventNames(t, e, "job-c1"), []string{"started", "cancelled"}; !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		evs, _ := e.client.JobEvents(e.ctx(), "job-c1")
		if f := evs[1].Fields; f["class"] != "Blocks" || f["queue"] != "q" || f["worker"] != wid || f["attempt"] != "1" {
			t.Errorf("cancelled event %v", f)
		}
	})
	t.Run("retry", func(t *testing.T) {
		t.Parallel()
		e := eventsEnv(t)
		e.reg.Register("Blocks", blocks)
		var rec recorder
		e.push("q", `{"class":"Blocks","args":[],"id":"job-c2"}`)
		w := e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: worker.RetryPolicy{MaxAttempts: 2}})
		for i := 1; i <= 2; i++ {
			e.runningOn(t, w)
			redistest.Eventually(t, 0, func() bool {
				_, err := e.client.CancelJobByID(e.ctx(), "job-c2", true)
				return err == nil
			}, "the retried job running again")
			rec.waitN(t, i)
		}
		if got, want := eventNames(t, e, "job-c2"), []string{"started", "retried", "started", "cancelled"}; !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.reg.Register("Blocks", blocks)
		var rec recorder
		e.push("q", `{"class":"Blocks","args":[],"id":"job-c3"}`)
		w := e.start(runtime.Config{Queues: "q", OnFinish: rec.add})
		wid := e.runningOn(t, w)
		if _, err := e.client.CancelJob(e.ctx(), wid, nil, false); err != nil {
			t.Fatal(err)
		}
		rec.waitN(t, 1)
		if n, err := e.client.Do(e.ctx(), "EXISTS", e.client.Keys().Events()); err != nil || n.(int64) != 0 {
			t.Errorf("events stream with events off: %v %v", n, err)
		}
	})
}

// A held child released by its parent's finish gets a released event in
// that finish's step, after the parent's end: then its own started and
// end. Events off, the same release writes no stream.
func TestReleasedChildEvents(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[on], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if on {
				e = eventsEnv(t)
			}
			ctx := context.Background()
			e.reg.Register("J", func(ctx context.Context, j *worker.Job) error { return nil })
			now := time.Now()
			enqueue := func(id, queue string, parents ...string) {
				var ps []rdb.DepParent
				for _, p := range parents {
					ps = append(ps, rdb.DepParent{Name: p})
				}
				p, err := protocol.NewPayload("J", []byte(`[]`), protocol.EnqueueOptions{ID: id, Now: now, Deps: protocol.DepFields{After: parents}})
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := e.client.EnqueueDeps(ctx, rdb.DepJob{ID: id, Queue: queue, Payload: p, Policy: protocol.OnParentFailureFail, Parents: ps}, now); err != nil {
					t.Fatal(err)
				}
			}
			enqueue("parent", "q")
			enqueue("child", "q2", "parent")
			var rec recorder
			e.start(runtime.Config{Queues: "q,q2", OnFinish: rec.add})
			rec.waitN(t, 2)
			if !on {
				if n, err := e.client.Do(e.ctx(), "EXISTS", e.client.Keys().Events()); err != nil || n.(int64) != 0 {
					t.Errorf("events stream with events off: %v %v", n, err)
				}
				return
			}
			evs, err := e.client.Events(e.ctx(), "0", 100)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range evs {
				got = append(got, ev.Fields["event"]+":"+ev.Fields["id"])
			}
			want := []string{"started:parent", "succeeded:parent", "released:child", "started:child", "succeeded:child"}
			if !slices.Equal(got, want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			if f := evs[2].Fields; f["class"] != "J" || f["queue"] != "q2" || f["worker"] != "" || f["attempt"] != "0" {
				t.Errorf("released event %v", f)
			}
		})
	}
}

// A parent that fails for good settles its held jobs in its finish's
// step, each with its event after the parent's: failed (policy fail),
// discarded (drop), released (run).
func TestFailedParentChildEvents(t *testing.T) {
	t.Parallel()
	e := eventsEnv(t)
	ctx := context.Background()
	e.reg.Register("Bad", func(ctx context.Context, j *worker.Job) error { return errors.New("no") })
	e.reg.Register("J", func(ctx context.Context, j *worker.Job) error { return nil })
	now := time.Now()
	enqueue := func(id, class, policy string, parents ...string) {
		var ps []rdb.DepParent
		for _, p := range parents {
			ps = append(ps, rdb.DepParent{Name: p})
		}
		d := protocol.DepFields{After: parents}
		if len(parents) > 0 {
			d.OnParentFailure = policy
		}
		p, err := protocol.NewPayload(class, []byte(`[]`), protocol.EnqueueOptions{ID: id, Now: now, Deps: d})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.client.EnqueueDeps(ctx, rdb.DepJob{ID: id, Queue: "q", Payload: p, Policy: policy, Parents: ps}, now); err != nil {
			t.Fatal(err)
		}
	}
	enqueue("parent", "Bad", protocol.OnParentFailureFail)
	enqueue("c-fail", "J", protocol.OnParentFailureFail, "parent")
	enqueue("c-drop", "J", protocol.OnParentFailureDrop, "parent")
	enqueue("c-run", "J", protocol.OnParentFailureRun, "parent")
	var rec recorder
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: worker.RetryPolicy{MaxAttempts: 1}})
	rec.waitN(t, 2)
	evs, err := e.client.Events(e.ctx(), "0", 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Fields["event"]+":"+ev.Fields["id"])
	}
	if len(got) != 7 {
		t.Fatalf("events %v, want 7", got)
	}
	slices.Sort(got[2:5]) // the held jobs' set's order
	want := []string{"started:parent", "failed:parent", "discarded:c-drop", "failed:c-fail", "released:c-run", "started:c-run", "succeeded:c-run"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}
