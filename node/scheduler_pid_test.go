package node_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/node"
)

// In the resque-v3 namespace a scheduler keeps resque-v3's
// scheduler_pid:<host> as the v3 scheduler does: its pid while it runs
// (put back if another scheduler's clean stop removed it), a stale pid of
// a dead process replaced, and the key deleted at a clean stop. Another
// namespace gets no such key.
func TestSchedulerKeepsV3SchedulerPid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	host := fmt.Sprintf("v3host-%s", e.ns[len(e.ns)-8:]) // the v3 namespace is shared: a host of this test's own
	key := "resque-v3:scheduler_pid:" + host
	defer e.do("DEL", key)
	// a v3 scheduler that died (no such pid) left its record behind
	e.do("SET", key, "2147483646")
	start := func(ns string) *node.Scheduler {
		s, err := node.NewScheduler(node.SchedulerConfig{Redis: node.Redis{URL: os.Getenv(redisEnv), Namespace: ns},
			Hostname: host, NoPlans: true, NoSchedules: true}, node.WithLogger(zerolog.New(e.log)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	pid := fmt.Sprint(os.Getpid())
	s := start("resque-v3")
	if !s.KeepsSchedulerPid() {
		t.Fatal("KeepsSchedulerPid is false in resque-v3")
	}
	if got := e.str("GET", key); got != pid {
		t.Fatalf("scheduler_pid:%s = %q, want %s", host, got, pid)
	}
	e.do("DEL", key) // another scheduler's clean stop
	redistest.Eventually(t, 0, func() bool { return e.str("GET", key) == pid }, "scheduler_pid written again")
	s.Stop()
	if n := e.do("EXISTS", key).(int64); n != 0 {
		t.Error("scheduler_pid outlived a clean stop")
	}

	other := start(e.ns)
	if other.KeepsSchedulerPid() {
		t.Error("KeepsSchedulerPid outside resque-v3")
	}
	other.Stop()
	if n := e.do("EXISTS", e.ns+":scheduler_pid:"+host, key).(int64); n != 0 {
		t.Error("a scheduler_pid key written outside resque-v3")
	}
}

func (e *env) str(cmd string, args ...any) string {
	v, _ := e.do(cmd, args...).([]byte)
	return string(v)
}
