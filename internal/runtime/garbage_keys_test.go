package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// garbageKeyRows put garbage in a newer feature's keys (a key of another
// type, a counter that is no integer, broken JSON) before a job that
// touches them runs; ok says whether that job succeeds (class Good) or
// fails (class Bad), and failed how many entries failed must hold after.
func garbageKeyRows() []struct {
	name, payload string
	bad           func(e *env, k protocol.Keys)
	ok            bool
	failed        int
} {
	return []struct {
		name, payload string
		bad           func(e *env, k protocol.Keys)
		ok            bool
		failed        int
	}{
		// before: every claim failed (XADD on a string): no job ran at all
		{"events stream a string", `{"class":"Good","args":[],"id":"j1"}`,
			func(e *env, k protocol.Keys) { e.do("SET", k.Events(), "x") }, true, 0},
	}
}

// Garbage in a newer feature's key stops neither the job that meets it
// nor the jobs after it: each ends once, in one visible place (succeeded,
// or failed with an entry that is valid JSON), and the job pushed after
// it runs.
func TestGarbageInFeatureKeys(t *testing.T) {
	t.Parallel()
	for _, r := range garbageKeyRows() {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			e := eventsEnv(t)
			k := e.client.Keys()
			e.do("SET", k.DepsOn(), "1")
			e.reg.Register("Good", func(ctx context.Context, j *worker.Job) error { return nil })
			e.reg.Register("Bad", func(ctx context.Context, j *worker.Job) error { return errors.New("bad") })
			r.bad(e, k)
			e.push("q", r.payload, `{"class":"Good","args":["after"]}`)
			var rec recorder
			e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: noRetry})
			done := rec.waitN(t, 2)
			if string(done[1].Payload) != `{"class":"Good","args":["after"]}` {
				t.Fatalf("second job finished: %s", done[1].Payload)
			}
			if done[0].Failed == r.ok {
				t.Errorf("the job meeting the garbage: failed %v (%s: %s), want failed %v", done[0].Failed, done[0].Exception, done[0].Error, !r.ok)
			}
			failed := e.list(k.Failed())
			if len(failed) != r.failed {
				t.Errorf("failed has %d entries, want %d: %q", len(failed), r.failed, failed)
			}
			for _, f := range failed {
				if !json.Valid([]byte(f)) {
					t.Errorf("failed entry is not valid JSON: %s", f)
				}
			}
			if q := e.list(k.Queue("q")); len(q) != 0 {
				t.Errorf("queue q still holds %q", q)
			}
		})
	}
}

func (e *env) do(cmd string, args ...any) {
	e.t.Helper()
	if _, err := e.client.Do(e.ctx(), cmd, args...); err != nil {
		e.t.Fatal(err)
	}
}
