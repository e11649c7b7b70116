package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// A job failing every time runs MaxAttempts times: each retry is recorded
// in retries and re-enqueued with failCount+1, a fresh id and queue_time;
// the last failure goes to failed.
func TestRetryUntilAttemptsUsedUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var attempts []int
	e.reg.Register("Flaky", func(ctx context.Context, j *worker.Job) error {
		attempts = append(attempts, j.Attempt)
		return errors.New("still broken")
	})
	orig := `{"class":"Flaky","args":{"k":"v"},"queue":"q","sourceId":"s1","id":"0123456789abcdef0123456789abcdef","queue_time":1700000000.1234}`
	var rec recorder
	e.push("q", orig)
	e.start(runtime.Config{Queues: "q", Retry: worker.RetryPolicy{MaxAttempts: 3}, OnFinish: rec.add})
	done := rec.waitN(t, 3)
	outcomes := []string{done[0].Outcome, done[1].Outcome, done[2].Outcome}
	if strings.Join(outcomes, ",") != "retry,retry,fail" {
		t.Errorf("outcomes = %v", outcomes)
	}
	if len(attempts) != 3 || attempts[0] != 1 || attempts[2] != 3 {
		t.Errorf("attempts seen by the handler = %v", attempts)
	}
	k := e.client.Keys()
	retries := e.list(k.Retries())
	if len(retries) != 2 {
		t.Fatalf("retries has %d entries, want 2", len(retries))
	}
	re := regexp.MustCompile(`^\{"class":"Flaky","args":\{"k":"v"\},"queue":"q","sourceId":"s1","id":"([0-9a-f]{32})","queue_time":\d+\.\d{4},"failCount":(\d)\}$`)
	prevID := "0123456789abcdef0123456789abcdef"
	for i, s := range retries {
		r := decodeFailed(t, s)
		if r.Exception != "Error" || r.Error != "still broken" {
			t.Errorf("retry %d entry = %+v", i, r)
		}
		var p struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(r.Payload, &p)
		if p.ID != prevID {
			t.Errorf("retry %d records payload id %s, want %s", i, p.ID, prevID)
		}
		prevID = r.RetriedBy
	}
	f := e.list(k.Failed())
	if len(f) != 1 {
		t.Fatalf("failed has %d entries, want 1", len(f))
	}
	last := decodeFailed(t, f[0])
	m := re.FindStringSubmatch(string(last.Payload))
	if m == nil || m[2] != "2" || m[1] != prevID {
		t.Errorf("final payload %s: want the original fields in order, failCount 2, id %s", last.Payload, prevID)
	}
	for key, want := range map[string]int64{k.StatProcessed(): 3, k.StatFailed(): 1, k.StatRetries(): 2,
		k.QueueStat("testhost", protocol.QueueStatRetries, "q"): 2, k.QueueStat("testhost", protocol.QueueStatFailed, "q"): 1} {
		if got := e.counter(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
}

// With a backoff the retry goes through the delayed queue (resque-scheduler
// layout); the mover promotes it when due, from an injected clock.
func TestRetryBackoffThroughDelayedQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var now atomic.Int64
	now.Store(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).Unix())
	clock := func() time.Time { return time.Unix(now.Load(), 0) }
	calls := 0
	e.reg.Register("Later", func(ctx context.Context, j *worker.Job) error {
		calls++
		if j.Attempt == 1 {
			return errors.New("not yet")
		}
		return nil
	})
	var rec recorder
	e.push("q", `{"class":"Later","args":[1]}`)
	e.start(runtime.Config{Queues: "q", Now: clock, OnFinish: rec.add,
		Retry: worker.RetryPolicy{MaxAttempts: 3, Backoff: worker.Backoff{Base: 30 * time.Second, Exponential: true}}})
	rec.waitN(t, 1)
	k := e.client.Keys()
	due := now.Load() + 30
	items := e.list(k.Delayed(due))
	// byte-identical to what resque-scheduler writes for the same job, so its
	// remove_delayed and resque-web find it; the count is kept aside
	if len(items) != 1 || items[0] != `{"class":"Later","args":[1],"queue":"q"}` {
		t.Fatalf("delayed:%d = %v", due, items)
	}
	if r := decodeFailed(t, e.list(k.Retries())[0]); r.RetriedBy != "delayed:"+strconv.FormatInt(due, 10) {
		t.Errorf("retried_by = %q", r.RetriedBy)
	}
	if m := e.members(k.Timestamps([]byte(items[0]))); len(m) != 1 || m[0] != protocol.DelayedMember(due) {
		t.Errorf("timestamps index = %v", m)
	}
	mover, err := delayedio.NewMover(delayedio.MoverConfig{Client: e.client, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := mover.Pass(e.ctx()); err != nil || n != 0 {
		t.Fatalf("pass before due moved %d (%v)", n, err)
	}
	now.Add(31)
	if n, err := mover.Pass(e.ctx()); err != nil || n != 1 {
		t.Fatalf("pass after due moved %d (%v)", n, err)
	}
	done := rec.waitN(t, 2)
	if done[1].Outcome != "ok" || calls != 2 {
		t.Errorf("second attempt: %+v, calls %d", done[1], calls)
	}
	if v, _ := e.client.Do(e.ctx(), "EXISTS", k.Delayed(due), k.DelayedSchedule(), k.Timestamps([]byte(items[0]))); v.(int64) != 0 {
		t.Errorf("delayed keys left behind after promotion")
	}
}

// Handlers choose: an explicit retry delay, a reschedule (success, runs
// again), a discard (no failed entry), and per-class attempt limits.
func TestHandlerControlsOutcome(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resched := 0
	e.reg.Register("Again", func(ctx context.Context, j *worker.Job) error {
		if resched++; resched == 1 {
			return worker.Reschedule(0)
		}
		return nil
	})
	e.reg.Register("Drop", func(ctx context.Context, j *worker.Job) error { return worker.Discard("obsolete") })
	e.reg.Register("Once", func(ctx context.Context, j *worker.Job) error { return errors.New("no") })
	e.reg.Register("Wait", func(ctx context.Context, j *worker.Job) error {
		return worker.Retry(errors.New("busy"), 90*time.Second)
	})
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var rec recorder
	e.push("q", `{"class":"Again","args":[]}`, `{"class":"Drop","args":[]}`, `{"class":"Once","args":[]}`, `{"class":"Wait","args":[]}`)
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Now: func() time.Time { return fixed },
		ClassRetry: map[string]worker.RetryPolicy{"Once": {MaxAttempts: 1}}})
	done := rec.waitN(t, 5)
	got := map[string][]string{}
	for _, f := range done {
		got[f.Class] = append(got[f.Class], f.Outcome)
	}
	want := map[string]string{"Again": "reschedule,ok", "Drop": "discard", "Once": "fail", "Wait": "retry"}
	for class, w := range want {
		if strings.Join(got[class], ",") != w {
			t.Errorf("%s outcomes = %v, want %s", class, got[class], w)
		}
	}
	k := e.client.Keys()
	if f := e.list(k.Failed()); len(f) != 1 || decodeFailed(t, f[0]).Error != "no" {
		t.Errorf("failed = %v", f)
	}
	if items := e.list(k.Delayed(fixed.Unix() + 90)); len(items) != 1 {
		t.Errorf("the explicit 90 s retry is not in delayed:%d", fixed.Unix()+90)
	}
	// batched: written within a flush interval (reschedule, ok, discard)
	redistest.Eventually(t, 0, func() bool { return e.counter(k.QueueStat("testhost", protocol.QueueStatProcessed, "q")) == 3 }, "queuestat processed = 3")
}

