package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// A soft stop (QUIT) lets the running job finish and records it.
func TestStopFinishesRunningJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	running, release := make(chan struct{}), make(chan struct{})
	e.reg.Register("Slow", func(ctx context.Context, j *worker.Job) error {
		close(running)
		<-release
		return nil
	})
	e.push("q", `{"class":"Slow","args":[]}`, `{"class":"Slow","args":["second"]}`)
	w := e.start(runtime.Config{Queues: "q"})
	<-running
	// Stop is asynchronous with the job: pause first, so that the job's end
	// cannot take the next job along before the stop lands.
	w.Pause()
	stopped := make(chan struct{})
	go func() { w.Stop(); close(stopped) }()
	close(release)
	<-stopped
	k := e.client.Keys()
	if n := e.counter(k.StatProcessed()); n != 1 {
		t.Errorf("stat:processed = %d, want 1", n)
	}
	if q := e.list(k.Queue("q")); len(q) != 1 || !strings.Contains(q[0], "second") {
		t.Errorf("queue after stop = %v, want the second job untouched", q)
	}
	if m := e.members(k.Workers()); len(m) != 0 {
		t.Errorf("workers after stop = %v", m)
	}
}

// A hard stop (TERM) cancels the job; a job that returns is requeued at the
// head of its queue, and so is one that ignores the cancel past TermTimeout.
func TestShutdownRequeuesInterruptedJobs(t *testing.T) {
	t.Parallel()
	for _, obeys := range []bool{true, false} {
		t.Run(fmt.Sprintf("obeys_cancel=%v", obeys), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			running := make(chan struct{})
			block := make(chan struct{})
			defer close(block)
			e.reg.Register("Slow", func(ctx context.Context, j *worker.Job) error {
				close(running)
				if obeys {
					<-ctx.Done()
					return ctx.Err()
				}
				<-block
				return nil
			})
			job := `{"class":"Slow","args":["first"]}`
			e.push("q", job, `{"class":"Other","args":[]}`)
			w := e.start(runtime.Config{Queues: "q", TermTimeout: 100 * time.Millisecond})
			<-running
			w.Shutdown()
			k := e.client.Keys()
			q := e.list(k.Queue("q"))
			if len(q) != 2 || q[0] != job {
				t.Errorf("queue after shutdown = %v, want the interrupted job first", q)
			}
			if f := e.list(k.Failed()); len(f) != 0 {
				t.Errorf("failed = %v, want none", f)
			}
			if m := e.members(k.Workers()); len(m) != 0 {
				t.Errorf("workers after shutdown = %v", m)
			}
			if v := e.get(k.Worker(w.IDs()[0])); v != "" {
				t.Errorf("worker record left: %s", v)
			}
		})
	}
}

// With DirtyExitOnTerm the interrupted job is recorded as Resque::DirtyExit.
func TestShutdownDirtyExit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	running := make(chan struct{})
	e.reg.Register("Slow", func(ctx context.Context, j *worker.Job) error {
		close(running)
		<-ctx.Done()
		return ctx.Err()
	})
	e.push("q", `{"class":"Slow","args":[]}`)
	w := e.start(runtime.Config{Queues: "q", DirtyExitOnTerm: true})
	<-running
	w.Shutdown()
	f := e.list(e.client.Keys().Failed())
	if len(f) != 1 || decodeFailed(t, f[0]).Exception != protocol.ExcDirtyExit {
		t.Fatalf("failed = %v, want one Resque::DirtyExit", f)
	}
}

// USR1 (CancelJobs) fails the running job and the worker goes on.
func TestCancelJobsFailsRunningJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	running := make(chan struct{})
	e.reg.Register("Slow", func(ctx context.Context, j *worker.Job) error {
		close(running)
		<-ctx.Done()
		return ctx.Err()
	})
	e.reg.Register("Fast", func(ctx context.Context, j *worker.Job) error { return nil })
	var rec recorder
	e.push("q", `{"class":"Slow","args":[]}`, `{"class":"Fast","args":[]}`)
	w := e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: noRetry})
	<-running
	w.CancelJobs()
	done := rec.waitN(t, 2)
	if !done[0].Failed || done[0].Exception != protocol.ExcCancelled || done[1].Failed {
		t.Errorf("finished = %+v", done)
	}
}

