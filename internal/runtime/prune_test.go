package runtime_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// load writes a fixture dump into the test's namespace.
func (e *env) load(d *fixtures.Dump) {
	e.t.Helper()
	ctx := e.ctx()
	for _, k := range d.Keys {
		name := e.ns + ":" + strings.TrimPrefix(k.Key, "resque:")
		var err error
		switch k.Type {
		case "string":
			_, err = e.client.Do(ctx, "SET", name, d.String(k.Key))
		case "list":
			for _, v := range d.List(k.Key) {
				if _, err = e.client.Do(ctx, "RPUSH", name, v); err != nil {
					break
				}
			}
		case "set":
			for _, v := range d.List(k.Key) {
				if _, err = e.client.Do(ctx, "SADD", name, v); err != nil {
					break
				}
			}
		case "hash":
			for f, v := range d.Hash(k.Key) {
				if _, err = e.client.Do(ctx, "HSET", name, f, v); err != nil {
					break
				}
			}
		default:
			e.t.Fatalf("fixture key type %s not loaded", k.Type)
		}
		if err != nil {
			e.t.Fatal(err)
		}
	}
}

// The state Ruby left when a worker and its child were killed -9: a
// resque-go worker on another host prunes it by its stale heartbeat. With
// RubyPrune it writes the failed entry Ruby 3.0 wrote; by default it
// requeues the job, which then runs.
func TestPruneDeadRubyWorker(t *testing.T) {
	t.Parallel()
	before := fixtures.MustLoad("ruby-resque-3.0.0", "dead-worker-before-prune")
	after := fixtures.MustLoad("ruby-resque-3.0.0", "dirty-exit-pruned")
	deadID := before.List("resque:workers")[0]
	rubyFailed := decodeFailed(t, after.List("resque:failed")[0])

	t.Run("ruby_prune", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.load(before)
		var rec recorder
		w := e.start(runtime.Config{Queues: "other", RubyPrune: true, OnFinish: rec.add})
		k := e.client.Keys()
		redistest.Eventually(t, 0, func() bool { return len(e.list(k.Failed())) == 1 }, "prune")
		got := decodeFailed(t, e.list(k.Failed())[0])
		if got.Exception != rubyFailed.Exception || got.Error != rubyFailed.Error || got.Worker != rubyFailed.Worker ||
			got.Queue != rubyFailed.Queue || string(got.Payload) != string(rubyFailed.Payload) || len(got.Backtrace) != 0 {
			t.Errorf("failed entry\n got %+v\nRuby %+v", got, rubyFailed)
		}
		if m := e.members(k.Workers()); len(m) != 1 || m[0] != w.IDs()[0] {
			t.Errorf("workers = %v, want only ours", m)
		}
		for _, key := range []string{k.Worker(deadID), k.WorkerStarted(deadID)} {
			if v := e.get(key); v != "" {
				t.Errorf("%s left behind: %s", key, v)
			}
		}
		if n := e.counter(k.StatFailed()); n != 0 {
			t.Errorf("stat:failed = %d; Ruby does not count a DirtyExit", n)
		}
	})
	t.Run("requeue", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.load(before)
		ran := make(chan []byte, 1)
		e.reg.Register("SleepJob", func(ctx context.Context, j *worker.Job) error {
			ran <- j.Payload
			return nil
		})
		e.start(runtime.Config{Queues: "high,mail"})
		if p := <-ran; string(p) != string(rubyFailed.Payload) {
			t.Errorf("recovered payload %s, want %s", p, rubyFailed.Payload)
		}
		if f := e.list(e.client.Keys().Failed()); len(f) != 0 {
			t.Errorf("failed = %v", f)
		}
	})
}

