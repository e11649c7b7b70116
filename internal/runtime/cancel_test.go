package runtime_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// blocks waits for its context, as a well-behaved long job does.
func blocks(ctx context.Context, j *worker.Job) error {
	<-ctx.Done()
	return ctx.Err()
}

// runningOn waits until one of w's slots holds a job and returns its id.
func (e *env) runningOn(t *testing.T, w *runtime.Worker) string {
	t.Helper()
	var id string
	redistest.Eventually(t, 0, func() bool {
		for _, wid := range w.IDs() {
			if rec, err := e.client.WorkerRecord(e.ctx(), wid); err == nil && rec != nil {
				id = wid
				return true
			}
		}
		return false
	}, "a running job")
	return id
}

// A cancel request stops the running job of a Go handler, an exec command
// and a fork-mode child: each ends in failed as ResqueGo::Cancelled and is
// not retried, though its class has attempts left. The time from the
// request to the recorded end is logged, not asserted.
func TestCancelRunningJob(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"go", "exec", "fork"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cfg := runtime.Config{Queues: "q", Concurrency: 2, Retry: worker.RetryPolicy{MaxAttempts: 3}}
			switch kind {
			case "go":
				e.reg.Register("Blocks", blocks)
			case "exec":
				e.reg.Register("Blocks", worker.ExecHandler("sleep 30", worker.ExecOptions{KillGrace: time.Second, Stderr: &strings.Builder{}}))
			case "fork":
				e.reg.Register("Blocks", blocks) // the child's runs
				cfg.Fork = &worker.ForkConfig{Command: []string{os.Args[0]}, Env: []string{childEnv + "=1"}, KillGrace: time.Second}
			}
			var rec recorder
			cfg.OnFinish = rec.add
			e.push("q", `{"class":"Blocks","args":[],"id":"job-1"}`)
			w := e.start(cfg)
			wid := e.runningOn(t, w)
			start := time.Now()
			if _, err := e.client.CancelJob(e.ctx(), wid, nil, false); err != nil {
				t.Fatal(err)
			}
			done := rec.waitN(t, 1)
			if ttl, err := e.client.Do(e.ctx(), "TTL", e.client.Keys().CancelKey(wid)); err != nil || ttl.(int64) <= 0 || ttl.(int64) > 600 {
				t.Errorf("stored request's TTL = %v, %v; want 1..600 s", ttl, err)
			}
			t.Logf("%s: cancel to recorded end: %s", kind, time.Since(start))
			if f := done[0]; !f.Failed || f.Exception != protocol.ExcCancelled {
				t.Fatalf("finished = %+v", f)
			}
			failed := e.list(e.client.Keys().Failed())
			if len(failed) != 1 || decodeFailed(t, failed[0]).Exception != protocol.ExcCancelled || decodeFailed(t, failed[0]).Worker != wid {
				t.Errorf("failed = %v", failed)
			}
			if n := len(e.list(e.client.Keys().Retries())); n != 0 {
				t.Errorf("%d retries entries, want none", n)
			}
			if _, err := e.client.CancelJob(e.ctx(), wid, nil, false); !errors.Is(err, rdb.ErrNoJob) {
				t.Errorf("cancel of an idle worker = %v, want ErrNoJob", err)
			}
		})
	}
}

// With retry, the cancelled attempt goes through the retry policy; a
// cancel by job id finds the slot.
func TestCancelByIDWithRetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.reg.Register("Blocks", blocks)
	var rec recorder
	e.push("q", `{"class":"Blocks","args":[],"id":"job-7"}`)
	w := e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: worker.RetryPolicy{MaxAttempts: 2}})
	wid := e.runningOn(t, w)
	if _, err := e.client.CancelJobByID(e.ctx(), "no-such-job", false); !errors.Is(err, rdb.ErrNoJob) {
		t.Errorf("cancel of an unknown id = %v", err)
	}
	got, err := e.client.CancelJobByID(e.ctx(), "job-7", true)
	if err != nil || got != wid {
		t.Fatalf("CancelJobByID = %q, %v; want %q", got, err, wid)
	}
	done := rec.waitN(t, 1)
	if done[0].Outcome != "retry" || done[0].Exception != protocol.ExcCancelled {
		t.Errorf("finished = %+v, want a retry of a ResqueGo::Cancelled", done[0])
	}
}

