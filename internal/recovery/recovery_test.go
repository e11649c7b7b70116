package recovery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/recovery"
	"github.com/resque-go/resque-go/internal/redistest"
)

// The heartbeat keeps every id of the process registered: it rewrites the
// heartbeats and registers again an id another runtime removed.
func TestHeartbeatKeepsIDsRegistered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	ids := []string{fmt.Sprintf("testhost:%d:1:q", os.Getpid()), fmt.Sprintf("testhost:%d:2:q", os.Getpid())}
	for _, id := range ids {
		if _, err := e.c.Register(e.ctx(), id, time.Now(), 50*time.Millisecond, true); err != nil {
			t.Fatal(err)
		}
	}
	s := e.service(recovery.Config{IDs: ids, HeartbeatInterval: 50 * time.Millisecond, PruneInterval: time.Hour})
	s.Start(context.Background())
	defer s.Stop()
	e.do([]any{"SREM", k.Workers(), ids[0]}, []any{"HDEL", k.Heartbeats(), ids[1]})
	redistest.Eventually(t, 0, func() bool {
		ws, err := e.c.Workers(e.ctx())
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(ws.IDs, ids[0]) && ws.Heartbeats[ids[0]] != "" && ws.Heartbeats[ids[1]] != ""
	}, "registered again")
}

// One pass as an observer (the pool manager): same-host ids whose pid is
// gone, or that carry our pid without being ours, are pruned at once and
// their jobs requeued; other runtimes' ids only once their heartbeat is
// older than Ruby's 300 s, resque-go ids after 3 of their intervals, ids
// without a heartbeat never.
func TestPruneAsObserver(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	now, err := e.c.Time(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	job := `{"class":"J","args":["recovered"]}`
	deadLocal := fmt.Sprintf("testhost:%d:q", deadPid(t))
	oldSelf := fmt.Sprintf("testhost:%d:q", os.Getpid())
	cases := []struct {
		id       string
		age      time.Duration // heartbeat age; negative: none
		interval string        // resque-go interval record, "" for none
		pruned   bool
	}{
		{deadLocal, 0, "", true},
		{oldSelf, 0, "", true},
		{"rubyhost:11:q", 100 * time.Second, "", false},
		{"rubyhost:12:q", 400 * time.Second, "", true},
		{"gohost:13:q", 10 * time.Second, "1", true},
		{"gohost:14:q", 2 * time.Second, "5", false},
		{"nohb:15:q", -1, "", false},
	}
	for _, c := range cases {
		e.do([]any{"SADD", k.Workers(), c.id})
		if c.age >= 0 {
			e.do([]any{"HSET", k.Heartbeats(), c.id, protocol.FormatHeartbeat(now.Add(-c.age))})
		}
		if c.interval != "" {
			e.do([]any{"HSET", k.WorkerIntervals(), c.id, c.interval})
		}
	}
	e.do([]any{"SET", k.Worker(deadLocal), string(protocol.EncodeWorkerRecord("q", now, []byte(job)))})
	if err := e.service(recovery.Config{}).Prune(e.ctx()); err != nil {
		t.Fatal(err)
	}
	workers := e.strings("SMEMBERS", k.Workers())
	for _, c := range cases {
		if slices.Contains(workers, c.id) == c.pruned {
			t.Errorf("%s: pruned=%v, want %v", c.id, !c.pruned, c.pruned)
		}
	}
	if got := e.strings("LRANGE", k.Queue("q"), 0, -1); len(got) != 1 || got[0] != job {
		t.Errorf("queue q = %q, want the dead worker's job", got)
	}
	if v := e.get(k.Worker(deadLocal)); v != "" {
		t.Errorf("the dead worker's record is left: %s", v)
	}
}

// The ids a process holds are never judged, however old their heartbeat.
func TestPruneSkipsOwnIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	now, err := e.c.Time(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	own := fmt.Sprintf("testhost:%d:q", os.Getpid())
	e.do([]any{"SADD", k.Workers(), own}, []any{"HSET", k.Heartbeats(), own, protocol.FormatHeartbeat(now.Add(-time.Hour))})
	if err := e.service(recovery.Config{IDs: []string{own}}).Prune(e.ctx()); err != nil {
		t.Fatal(err)
	}
	if got := e.strings("SMEMBERS", k.Workers()); len(got) != 1 || got[0] != own {
		t.Errorf("workers = %v, want our own id kept", got)
	}
}

// RecoverOwn puts back the job an earlier process left under the same id,
// and leaves an id that holds none alone.
func TestRecoverOwn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	now, err := e.c.Time(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	busy, idle := fmt.Sprintf("testhost:%d:1:q", os.Getpid()), fmt.Sprintf("testhost:%d:2:q", os.Getpid())
	job := `{"class":"J","args":[]}`
	for _, id := range []string{busy, idle} {
		if _, err := e.c.Register(e.ctx(), id, now, time.Second, true); err != nil {
			t.Fatal(err)
		}
	}
	e.do([]any{"SET", k.Worker(busy), string(protocol.EncodeWorkerRecord("q", now, []byte(job)))})
	s := e.service(recovery.Config{IDs: []string{busy, idle}})
	for _, id := range []string{busy, idle} {
		if err := s.RecoverOwn(e.ctx(), id); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.strings("LRANGE", k.Queue("q"), 0, -1); len(got) != 1 || got[0] != job {
		t.Errorf("queue q = %q, want the earlier process's job", got)
	}
	if got := e.strings("SMEMBERS", k.Workers()); len(got) != 1 || got[0] != idle {
		t.Errorf("workers = %v, want only the idle id", got)
	}
}

// RubyPrune, or a negative MaxRecoveries, records a dead worker's job as
// failed instead of requeueing it, with the exception Ruby names.
func TestPruneRecordsFailure(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cfg  recovery.Config
		id   string
		exc  string
	}{
		{"ruby_prune_stale", recovery.Config{RubyPrune: true}, "rubyhost:12:q", protocol.ExcPruneDirtyExit},
		{"negative_same_host", recovery.Config{MaxRecoveries: -1}, "", protocol.ExcDirtyExit},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			k := e.c.Keys()
			now, err := e.c.Time(e.ctx())
			if err != nil {
				t.Fatal(err)
			}
			id := c.id
			if id == "" {
				id = fmt.Sprintf("testhost:%d:q", deadPid(t))
			}
			job := `{"class":"J","args":[]}`
			e.do([]any{"SADD", k.Workers(), id},
				[]any{"HSET", k.Heartbeats(), id, protocol.FormatHeartbeat(now.Add(-400 * time.Second))},
				[]any{"SET", k.Worker(id), string(protocol.EncodeWorkerRecord("q", now, []byte(job)))})
			if err := e.service(c.cfg).Prune(e.ctx()); err != nil {
				t.Fatal(err)
			}
			failed := e.strings("LRANGE", k.Failed(), 0, -1)
			if len(failed) != 1 {
				t.Fatalf("failed = %q, want one entry", failed)
			}
			var f struct {
				Exception string          `json:"exception"`
				Payload   json.RawMessage `json:"payload"`
				Worker    string          `json:"worker"`
			}
			if err := json.Unmarshal([]byte(failed[0]), &f); err != nil {
				t.Fatal(err)
			}
			if f.Exception != c.exc || string(f.Payload) != job || f.Worker != id {
				t.Errorf("failed entry = %s", failed[0])
			}
			if q := e.strings("LRANGE", k.Queue("q"), 0, -1); len(q) != 0 {
				t.Errorf("queue q = %q, want nothing requeued", q)
			}
		})
	}
}