// A worker starting on the same host recovers the job of a local worker id
// whose pid is gone at once, though its heartbeat is fresh.
func TestPruneSameHostDeadPid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	deadPID := deadPid(t)
	id := fmt.Sprintf("testhost:%d:q", deadPID)
	k := e.client.Keys()
	job := `{"class":"J","args":["recovered"]}`
	now, err := e.client.Time(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]any{
		{"SADD", k.Workers(), id},
		{"SET", k.Worker(id), string(protocol.EncodeWorkerRecord("q", now, []byte(job)))},
		{"HSET", k.Heartbeats(), id, protocol.FormatHeartbeat(now)},
	} {
		if _, err := e.client.Do(e.ctx(), cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	ran := make(chan string, 1)
	e.reg.Register("J", func(ctx context.Context, j *worker.Job) error {
		ran <- string(j.Payload)
		return nil
	})
	e.start(runtime.Config{Queues: "q"})
	if got := <-ran; got != job {
		t.Errorf("ran %s, want %s", got, job)
	}
	redistest.Eventually(t, 0, func() bool { return e.get(k.Worker(id)) == "" && len(e.members(k.Workers())) == 1 }, "dead id removed")
}

// Ids of other runtimes are never pruned before Ruby would (300 s), and ids
// with no heartbeat never; resque-go ids after 3 of their own intervals.
func TestPruneThresholds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	now, err := e.client.Time(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	type dead struct {
		id       string
		age      time.Duration
		interval string // resque-go interval record, "" for none
		pruned   bool
	}
	cases := []dead{
		{"rubyhost:11:q", 100 * time.Second, "", false},
		{"rubyhost:12:q", 400 * time.Second, "", true},
		{"gohost:13:q", 10 * time.Second, "1", true},
		{"gohost:14:q", 2 * time.Second, "5", false},
		{"nohb:15:q", -1, "", false},
	}
	for _, c := range cases {
		cmds := [][]any{{"SADD", k.Workers(), c.id}}
		if c.age >= 0 {
			cmds = append(cmds, []any{"HSET", k.Heartbeats(), c.id, protocol.FormatHeartbeat(now.Add(-c.age))})
		}
		if c.interval != "" {
			cmds = append(cmds, []any{"HSET", k.WorkerIntervals(), c.id, c.interval})
		}
		for _, cmd := range cmds {
			if _, err := e.client.Do(e.ctx(), cmd[0].(string), cmd[1:]...); err != nil {
				t.Fatal(err)
			}
		}
	}
	w := e.start(runtime.Config{Queues: "q", PruneInterval: 50 * time.Millisecond})
	want := []string{"gohost:14:q", "nohb:15:q", "rubyhost:11:q", w.IDs()[0]}
	redistest.Eventually(t, 0, func() bool { return len(e.members(k.Workers())) == len(want) }, "pruning")
	sort.Strings(want)
	if got := e.members(k.Workers()); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("workers = %v, want %v", got, want)
	}
}

// A poison job whose workers keep dying is requeued MaxRecoveries times,
// then recorded as failed.
func TestPoisonJobStopsLooping(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	job := `{"class":"Poison","args":[]}`
	e.start(runtime.Config{Queues: "elsewhere", PruneInterval: 20 * time.Millisecond, MaxRecoveries: 3})
	for round := 1; round <= 4; round++ {
		id := fmt.Sprintf("testhost:%d:q", deadPid(t))
		now, err := e.client.Time(e.ctx())
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range [][]any{
			{"SET", k.Worker(id), string(protocol.EncodeWorkerRecord("q", now, []byte(job)))},
			{"SADD", k.Workers(), id},
		} {
			if _, err := e.client.Do(e.ctx(), cmd[0].(string), cmd[1:]...); err != nil {
				t.Fatal(err)
			}
		}
		redistest.Eventually(t, 0, func() bool { return e.get(k.Worker(id)) == "" }, "recovery")
		queued, failed := len(e.list(k.Queue("q"))), len(e.list(k.Failed()))
		if round <= 3 && (queued != round || failed != 0) {
			t.Fatalf("round %d: queued=%d failed=%d, want requeued", round, queued, failed)
		}
		if round == 4 && (queued != 3 || failed != 1) {
			t.Fatalf("round 4: queued=%d failed=%d, want the job in failed", queued, failed)
		}
	}
	f := decodeFailed(t, e.list(k.Failed())[0])
	if f.Exception != protocol.ExcDirtyExit || string(f.Payload) != job {
		t.Errorf("failed entry = %+v", f)
	}
}

// deadPid returns the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	var pid int
	attr := &syscall.ProcAttr{}
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, attr)
	if err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	return pid
}