// A job held by a record no resque-go claim wrote (a Ruby worker's) is
// refused: no claim sequence names it.
func TestCancelForeignWorker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wid := "rubyhost:123:q"
	if _, err := e.client.Do(e.ctx(), "SET", e.client.Keys().Worker(wid), `{"queue":"q","run_at":"2026-01-01T00:00:00Z","payload":{"class":"A","args":[]}}`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.CancelJob(e.ctx(), wid, nil, false); !errors.Is(err, rdb.ErrForeignWorker) {
		t.Errorf("CancelJob = %v, want ErrForeignWorker", err)
	}
	if e.get(e.client.Keys().CancelKey(wid)) != "" {
		t.Error("a refused request was stored")
	}
}

// A request stored while the worker's subscription is down (its push
// missed) is applied when the subscription comes back.
func TestCancelStoredWhileUnsubscribed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.reg.Register("Blocks", blocks)
	var rec recorder
	e.push("q", `{"class":"Blocks","args":[]}`)
	w := e.start(runtime.Config{Queues: "q", OnFinish: rec.add})
	wid := e.runningOn(t, w)
	seq, err := e.client.Do(e.ctx(), "HGET", e.client.Keys().ClaimSeqs(), wid)
	if err != nil || seq == nil {
		t.Fatalf("claim sequence: %v %v", seq, err)
	}
	// stored, not published: as if the push came while nobody listened
	key := e.client.Keys().CancelKey(wid)
	if _, err := e.client.Do(e.ctx(), "SET", key, string(seq.([]byte))+" 0", "EX", 600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Do(e.ctx(), "CLIENT", "KILL", "TYPE", "pubsub"); err != nil {
		t.Fatal(err)
	}
	done := rec.waitN(t, 1)
	if done[0].Exception != protocol.ExcCancelled {
		t.Errorf("finished = %+v", done[0])
	}
}

// A request for a claim that has ended does nothing to the job the slot
// runs next, pushed or stored.
func TestCancelOfFinishedClaimSparesNextJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	release := make(chan struct{})
	started := make(chan string, 4)
	firstSeq := make(chan string, 1)
	e.reg.Register("Quick", func(ctx context.Context, j *worker.Job) error {
		v, err := e.client.Do(ctx, "HGET", e.client.Keys().ClaimSeqs(), j.WorkerID)
		if err != nil || v == nil {
			return errors.New("no claim sequence")
		}
		firstSeq <- string(v.([]byte))
		return nil
	})
	e.reg.Register("Held", func(ctx context.Context, j *worker.Job) error {
		started <- j.WorkerID
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	var rec recorder
	w := e.start(runtime.Config{Queues: "q", Concurrency: 2, OnFinish: rec.add})
	ids := w.IDs()
	seqOf := func(wid string) string {
		v, err := e.client.Do(e.ctx(), "HGET", e.client.Keys().ClaimSeqs(), wid)
		if err != nil || v == nil {
			t.Fatalf("claim sequence of %s: %v %v", wid, v, err)
		}
		return string(v.([]byte))
	}
	// a first job runs and ends on some slot; its claim's sequence is the
	// one a late request names
	e.push("q", `{"class":"Quick","args":[]}`)
	rec.waitN(t, 1)
	first := rec.all()[0].WorkerID
	other := ids[0]
	if other == first {
		other = ids[1]
	}
	e.push("q", `{"class":"Held","args":[]}`, `{"class":"Held","args":[]}`)
	a, b := <-started, <-started
	held := map[string]bool{a: true, b: true}
	if !held[first] || !held[other] {
		t.Fatalf("held jobs on %s and %s, want both slots", a, b)
	}
	// the sequence now is the running claim's; the first job's was before it
	stale := <-firstSeq
	if now := seqOf(first); now == stale {
		t.Fatalf("the slot's running claim has sequence %s, the first job's", now)
	}
	if _, err := e.client.Do(e.ctx(), "SET", e.client.Keys().CancelKey(first), stale+" 0", "EX", 600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Do(e.ctx(), "PUBLISH", e.client.Keys().CancelChannel(), stale+" 0 "+first); err != nil {
		t.Fatal(err)
	}
	// a real request for the other slot comes after on the same channel:
	// once it is applied, the stale one was read
	if _, err := e.client.CancelJob(e.ctx(), other, nil, false); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return len(rec.all()) >= 2 }, "the other slot's cancel")
	close(release)
	done := rec.waitN(t, 3)
	for _, f := range done[1:] {
		switch f.WorkerID {
		case other:
			if f.Exception != protocol.ExcCancelled {
				t.Errorf("cancelled slot: %+v", f)
			}
		case first:
			if f.Failed || f.Outcome != "ok" {
				t.Errorf("the next job on %s was hit by a stale cancel: %+v", first, f)
			}
		}
	}
}