// resque-v3 status strings for monitored jobs.
func TestJobStatusResqueV3(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	id := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	seen := make(chan string, 1)
	e.reg.Register("M", func(ctx context.Context, j *worker.Job) error {
		seen <- e.get(k.JobStatus(j.ID))
		if j.Attempt == 1 {
			return errors.New("first try fails")
		}
		return nil
	})
	var rec recorder
	e.push("q", `{"class":"M","args":[],"isMonitored":true,"id":"`+id+`"}`)
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add})
	if s := <-seen; !strings.HasPrefix(s, `{"status":"running","updated":`) {
		t.Errorf("status while running = %q", s)
	}
	<-seen
	done := rec.waitN(t, 2)
	if s := e.get(k.JobStatus(id)); !strings.HasPrefix(s, `{"status":"retried","updated":`) {
		t.Errorf("status of the retried attempt = %q", s)
	}
	var p struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(done[1].Payload, &p)
	if s := e.get(k.JobStatus(p.ID)); !strings.HasPrefix(s, `{"status":"finished","updated":`) {
		t.Errorf("status of the retry = %q", s)
	}
	if ttl, _ := e.client.Do(e.ctx(), "TTL", k.JobStatus(p.ID)); ttl.(int64) < 86000 {
		t.Errorf("TTL = %v, want ~86400", ttl)
	}
}

