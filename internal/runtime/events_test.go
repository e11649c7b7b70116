package runtime_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
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