// Start and Stop are idempotent and safe together; the pruner passes while
// it runs.
func TestStartStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	own := fmt.Sprintf("testhost:%d:q", os.Getpid())
	if _, err := e.c.Register(e.ctx(), own, time.Now(), 20*time.Millisecond, true); err != nil {
		t.Fatal(err)
	}
	s := e.service(recovery.Config{IDs: []string{own}, HeartbeatInterval: 20 * time.Millisecond, PruneInterval: 20 * time.Millisecond})
	s.Stop() // before any Start
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Start(context.Background())
			if i%2 == 0 {
				s.Stop()
			}
		}()
	}
	wg.Wait()
	s.Start(context.Background())
	dead := fmt.Sprintf("testhost:%d:q", deadPid(t))
	e.do([]any{"SADD", k.Workers(), dead})
	redistest.Eventually(t, 0, func() bool { return !slices.Contains(e.strings("SMEMBERS", k.Workers()), dead) }, "a pass while running")
	s.Stop()
	s.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	s.Start(ctx)
	cancel()
	s.Stop()
}

// A same-host worker that dies while the pruner runs is pruned within a
// second or so, not at the next pass: the pruner watches the pids of the
// same-host workers its last pass saw alive (here the passes are an hour
// apart).
func TestSameHostWorkerPrunedSoonAfterItDies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	now, err := e.c.Time(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "60"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	reaped := false
	defer func() {
		if !reaped {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, 0, nil)
		}
	}()
	job := `{"class":"J","args":["soon"]}`
	live := fmt.Sprintf("testhost:%d:q", pid)
	marker := fmt.Sprintf("testhost:%d:marker", deadPid(t)) // pruned by the first pass
	for _, id := range []string{live, marker} {
		e.do([]any{"SADD", k.Workers(), id}, []any{"HSET", k.Heartbeats(), id, protocol.FormatHeartbeat(now)})
	}
	e.do([]any{"SET", k.Worker(live), string(protocol.EncodeWorkerRecord("q", now, []byte(job)))})
	s := e.service(recovery.Config{PruneInterval: time.Hour})
	s.Start(context.Background())
	t.Cleanup(s.Stop)
	redistest.Eventually(t, 0, func() bool { return !slices.Contains(e.strings("SMEMBERS", k.Workers()), marker) }, "the first pass")
	if got := e.strings("LRANGE", k.Queue("q"), 0, -1); len(got) != 0 {
		t.Fatalf("a live worker's job was recovered: %q", got)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	reaped = true
	redistest.Eventually(t, 0, func() bool {
		got := e.strings("LRANGE", k.Queue("q"), 0, -1)
		return len(got) == 1 && got[0] == job
	}, "the dead worker's job recovered")
	if slices.Contains(e.strings("SMEMBERS", k.Workers()), live) {
		t.Error("the dead worker is still registered")
	}
}