// Pause (USR2) and the pause-all-workers key stop claiming; resume picks up.
func TestPause(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.reg.Register("J", func(ctx context.Context, j *worker.Job) error { return nil })
	k := e.client.Keys()
	if _, err := e.client.Do(e.ctx(), "SET", k.PauseAll(), " TRUE\n"); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	e.push("q", `{"class":"J","args":[]}`)
	w := e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: noRetry})
	// The claim script reports the pause; wait until the worker has been
	// refused at least once by checking the job is still queued after the
	// slot's first claim (dequeued counter stays 0).
	redistest.Eventually(t, 0, func() bool { return len(e.members(k.Workers())) == 1 }, "worker registered")
	if n := len(e.list(k.Queue("q"))); n != 1 {
		t.Fatalf("a job was claimed while pause-all-workers was set")
	}
	w.Pause()
	if _, err := e.client.Do(e.ctx(), "DEL", k.PauseAll()); err != nil {
		t.Fatal(err)
	}
	if len(e.list(k.Queue("q"))) != 1 {
		t.Fatal("job claimed while paused by USR2")
	}
	w.Resume()
	rec.waitN(t, 1)
}

// The exec handler: payload on stdin, env vars, exit status, stderr tail, timeout.
func TestExecHandler(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	e.reg.Register("Ok", worker.ExecHandler(fmt.Sprintf(`{ cat; echo; echo "$RESQUE_CLASS|$RESQUE_QUEUE|$RESQUE_JOB_ID|$RESQUE_ARGS"; } > %q`, out), worker.ExecOptions{Stderr: os.Stderr}))
	e.reg.Register("Fails", worker.ExecHandler(`echo first line >&2; echo "last words <1>" >&2; exit 3`, worker.ExecOptions{Stderr: &strings.Builder{}}))
	e.reg.Register("Hangs", worker.ExecHandler(`sleep 30`, worker.ExecOptions{KillGrace: 100 * time.Millisecond}))
	okJob := `{"class":"Ok","args":[1,{"k":"é"}],"id":"abc123"}`
	var rec recorder
	e.push("q", okJob, `{"class":"Fails","args":[]}`, `{"class":"Hangs","args":[]}`)
	e.start(runtime.Config{Queues: "q", JobTimeout: 500 * time.Millisecond, OnFinish: rec.add, Retry: noRetry})
	done := rec.waitN(t, 3)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := okJob + "\nOk|q|abc123|[1,{\"k\":\"é\"}]\n"; string(b) != want {
		t.Errorf("command saw:\n%s\nwant:\n%s", b, want)
	}
	if done[0].Failed {
		t.Errorf("Ok failed: %s", done[0].Error)
	}
	fails := map[string]failedEntry{}
	for _, s := range e.list(e.client.Keys().Failed()) {
		f := decodeFailed(t, s)
		fails[f.Exception+"/"+string(f.Payload)] = f
	}
	f := fails[protocol.ExcExecFailed+"/"+`{"class":"Fails","args":[]}`]
	if f.Error != "command exited with status 3: last words <1>" || strings.Join(f.Backtrace, "|") != "first line|last words <1>" {
		t.Errorf("exec failure entry = %+v", f)
	}
	h := fails[protocol.ExcTimeout+"/"+`{"class":"Hangs","args":[]}`]
	if !strings.Contains(h.Error, "timeout of 500ms") {
		t.Errorf("timeout entry = %+v (all: %v)", h, fails)
	}
}