// php-resque integer statuses, updated only where the producer created the
// key (fixtures: php-resque status-waiting -> running -> complete/failed).
func TestJobStatusPHP(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"php-resque-resque-master", "php-resque-chrisboulton"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			waiting := fixtures.MustLoad(dir, "status-waiting")
			e.load(waiting)
			k := e.client.Keys()
			var statusKey string
			for _, key := range waiting.Names() {
				if strings.HasSuffix(key, ":status") {
					statusKey = e.ns + ":" + strings.TrimPrefix(key, "resque:")
				}
			}
			before := e.get(statusKey)
			seen := make(chan string, 1)
			e.reg.Register("Sleep_Job", func(ctx context.Context, j *worker.Job) error {
				seen <- e.get(statusKey)
				return nil
			})
			e.push("mail", `{"class":"Sleep_Job","args":[],"id":"ffffffffffffffffffffffffffffffff"}`)
			var rec recorder
			e.start(runtime.Config{Queues: "mail", OnFinish: rec.add})
			running := statusFields(t, <-seen)
			<-seen
			rec.waitN(t, 2)
			complete := statusFields(t, e.get(statusKey))
			orig := statusFields(t, before)
			if running["status"] != "2" || complete["status"] != "4" {
				t.Errorf("statuses: running %v, complete %v", running, complete)
			}
			if complete["started"] != orig["started"] {
				t.Errorf("started changed: %v -> %v", orig["started"], complete["started"])
			}
			if ttl, _ := e.client.Do(e.ctx(), "TTL", statusKey); ttl.(int64) < 86000 {
				t.Errorf("TTL after complete = %v, want ~86400", ttl)
			}
			if v := e.get(k.JobStatus("ffffffffffffffffffffffffffffffff")); v != "" {
				t.Errorf("status key created for an untracked job: %s", v)
			}
		})
	}
}

func statusFields(t *testing.T, s string) map[string]string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("status %q: %v", s, err)
	}
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// A handler's delay past protocol.MaxDelay (a reschedule by the largest
// Duration) is filed 100 years out, not at a time that wrapped around into
// the past or past year 9999.
func TestHandlerDelayIsBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.reg.Register("Later", func(ctx context.Context, j *worker.Job) error { return worker.Reschedule(math.MaxInt64) })
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var rec recorder
	e.push("q", `{"class":"Later","args":[]}`)
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Now: func() time.Time { return fixed }})
	if done := rec.waitN(t, 1); done[0].Outcome != "reschedule" {
		t.Fatalf("outcome %+v", done[0])
	}
	k := e.client.Keys()
	due := fixed.Unix() + protocol.MaxDelaySeconds
	if items := e.list(k.Delayed(due)); len(items) != 1 {
		t.Errorf("the rescheduled job is not in delayed:%d (now + 100 years)", due)
	}
}
