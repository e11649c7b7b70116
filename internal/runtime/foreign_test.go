package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// rubyStartupPrune does what Ruby Resque 3.0's prune_dead_workers does to a
// same-host worker id whose pid it does not see in ps (Worker#unregister_worker):
// the job found in worker:<id> is recorded in failed as Resque::DirtyExit
// "Job still being processed" (payload decoded and re-encoded, the pruned
// id as worker), then the id is unregistered and its stats cleared. The
// fixture ruby-resque-3.0.0/dirty-exit-pruned-same-host shows the entry.
func rubyStartupPrune(t *testing.T, e *env, id string) {
	t.Helper()
	k := e.client.Keys()
	rec := e.get(k.Worker(id))
	if rec == "" {
		t.Fatalf("worker:%s holds no job", id)
	}
	var r struct {
		Queue   string          `json:"queue"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal([]byte(rec), &r); err != nil {
		t.Fatal(err)
	}
	var payload any // Ruby decodes and re-encodes the payload
	if err := json.Unmarshal(r.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	// key order as Ruby writes it
	entry := []byte(`{"failed_at":"2026/11/21 21:24:06 UTC","payload":` + mustJSON(t, payload) +
		`,"exception":"Resque::DirtyExit","error":"Job still being processed","backtrace":[],"worker":` +
		mustJSON(t, id) + `,"queue":` + mustJSON(t, r.Queue) + `}`)
	phpStartupPrune(t, e, id, entry)
}

// phpStartupPrune does what php-resque's pruneDeadWorkers does to a
// same-host id it does not recognise: unregister it (SREM workers, DEL
// worker:<id> and its :started, clear its stats) without a failed entry.
// With entry non-nil it first pushes that entry (Ruby's variant).
func phpStartupPrune(t *testing.T, e *env, id string, entry []byte) {
	t.Helper()
	k := e.client.Keys()
	ctx := e.ctx()
	if entry != nil {
		if _, err := e.client.Do(ctx, "RPUSH", k.Failed(), entry); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range [][]any{
		{"SREM", k.Workers(), id},
		{"DEL", k.Worker(id), k.WorkerStarted(id), k.StatProcessedWorker(id), k.StatFailedWorker(id)},
		{"HDEL", k.Heartbeats(), id},
	} {
		if _, err := e.client.Do(ctx, cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatal(err)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A Ruby or PHP worker starting on the same host unregisters a resque-go id
// while its job runs (and Ruby records the job as a false DirtyExit): the
// job's real outcome is recorded, the false entry removed, and the id
// registered again at once.
func TestForeignPruneWhileJobRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		ruby    bool
		fail    bool
		wantErr string // the exception left in failed, "" for none
	}{
		{"ruby prune, job succeeds", true, false, ""},
		{"ruby prune, job fails", true, true, "RuntimeError"},
		{"php prune, job succeeds", false, false, ""},
		{"php prune, job fails", false, true, "RuntimeError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			k := e.client.Keys()
			started, release := make(chan string, 1), make(chan struct{})
			e.reg.Register("Slow", func(ctx context.Context, j *worker.Job) error {
				started <- j.WorkerID
				<-release
				if tc.fail {
					return &worker.Error{Exception: "RuntimeError", Message: "boom"}
				}
				return nil
			})
			var rec recorder
			e.start(runtime.Config{Queues: "q", Concurrency: 2, OnFinish: rec.add, Retry: noRetry})
			e.push("q", `{"class":"Slow","args":[1,"two",{"k":"v"}]}`)
			id := <-started
			if tc.ruby {
				rubyStartupPrune(t, e, id)
			} else {
				phpStartupPrune(t, e, id, nil)
			}
			close(release)
			done := rec.waitN(t, 1)
			failed := e.list(k.Failed())
			switch {
			case tc.wantErr == "" && len(failed) != 0:
				t.Errorf("failed = %v, want empty (the DirtyExit was false)", failed)
			case tc.wantErr != "" && (len(failed) != 1 || decodeFailed(t, failed[0]).Exception != tc.wantErr):
				t.Errorf("failed = %v, want one %s entry", failed, tc.wantErr)
			}
			if done[0].Outcome == "" || e.counter(k.StatProcessed()) != 1 {
				t.Errorf("outcome %+v, stat:processed %d", done[0], e.counter(k.StatProcessed()))
			}
			redistest.Eventually(t, 0, func() bool {
				for _, m := range e.members(k.Workers()) {
					if m == id {
						return e.get(k.WorkerStarted(id)) != ""
					}
				}
				return false
			}, "the id registered again")
		})
	}
}

// A DirtyExit entry of another worker id, or of another class, is never
// taken for the false one.
func TestForeignPruneKeepsOtherEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	started, release := make(chan string, 1), make(chan struct{})
	e.reg.Register("Slow", func(ctx context.Context, j *worker.Job) error {
		started <- j.WorkerID
		<-release
		return nil
	})
	var rec recorder
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add})
	e.push("q", `{"class":"Slow","args":[]}`)
	id := <-started
	others := []string{
		`{"failed_at":"x","payload":{"class":"Slow","args":[]},"exception":"Resque::DirtyExit","error":"Job still being processed","backtrace":[],"worker":"otherhost:1:q","queue":"q"}`,
		`{"failed_at":"x","payload":{"class":"Other","args":[]},"exception":"Resque::DirtyExit","error":"Job still being processed","backtrace":[],"worker":` + mustJSON(t, id) + `,"queue":"q"}`,
	}
	e.push("unused", "x") // keep the queues set non-trivial
	for _, o := range others {
		if _, err := e.client.Do(e.ctx(), "RPUSH", k.Failed(), o); err != nil {
			t.Fatal(err)
		}
	}
	rubyStartupPrune(t, e, id)
	close(release)
	rec.waitN(t, 1)
	if got := e.list(k.Failed()); len(got) != 2 || got[0] != others[0] || got[1] != others[1] {
		t.Errorf("failed = %v, want the two other entries untouched", got)
	}
}

// resqueSchedulerPromote does what resque-scheduler 5's handle_delayed_items
// does with every due bucket: pop each item, drop it from its timestamps
// index, and enqueue Job.create(queue, class, *args): a new payload of class
// and args alone (failCount, id and every other field dropped). Args are
// kept as their raw bytes, which is what Ruby's re-encoding writes for args
// that Ruby (or resque-go) encoded.
func resqueSchedulerPromote(t *testing.T, e *env, upTo int64) int {
	t.Helper()
	ctx := e.ctx()
	k := e.client.Keys()
	moved := 0
	due, err := e.client.Do(ctx, "ZRANGEBYSCORE", k.DelayedSchedule(), "-inf", upTo)
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range due.([]any) {
		var n int64
		if err := json.Unmarshal(ts.([]byte), &n); err != nil {
			t.Fatal(err)
		}
		for _, item := range e.list(k.Delayed(n)) {
			var it struct {
				Class string          `json:"class"`
				Args  json.RawMessage `json:"args"`
				Queue string          `json:"queue"`
			}
			if err := json.Unmarshal([]byte(item), &it); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range [][]any{
				{"LREM", k.Delayed(n), 1, item},
				{"SREM", k.Timestamps([]byte(item)), protocol.DelayedMember(n)},
				{"SADD", k.Queues(), it.Queue},
				{"RPUSH", k.Queue(it.Queue), `{"class":` + mustJSON(t, it.Class) + `,"args":` + string(it.Args) + `}`},
			} {
				if _, err := e.client.Do(ctx, cmd[0].(string), cmd[1:]...); err != nil {
					t.Fatal(err)
				}
			}
			moved++
		}
		if _, err := e.client.Do(ctx, "ZREM", k.DelayedSchedule(), n); err != nil {
			t.Fatal(err)
		}
	}
	return moved
}

// An always-failing job retried through the delayed queue and promoted by
// resque-scheduler (which drops failCount and id) still ends in failed
// after its attempts; the delayed item is byte-identical to what
// resque-scheduler writes for the same job.
func TestRetryCountSurvivesResqueScheduler(t *testing.T) {
	t.Parallel()
	for _, payload := range []string{
		`{"class":"Boom","args":[1,"two"]}`, // Ruby
		`{"class":"Boom","args":[1,"two"],"queue":"q","sourceId":"s1","id":"00000000000000000000000000000001","queue_time":1700000000.5}`, // resque-v3
	} {
		t.Run(payload[len(payload)-10:], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			k := e.client.Keys()
			var now atomic.Int64
			now.Store(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).Unix())
			clock := func() time.Time { return time.Unix(now.Load(), 0) }
			var attempts []int
			e.reg.Register("Boom", func(ctx context.Context, j *worker.Job) error {
				attempts = append(attempts, j.Attempt)
				return errors.New("always")
			})
			var rec recorder
			e.start(runtime.Config{Queues: "q", Now: clock, OnFinish: rec.add,
				Retry: worker.RetryPolicy{MaxAttempts: 3, Backoff: worker.Backoff{Base: 10 * time.Second}}})
			e.push("q", payload)
			for i := 1; i <= 2; i++ {
				rec.waitN(t, i)
				items := e.list(k.Delayed(now.Load() + 10))
				if i == 2 || !strings.Contains(payload, "sourceId") {
					// once promoted by resque-scheduler, the job is Ruby's: so is its delayed item
					if len(items) != 1 || items[0] != `{"class":"Boom","args":[1,"two"],"queue":"q"}` {
						t.Fatalf("attempt %d: delayed item %v, want resque-scheduler's bytes", i, items)
					}
				}
				now.Add(10)
				if n := resqueSchedulerPromote(t, e, now.Load()); n != 1 {
					t.Fatalf("resque-scheduler promoted %d items", n)
				}
			}
			done := rec.waitN(t, 3)
			if done[2].Outcome != "fail" || len(e.list(k.Failed())) != 1 {
				t.Fatalf("third attempt %+v; failed %v", done[2], e.list(k.Failed()))
			}
			if len(attempts) != 3 || attempts[0] != 1 || attempts[1] != 2 || attempts[2] != 3 {
				t.Errorf("Job.Attempt over the attempts = %v, want [1 2 3]", attempts)
			}
			if left, _ := e.client.ScanKeys(e.ctx(), k.AttemptsPrefix()+"*"); len(left) != 0 {
				t.Errorf("attempt counters left after the final failure: %v", left)
			}
			if n := len(e.list(k.Queue("q"))); n != 0 {
				t.Errorf("%d jobs left in the queue", n)
			}
		})
	}
}

// A success closes the count: the next identical job starts at attempt 1.
func TestRetryCountClearedOnSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	var calls atomic.Int32
	var attempts []int
	e.reg.Register("Flaky", func(ctx context.Context, j *worker.Job) error {
		attempts = append(attempts, j.Attempt)
		if calls.Add(1) == 1 {
			return errors.New("once")
		}
		return nil
	})
	var rec recorder
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add})
	e.push("q", `{"class":"Flaky","args":[]}`)
	rec.waitN(t, 2)
	e.push("q", `{"class":"Flaky","args":[]}`)
	rec.waitN(t, 3)
	if len(attempts) != 3 || attempts[0] != 1 || attempts[1] != 2 || attempts[2] != 1 {
		t.Errorf("attempts = %v, want [1 2 1]", attempts)
	}
	if left, _ := e.client.ScanKeys(e.ctx(), k.AttemptsPrefix()+"*"); len(left) != 0 {
		t.Errorf("attempt counters left: %v", left)
	}
	if q := e.list(k.Retries()); len(q) != 1 || decodeFailed(t, q[0]).RetriedBy != "queue:q" {
		t.Errorf("retries = %v", q)
	}
}

// A php-resque job tracked by its producer (job:<id>:status with an integer
// status) keeps its id through retries: the status the producer reads goes
// 2 (running), 1 (waiting again), 2, and ends 4 (complete).
func TestPhpTrackedJobKeepsIDThroughRetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	const id = "0123456789abcdef0123456789abcdef"
	if _, err := e.client.Do(e.ctx(), "SET", k.JobStatus(id), `{"status":1,"updated":1700000000,"started":1700000000}`); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	var ids []string
	e.reg.Register("Mail_Job", func(ctx context.Context, j *worker.Job) error {
		ids = append(ids, j.ID)
		if calls.Add(1) == 1 {
			return errors.New("once")
		}
		return nil
	})
	var rec recorder
	e.start(runtime.Config{Queues: "mail", OnFinish: rec.add, Now: func() time.Time { return time.Unix(1800000000, 0) }})
	e.push("mail", `{"class":"Mail_Job","args":[{"k":"v"}],"id":"`+id+`","prefix":"","queue_time":1700000000.25}`)
	rec.waitN(t, 2)
	if len(ids) != 2 || ids[0] != id || ids[1] != id {
		t.Errorf("ids = %v, want %s twice", ids, id)
	}
	var st struct {
		Status  int   `json:"status"`
		Started int64 `json:"started"`
	}
	if err := json.Unmarshal([]byte(e.get(k.JobStatus(id))), &st); err != nil || st.Status != 4 || st.Started != 1700000000 {
		t.Errorf("status = %s, want 4 (complete) with started kept", e.get(k.JobStatus(id)))
	}
}

// A mover next to the worker promotes a resque-v3 retry with its queue
// field (the v3 runtime reads it for retries and reports).
func TestV3RetryKeepsQueueThroughMover(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var seen []string
	e.reg.Register("Task", func(ctx context.Context, j *worker.Job) error {
		seen = append(seen, string(j.Payload))
		if len(seen) == 1 {
			return errors.New("once")
		}
		return nil
	})
	var rec recorder
	clock := func() time.Time { return now }
	e.start(runtime.Config{Queues: "v3q", Now: clock, OnFinish: rec.add,
		Retry: worker.RetryPolicy{MaxAttempts: 3, Backoff: worker.Backoff{Base: 5 * time.Second}}})
	e.push("v3q", `{"class":"Task","args":{"k":"v"},"queue":"v3q","sourceId":"s1","id":"00000000000000000000000000000002","queue_time":1700000000.5}`)
	rec.waitN(t, 1)
	mover, err := delayedio.NewMover(delayedio.MoverConfig{Client: e.client, Now: func() time.Time { return now.Add(time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := mover.Pass(e.ctx()); err != nil || n != 1 {
		t.Fatalf("moved %d (%v)", n, err)
	}
	rec.waitN(t, 2)
	var p map[string]json.RawMessage
	if err := json.Unmarshal([]byte(seen[1]), &p); err != nil || string(p["queue"]) != `"v3q"` || string(p["failCount"]) != "1" || string(p["sourceId"]) != `"s1"` {
		t.Errorf("promoted retry = %s, want queue, failCount and sourceId kept", seen[1])
	}
	_ = k
}

// A job in node-resque's shape ({"class","queue","args"}) that always fails
// ends in failed after its attempts (its count travels in the payload).
func TestNodeShapedJobRetriesEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	var attempts []int
	e.reg.Register("Add", func(ctx context.Context, j *worker.Job) error {
		attempts = append(attempts, j.Attempt)
		return errors.New("always")
	})
	var rec recorder
	e.start(runtime.Config{Queues: "math", OnFinish: rec.add})
	e.push("math", `{"class":"Add","queue":"math","args":[1,2]}`)
	done := rec.waitN(t, 3)
	if done[2].Outcome != "fail" || len(attempts) != 3 || attempts[2] != 3 {
		t.Fatalf("outcomes %+v, attempts %v", done, attempts)
	}
	if n := e.counter(k.StatRetries()); n != 2 {
		t.Errorf("stat:retries = %d, want 2", n)
	}
}

// Jobs with only class and args but not in Ruby's compact bytes (a Python
// producer's spaces, args first) keep their bytes through retries: their
// attempts are counted all the same and they end in failed.
func TestRubyShapedNotCompactRetriesEnd(t *testing.T) {
	t.Parallel()
	for _, payload := range []string{`{"class": "Broken", "args": ["x"]}`, `{"args":["x"],"class":"Broken"}`} {
		t.Run(payload, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			k := e.client.Keys()
			e.reg.Register("Broken", func(ctx context.Context, j *worker.Job) error { return errors.New("always") })
			var rec recorder
			e.start(runtime.Config{Queues: "q", OnFinish: rec.add})
			e.push("q", payload)
			done := rec.waitN(t, 3)
			if done[2].Outcome != "fail" || len(e.list(k.Failed())) != 1 {
				t.Fatalf("outcomes %+v", done)
			}
			if n := e.counter(k.StatRetries()); n != 2 {
				t.Errorf("stat:retries = %d, want 2", n)
			}
			if got := e.list(k.Failed()); !strings.Contains(got[0], "Broken") {
				t.Errorf("failed = %v", got)
			}
			if left, _ := e.client.ScanKeys(e.ctx(), k.AttemptsPrefix()+"*"); len(left) != 0 {
				t.Errorf("attempt counters left: %v", left)
			}
		})
	}
}