// Redis restarted mid-run: the worker logs, retries, re-registers and runs
// jobs pushed after the restart; nothing it held is lost.
func TestSurvivesRedisRestart(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	e := newEnvURL(t, srv.URL())
	e.reg.Register("J", func(ctx context.Context, j *worker.Job) error { return nil })
	var rec recorder
	e.push("q", `{"class":"J","args":[1]}`)
	w := e.start(runtime.Config{Queues: "q", Concurrency: 2, HeartbeatInterval: 200 * time.Millisecond, OnFinish: rec.add})
	rec.waitN(t, 1)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	k := e.client.Keys()
	// The heartbeat re-asserts the registration the restart wiped.
	redistest.Eventually(t, 0, func() bool {
		v, err := e.client.Do(context.Background(), "SCARD", k.Workers())
		return err == nil && v.(int64) == 2
	}, "re-registration after restart")
	e.push("q", `{"class":"J","args":[2]}`, `{"class":"J","args":[3]}`)
	rec.waitN(t, 3)
	if n := e.counter(k.StatProcessed()); n != 2 {
		t.Errorf("stat:processed after restart = %d, want 2", n)
	}
	w.Stop()
}

// Exec commands steer their job with exit codes 75 (retry) and 76
// (discard), or a JSON reply in $RESQUE_RESULT.
func TestExecControlCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	quiet := worker.ExecOptions{Stderr: &strings.Builder{}}
	e.reg.Register("Retry", worker.ExecHandler(`echo "db locked" >&2; exit 75`, quiet))
	e.reg.Register("Drop", worker.ExecHandler(`echo "stale" >&2; exit 76`, quiet))
	e.reg.Register("Later", worker.ExecHandler(`echo '{"rescheduleDelay": 45}' > "$RESQUE_RESULT"`, quiet))
	e.reg.Register("AskRetry", worker.ExecHandler(`echo '{"retry": true, "message": "quota"}' > "$RESQUE_RESULT"; exit 0`, quiet))
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var rec recorder
	e.push("q", `{"class":"Retry","args":[]}`, `{"class":"Drop","args":[]}`, `{"class":"Later","args":[]}`, `{"class":"AskRetry","args":[]}`)
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Now: func() time.Time { return fixed },
		Retry: worker.RetryPolicy{MaxAttempts: 5}})
	done := rec.waitN(t, 4)
	got := map[string]runtime.Finished{}
	for _, f := range done[:4] {
		got[f.Class] = f
	}
	for class, want := range map[string]string{"Retry": "retry", "Drop": "discard", "Later": "reschedule", "AskRetry": "retry"} {
		if got[class].Outcome != want {
			t.Errorf("%s: outcome %q, want %q", class, got[class].Outcome, want)
		}
	}
	if got["Retry"].Error != "db locked" || got["AskRetry"].Error != "quota" {
		t.Errorf("retry messages: %q, %q", got["Retry"].Error, got["AskRetry"].Error)
	}
	if items := e.list(e.client.Keys().Delayed(fixed.Unix() + 45)); len(items) != 1 {
		t.Errorf("reschedule not in delayed:%d", fixed.Unix()+45)
	}
}

// Drain (Ruby's INTERVAL=0): the worker runs what is queued, then stops by
// itself and unregisters.
func TestDrainStopsWhenQueuesAreEmpty(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	var rec recorder
	e.reg.Register("J", func(ctx context.Context, j *worker.Job) error { return nil })
	for range 5 {
		e.push("q", `{"class":"J","args":[]}`)
	}
	w := e.start(runtime.Config{Queues: "q,other", Concurrency: 2, Drain: true, OnFinish: rec.add})
	select {
	case <-w.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the worker did not stop after draining its queues")
	}
	if n := len(rec.all()); n != 5 {
		t.Errorf("%d jobs ran, want 5", n)
	}
	if ids := e.members(k.Workers()); len(ids) != 0 {
		t.Errorf("still registered: %v", ids)
	}
}
